package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/internal/fixture"
)

func date(s string) reconcile.Date { return fixture.Date(s) }

// sample is a report with a gap of each kind, an unverifiable day and a
// provisional one, over a DST day (see fixture.Sample).
func sample(t *testing.T) Report {
	t.Helper()
	res, w, m := fixture.Sample(t)
	return New(res, w, Meta{RunKey: RunKey(m.WorkspaceID, w, m.Store), WorkspaceID: m.WorkspaceID, StoreID: StoreID(m.Store),
		GeneratedAt: m.GeneratedAt, Requests: m.Requests, Drilldown: Drilldown{Mode: m.DrillMode, Requests: m.DrillRequests}})
}

// The fields docs/contract.md lists are all there, under their names, and a count
// that is not known is null rather than 0.
func TestJSONSchema(t *testing.T) {
	b, err := JSON(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "run_key", "workspace_id", "window", "generated_at", "status", "totals", "days", "links", "countries", "findings"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("report.json lacks %q", k)
		}
	}
	if doc["schema_version"] != float64(1) {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
	if doc["generated_at"] != "2026-10-28T23:30:12Z" {
		t.Errorf("generated_at = %v, want whole seconds in UTC", doc["generated_at"])
	}
	for _, k := range []string{"from", "to", "tz"} {
		if _, ok := doc["window"].(map[string]any)[k]; !ok {
			t.Errorf("window lacks %q", k)
		}
	}
	for _, k := range []string{"api", "local", "delta", "api_summary"} {
		if _, ok := doc["totals"].(map[string]any)[k]; !ok {
			t.Errorf("totals lacks %q", k)
		}
	}
	days := doc["days"].([]any)
	for _, k := range []string{"date", "hours", "api", "local", "delta", "status", "severity"} {
		if _, ok := days[0].(map[string]any)[k]; !ok {
			t.Errorf("days[0] lacks %q", k)
		}
	}
	unverifiable := days[3].(map[string]any)
	if unverifiable["status"] != "unverifiable" || unverifiable["api"] != nil || unverifiable["delta"] != nil {
		t.Errorf("unverifiable day = %v, want null api and delta", unverifiable)
	}
	if days[1].(map[string]any)["hours"] != float64(25) {
		t.Errorf("the DST day has %v hours", days[1].(map[string]any)["hours"])
	}
}

func TestStatus(t *testing.T) {
	r := sample(t)
	if r.Status != StatusDiscrepancies {
		t.Errorf("status %q, want discrepancies", r.Status)
	}
	loc := time.UTC
	w := reconcile.Window{From: date("2026-10-24"), To: date("2026-10-24"), Loc: loc}
	in := reconcile.Input{Window: w, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, loc),
		API:   map[reconcile.Date]reconcile.Reading{date("2026-10-24"): reconcile.Known(5)},
		Local: map[reconcile.Date]reconcile.Reading{date("2026-10-24"): reconcile.Known(5)}}
	if got := New(reconcile.Compare(in), w, Meta{}).Status; got != StatusOK {
		t.Errorf("all match: status %q", got)
	}
	if got := New(reconcile.Compare(in), w, Meta{Interrupted: "SIGTERM"}).Status; got != StatusIncomplete {
		t.Errorf("interrupted: status %q", got)
	}
	in.API = nil
	if got := New(reconcile.Compare(in), w, Meta{}).Status; got != StatusIncomplete {
		t.Errorf("unverifiable: status %q", got)
	}
}

