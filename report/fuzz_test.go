package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// fuzzReport is a small report holding hostile text where a store or Elido
// could put it: a link id, a reason, a finding.
func fuzzReport(id, text string, api, local int64) Report {
	delta := local - api
	return Report{
		SchemaVersion: SchemaVersion, RunKey: "20261025_20261026_0123456789ab", WorkspaceID: "48213",
		Window:      Window{From: "2026-10-25", To: "2026-10-26", TZ: "Europe/Warsaw"},
		GeneratedAt: time.Date(2026, 10, 27, 3, 0, 0, 0, time.UTC), Status: StatusDiscrepancies,
		Days: []Day{
			{Date: "2026-10-25", Hours: 25, API: &api, Local: &local, Delta: &delta, Status: "missing", Severity: "fail", Settled: true},
			{Date: "2026-10-26", Hours: 24, Local: &local, Status: "unverifiable", Severity: "ok", Settled: true, Reason: text},
		},
		Links: []Link{
			{Date: "2026-10-25", LinkID: id, API: api, Local: local, Delta: delta, Status: "missing"},
			{Date: "2026-10-25", LinkID: text, API: 9, Local: 1, Delta: -8, Status: "missing"},
		},
		Findings: []Finding{{Kind: "note", Message: text}},
	}
}

func addSeeds(f *testing.F) {
	for _, id := range hostileIDs {
		f.Add(id, "Elido: 503\r\n<html>"+id, int64(500), int64(88))
	}
	f.Add("lnk_ok", "", int64(9223372036854775807), int64(-9223372036854775808))
}

// FuzzCSV: each CSV reads back with one record per row of its table, as
// many fields as its header, and no text cell a spreadsheet would run as a
// formula.
func FuzzCSV(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, id, text string, api, local int64) {
		r := fuzzReport(id, text, api, local)
		r.Days[0].Date, r.Links[0].Status, r.Days[0].Reason = text, reconcile.Status(id), text
		for _, tt := range []struct {
			render func(Report) ([]byte, error)
			n      int
		}{{daysCSV, len(r.Days)}, {linksCSV, len(r.Links)}, {countriesCSV, len(r.Countries)}} {
			b, err := tt.render(r)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatalf("CSV does not read back: %v\n%q", err, b)
			}
			if len(rows) != 1+tt.n {
				t.Fatalf("%d records, want %d", len(rows), 1+tt.n)
			}
			for _, row := range rows[1:] {
				for i, cell := range row {
					switch rows[0][i] {
					case "hours", "api", "local", "delta":
						continue
					}
					if formulaStart(cell) {
						t.Errorf("cell %q starts a formula", cell)
					}
				}
			}
		}
	})
}

// FuzzMarkdown: every link row of report.md stays one line with six
// cells, its id inside one code span, and no text makes a heading.
func FuzzMarkdown(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, id, text string, api, local int64) {
		r := fuzzReport(id, text, api, local)
		b, err := Markdown(r)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		if strings.Contains(md, "\r") {
			t.Fatalf("report.md holds a raw CR")
		}
		rows := 0
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "# Click reconciliation") &&
				!strings.Contains("## Gaps|## Days|## Links that differ most|## Findings|## Why days could not be verified|## Provisional days", line) {
				t.Errorf("text became a heading: %q", line)
			}
			if !strings.HasPrefix(line, "| 2026-10-25 | `") {
				continue
			}
			rows++
			if n := mdCells(line); n != 6 {
				t.Errorf("row %q has %d cells, want 6", line, n)
			}
			if n := strings.Count(line, "`"); n != 2 {
				t.Errorf("row %q has %d backticks, want 2", line, n)
			}
		}
		if rows != len(r.Links) {
			t.Errorf("%d link rows, want %d", rows, len(r.Links))
		}
	})
}

// FuzzHTML: report.html renders in bounded time for any counts, parses as
// XML, and holds no tag from the data.
func FuzzHTML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, id, text string, api, local int64) {
		r := fuzzReport(id, text, api, local)
		r.WorkspaceID = id
		page := renderWithin(t, r, 10*time.Second)
		dec := xml.NewDecoder(bytes.NewReader(page))
		dec.Strict = true
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("report.html does not parse: %v", err)
			}
			if el, ok := tok.(xml.StartElement); ok {
				switch el.Name.Local {
				case "script", "img", "iframe", "a", "link", "object", "embed":
					t.Fatalf("report.html holds a <%s>", el.Name.Local)
				}
				for _, a := range el.Attr {
					if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
						t.Fatalf("<%s> has an event handler %s", el.Name.Local, a.Name.Local)
					}
				}
			}
		}
		if bytes.Contains(bytes.ToLower(page), []byte("<script")) {
			t.Fatal("report.html holds an unescaped <script")
		}
	})
}
