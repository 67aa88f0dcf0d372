package report

import (
	"bytes"
	"encoding/csv"
	"html"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report/internal/fixture"
)

// hostileIDs are link ids a store or Elido may hand over: formulas,
// control characters, Markdown and HTML syntax, Slack mentions.
var hostileIDs = []string{
	"=HYPERLINK(\"http://evil\",\"x\")",
	"+1+1",
	"-2+3",
	"@SUM(A1)",
	"\t=cmd|' /C calc'!A0",
	"\r=cmd",
	"\n=cmd",
	"a\rb",
	"a\r\nb",
	"a\nb|c",
	"a|b||c",
	`a\|b`,
	"`code` ``` x",
	"<script>alert(1)</script>",
	"</code></td></tr><script>x</script>",
	"<!channel> <@U123> <http://evil|x>",
	"\x00\x01\x0b\x1f\x7f",
	"\xff\xfe invalid utf-8",
	"\ufffe\uffff",
	"",
}

// formulaStart reports whether a spreadsheet would read the cell as a
// formula (OWASP's list).
func formulaStart(cell string) bool {
	return cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0]))
}

func hostileReport(t *testing.T, ids ...string) Report {
	r := sample(t)
	for i, id := range ids {
		r.Links = append(r.Links, Link{Date: "2026-10-25", LinkID: id, API: 500, Local: int64(400 - i), Delta: int64(-100 - i), Status: "missing"})
	}
	return r
}

// No text cell of report.csv starts with a formula character; numeric
// columns keep their sign.
func TestCSVNeutralisesFormulas(t *testing.T) {
	tests := []struct {
		id, want string
	}{
		{"=1+1", "'=1+1"},
		{"+1", "'+1"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=cmd", "'\t=cmd"},
		{"\r=cmd", "'\r=cmd"},
		{"lnk_ok", "lnk_ok"},
		{"a=b", "a=b"},
	}
	for _, tt := range tests {
		t.Run(strings.ToValidUTF8(strings.NewReplacer("\t", "TAB", "\r", "CR").Replace(tt.id), "?"), func(t *testing.T) {
			r := Report{Links: []Link{{Date: "2026-10-25", LinkID: tt.id, API: 5, Local: 1, Delta: -4, Status: "missing"}}}
			b, err := linksCSV(r)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := [][]string{
				{"date", "link_id", "api", "local", "delta", "status", "severity"},
				{"2026-10-25", tt.want, "5", "1", "-4", "missing", ""},
			}
			if diff := cmp.Diff(want, rows); diff != "" {
				t.Errorf("report.csv (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("text_fields", func(t *testing.T) {
		r := Report{
			Days:      []Day{{Date: "=1", Status: "@x", Severity: "+s", Reason: "-r", HoursWithGap: []Hour{{Start: "=h", Delta: -2}}}},
			Links:     []Link{{Date: "+1", LinkID: "x", Status: "-x", Delta: -3}},
			Countries: []Country{{Date: "@d", CountryCode: "=C", API: -1}},
		}
		for name, render := range map[string]func(Report) ([]byte, error){"days": daysCSV, "links": linksCSV, "countries": countriesCSV, "hours": hoursCSV} {
			b, err := render(r)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 {
				t.Fatalf("%s.csv: %d rows, want 2", name, len(rows))
			}
			for i, cell := range rows[1] {
				switch rows[0][i] {
				case "hours", "api", "local", "delta": // numbers
					if strings.HasPrefix(cell, "'") {
						t.Errorf("%s.csv: number cell %q was quoted", name, cell)
					}
					continue
				}
				if formulaStart(cell) {
					t.Errorf("%s.csv: cell %q of row %q starts a formula", name, cell, rows[1])
				}
			}
		}
	})
}

// mdCells counts the cells of a GFM table row: pipes split it unless
// escaped by a backslash (which escapes whatever follows it).
func mdCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}

// Every table row of report.md stays one line with its columns, and every
// link id stays inside its code span, whatever the id.
func TestMarkdownTableRowsStayRows(t *testing.T) {
	r := hostileReport(t, hostileIDs...)
	r.Findings = append(r.Findings, Finding{Kind: "note", Message: "line one\r\n## not a heading\rnor\nthis"})
	r.Days[3].Reason = "Elido: 503\r\n# body\n| x |"
	b, err := Markdown(r)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if strings.Contains(md, "\r") {
		t.Errorf("report.md holds a raw CR")
	}
	var linkRows int
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "# Click") && !strings.HasPrefix(line, "## ") {
			t.Errorf("a line became a heading: %q", line)
		}
		if strings.HasPrefix(line, "## ") && !strings.Contains("## Gaps## Days## Links that differ most## Findings## Why days could not be verified## Provisional days", line) {
			t.Errorf("a line became a heading: %q", line)
		}
		if !strings.HasPrefix(line, "| 2026-10-25 | `") {
			continue
		}
		linkRows++
		if got := mdCells(line); got != 6 {
			t.Errorf("row %q has %d cells, want 6", line, got)
		}
		if strings.Count(line, "`") != 2 {
			t.Errorf("row %q: the link id leaves its code span", line)
		}
	}
	if linkRows != min(len(r.Links), maxMarkdownLinks) {
		t.Errorf("%d link rows, want %d", linkRows, min(len(r.Links), maxMarkdownLinks))
	}
}

// report.html escapes every hostile id and stays well-formed.
func TestHTMLHostileIDs(t *testing.T) {
	r := hostileReport(t, hostileIDs...)
	r.WorkspaceID = "<script>ws</script>"
	r.Findings = append(r.Findings, Finding{Kind: "<b>", Message: "<script>alert(1)</script>\x01"})
	r.Days[3].Reason = "\x02<img src=x onerror=alert(1)>"
	page := renderWithin(t, r, 10e9)
	fixture.CheckWellFormed(t, page)
	if bytes.Contains(bytes.ToLower(page), []byte("<script")) || bytes.Contains(page, []byte("<img")) {
		t.Error("report.html holds an unescaped tag from the data")
	}
	text := html.UnescapeString(string(page))
	for _, id := range []string{"<script>alert(1)</script>", "a|b||c", "`code` ``` x"} {
		if !strings.Contains(text, id) {
			t.Errorf("report.html lacks link %q", id)
		}
	}
}