func TestCSV(t *testing.T) {
	r := sample(t)
	r.Links = append(r.Links, Link{Date: "2026-10-25", LinkID: "=HYPERLINK(\"x\")", API: 500, Local: 88, Delta: -412, Status: "missing"})
	r.Countries = append(r.Countries, Country{Date: "2026-10-26", API: 3})
	read := func(render func(Report) ([]byte, error)) [][]string {
		t.Helper()
		b, err := render(r)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	want := [][]string{
		{"date", "hours", "api", "local", "delta", "status", "severity", "reason"},
		{"2026-10-24", "24", "1710", "1709", "-1", "match", "ok", ""},
		{"2026-10-25", "25", "12345", "11933", "-412", "missing", "fail", ""},
		{"2026-10-26", "24", "900", "907", "7", "surplus", "warn", ""},
		{"2026-10-27", "24", "", "800", "", "unverifiable", "", "GET timeseries: 503 Service Unavailable after 5 attempts (request req_42)"},
		{"2026-10-28", "24", "40", "12", "-28", "provisional", "ok", "the day ended less than 2h0m0s ago"},
	}
	got := read(daysCSV)
	if diff := cmp.Diff(want[:4], got[:4]); diff != "" {
		t.Errorf("days.csv (-want +got):\n%s", diff)
	}
	if len(got) != 6 || got[4][6] != "" || got[4][7] == "" {
		t.Errorf("days.csv: the unverifiable day %q has a severity or no reason", got[4])
	}
	wantLinks := [][]string{
		{"date", "link_id", "api", "local", "delta", "status", "severity"},
		{"2026-10-25", "lnk_spring_sale", "9000", "8602", "-398", "missing", "fail"},
		{"2026-10-25", "lnk_only_elido", "12", "0", "-12", "missing", "fail"},
		{"2026-10-25", "lnk_docs", "3000", "2998", "-2", "missing", "fail"},
		{"2026-10-26", "lnk_only_store", "0", "7", "7", "surplus", "warn"},
		{"2026-10-25", "'=HYPERLINK(\"x\")", "500", "88", "-412", "missing", "fail"},
	}
	if diff := cmp.Diff(wantLinks, read(linksCSV)); diff != "" {
		t.Errorf("links.csv (-want +got):\n%s", diff)
	}
	countries := read(countriesCSV)
	if last := countries[len(countries)-1]; last[1] != "" {
		t.Errorf("countries.csv: an unknown country is %q, want an empty cell", last[1])
	}
	hours := read(hoursCSV)
	if diff := cmp.Diff([]string{"date", "start", "api", "local", "delta", "severity"}, hours[0]); diff != "" {
		t.Errorf("hours.csv header (-want +got):\n%s", diff)
	}
}

// A spreadsheet can sum each CSV: days.csv's deltas sum to the report's
// totals, and each drilled-into day's links, countries and hours sum to
// that day's delta in days.csv.
func TestCSVDeltasSum(t *testing.T) {
	r := sample(t)
	sums := func(render func(Report) ([]byte, error)) (map[string]int64, int64) {
		t.Helper()
		b, err := render(r)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(rows[0], "delta")
		byDate, total := map[string]int64{}, int64(0)
		for _, row := range rows[1:] {
			if row[col] == "" {
				continue
			}
			n, err := strconv.ParseInt(row[col], 10, 64)
			if err != nil {
				t.Fatalf("delta %q: %v", row[col], err)
			}
			byDate[row[0]] += n
			total += n
		}
		return byDate, total
	}
	days, total := sums(daysCSV)
	if total != r.Totals.Delta {
		t.Errorf("days.csv deltas sum to %d, the report's totals say %d", total, r.Totals.Delta)
	}
	for name, render := range map[string]func(Report) ([]byte, error){"links": linksCSV, "countries": countriesCSV, "hours": hoursCSV} {
		byDate, _ := sums(render)
		if len(byDate) == 0 {
			t.Errorf("%s.csv has no rows", name)
		}
		for date, sum := range byDate {
			if sum != days[date] {
				t.Errorf("%s.csv: %s sums to %d, days.csv says %d", name, date, sum, days[date])
			}
		}
	}
}

func TestRunKey(t *testing.T) {
	warsaw, _ := time.LoadLocation("Europe/Warsaw")
	w := reconcile.Window{From: date("2026-11-26"), To: date("2026-11-28"), Loc: warsaw}
	k := RunKey("48213", w, "store")
	if k != RunKey("48213", w, "store") {
		t.Error("the same run gives two keys")
	}
	if !strings.HasPrefix(k, "20261126_20261128_") {
		t.Errorf("key %q does not start with the window", k)
	}
	others := []string{
		RunKey("48214", w, "store"),
		RunKey("48213", reconcile.Window{From: w.From, To: w.To, Loc: time.UTC}, "store"),
		RunKey("48213", reconcile.Window{From: w.From, To: w.To.AddDays(-1), Loc: warsaw}, "store"),
		RunKey("48213", w, "other store"),
	}
	for _, o := range others {
		if o == k {
			t.Errorf("a different run has the same key %q", k)
		}
	}
}

// report.html is well-formed (it parses as XML, strictly), needs nothing
// from outside, and its chart has one group per day with the gaps marked.
func TestHTMLParsesAndHoldsTheChart(t *testing.T) {
	r := sample(t)
	b, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var days, marks, svgs int
	inChart := false
	status := map[string]string{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		if el.Name.Local == "svg" && attr["id"] != "" {
			inChart = attr["id"] == "chart"
		}
		switch {
		case el.Name.Local == "svg" && attr["id"] == "chart":
			svgs++
		case el.Name.Local == "g" && attr["class"] == "day":
			days++
			status[attr["data-date"]] = attr["data-status"]
		case el.Name.Local == "rect" && inChart && strings.HasPrefix(attr["class"], "mark-"):
			marks++
		case el.Name.Local == "script", el.Name.Local == "link":
			t.Errorf("report.html has a <%s>: it must be self-contained", el.Name.Local)
		}
		for _, k := range []string{"src", "href"} {
			if v := attr[k]; v != "" {
				t.Errorf("<%s %s=%q>: report.html must not load anything", el.Name.Local, k, v)
			}
		}
	}
	if svgs != 1 || days != len(r.Days) {
		t.Errorf("%d svg#chart, %d day groups; want 1 and %d", svgs, days, len(r.Days))
	}
	want := map[string]string{"2026-10-24": "match", "2026-10-25": "missing", "2026-10-26": "surplus", "2026-10-27": "unverifiable", "2026-10-28": "provisional"}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("chart days (-want +got):\n%s", diff)
	}
	if marks != 4 {
		t.Errorf("%d gap marks, want 4 (missing, surplus, unverifiable, provisional)", marks)
	}
}

// The four files say the same thing: every day and link row of the JSON
// is in the CSV, and every gap day and worst link in the Markdown.
func TestReportsAgree(t *testing.T) {
	r := sample(t)
	csvBytes, _ := daysCSV(r)
	linksBytes, _ := linksCSV(r)
	md, _ := Markdown(r)
	escaped, _ := HTML(r)
	page := []byte(html.UnescapeString(string(escaped))) // html/template writes + as &#43;
	rows, err := csv.NewReader(bytes.NewReader(csvBytes)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(r.Days) {
		t.Errorf("days.csv has %d rows, want %d", len(rows), 1+len(r.Days))
	}
	if n := bytes.Count(linksBytes, []byte("\n")); n != 1+len(r.Links) {
		t.Errorf("links.csv has %d lines, want %d", n, 1+len(r.Links))
	}
	for _, l := range r.Links {
		for name, doc := range map[string][]byte{"md": md, "html": page} {
			if !bytes.Contains(doc, []byte(l.LinkID)) || !bytes.Contains(doc, []byte(words.Signed(l.Delta))) {
				t.Errorf("report.%s lacks link %s with delta %s", name, l.LinkID, words.Signed(l.Delta))
			}
		}
	}
	for _, d := range r.Days {
		for name, doc := range map[string][]byte{"md": md, "html": page} {
			if !bytes.Contains(doc, []byte(d.Date)) || !bytes.Contains(doc, []byte(words.OptSigned(d.Delta))) {
				t.Errorf("report.%s lacks day %s with delta %s", name, d.Date, words.OptSigned(d.Delta))
			}
		}
	}
}

// An unverifiable day's severity is unknown: null in report.json, and read
// back as the OK that Compare gives such a day, so merge sees the same day.
func TestUnverifiableSeverityIsNullInJSON(t *testing.T) {
	t.Parallel()
	days := []Day{
		{Date: "2026-11-26", Status: "unverifiable", Severity: "ok", Settled: true, Reason: `Elido: "severity":"ok"`},
		{Date: "2026-11-27", Status: "match", Severity: "ok", Settled: true},
	}
	b, err := json.Marshal(days)
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if v, ok := raw[0]["severity"]; !ok || v != nil {
		t.Errorf("unverifiable day's severity = %v (present %v), want null", v, ok)
	}
	if raw[0]["reason"] != `Elido: "severity":"ok"` {
		t.Errorf("reason changed: %v", raw[0]["reason"])
	}
	if raw[1]["severity"] != "ok" {
		t.Errorf("matching day's severity = %v, want ok", raw[1]["severity"])
	}
	var back []Day
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(days, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
