package job

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

func n(v int64) *int64 { return &v }

// longWindow is a report of days days: one gap, two unverifiable days with
// one reason, the rest matching.
func longWindow(days int) report.Report {
	r := report.Report{WorkspaceID: "48213", Window: report.Window{From: "2025-11-01", To: "2026-10-31", TZ: "UTC"}, Status: report.StatusDiscrepancies}
	for i := range days {
		d := report.Day{Date: fmt.Sprintf("day-%03d", i), Hours: 24, API: n(500), Local: n(500), Delta: n(0), Status: "match", Severity: "ok", Settled: true}
		switch i {
		case 100:
			d.Local, d.Delta, d.Status, d.Severity = n(440), n(-60), "missing", "fail"
		case 3, 4:
			d.API, d.Delta, d.Status, d.Reason = nil, nil, "unverifiable", "outside Elido's retention"
		}
		r.Days = append(r.Days, d)
	}
	for _, d := range r.Days {
		switch d.Status {
		case "match":
			r.Coverage.Match++
		case "missing":
			r.Coverage.Missing++
		case "unverifiable":
			r.Coverage.Unverifiable++
		}
	}
	r.Coverage.Days = days
	return r
}

// Past a screenful, stdout lists the days that need a look and counts the
// rest in one line; a short window lists every day.
func TestSummaryFoldsMatchingDaysOfALongWindow(t *testing.T) {
	var b bytes.Buffer
	if err := printSummary(&b, "text", longWindow(365), "reports/x"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if got := strings.Count(out, "day-"); got > 8 {
		t.Errorf("a 365-day summary names %d days, want the gap and the unverifiable days only:\n%s", got, out)
	}
	for _, want := range []string{"(UTC): gaps\n", "day-100", "-60", "and 362 more days match within tolerance", "day-003..day-004 unverifiable (2 days): outside Elido's retention", "totals over 363 verified days"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unverifiable   ok") || strings.Contains(out, "unverifiable  ok") {
		t.Errorf("an unverifiable day is graded ok:\n%s", out)
	}
	b.Reset()
	if err := printSummary(&b, "text", longWindow(6), "reports/x"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "day-00"); got < 6 {
		t.Errorf("a 6-day summary names %d day rows, want all 6:\n%s", got, b.String())
	}
}

// A run that read nothing shows - for its totals, not zeros.
func TestSummaryOfARunThatReadNothing(t *testing.T) {
	r := report.Report{Window: report.Window{From: "2026-11-29", To: "2026-11-29", TZ: "UTC"}, Status: report.StatusIncomplete,
		Days:     []report.Day{{Date: "2026-11-29", Hours: 24, Status: "unverifiable", Severity: "ok", Reason: "GET timeseries: 503"}},
		Coverage: report.Coverage{Days: 1, Unverifiable: 1}}
	var b bytes.Buffer
	if err := printSummary(&b, "text", r, "reports/x"); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "elido -, local -") || strings.Contains(out, "elido 0") {
		t.Errorf("summary of a run that read nothing:\n%s", out)
	}
}

// Totals the report says are unknown print as -, whatever the coverage
// counts (a report merged from shards, say).
func TestSummaryUnknownTotalsWin(t *testing.T) {
	r := longWindow(3)
	r.Totals = report.Totals{Unknown: true}
	var b bytes.Buffer
	if err := printSummary(&b, "text", r, "reports/x"); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "elido -, local -") || strings.Contains(out, "elido 0") {
		t.Errorf("summary with unknown totals:\n%s", out)
	}
}

// A year no day of which could be read is a short summary: consecutive
// days with the same status and reason are one row with their range and
// count, and the reason is said once. Gaps keep a row each.
func TestSummaryCollapsesRunsOfDays(t *testing.T) {
	r := report.Report{WorkspaceID: "48213", Window: report.Window{From: "2025-10-27", To: "2026-10-26", TZ: "UTC"}, Status: report.StatusIncomplete,
		Totals: report.Totals{Unknown: true}}
	start := time.Date(2025, 10, 27, 0, 0, 0, 0, time.UTC)
	for i := range 365 {
		d := report.Day{Date: start.AddDate(0, 0, i).Format(time.DateOnly), Hours: 24, Local: n(10), Status: "unverifiable", Severity: "ok", Settled: true,
			Reason: "older than Elido keeps (ELIDO_RETENTION_DAYS)"}
		if i >= 300 {
			d.Reason = "Elido: 503 after 5 attempts"
		}
		if i == 330 || i == 331 {
			d.API, d.Delta, d.Status, d.Severity, d.Reason = n(12), n(-2), "missing", "warn", ""
		}
		r.Days = append(r.Days, d)
		r.Coverage.Days++
	}
	var b bytes.Buffer
	if err := printSummary(&b, "text", r, "reports/x"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n > 20 {
		t.Errorf("a year of unverifiable days takes %d lines:\n%s", n, out)
	}
	for _, want := range []string{
		"2025-10-27..2026-08-22 (300 days)   7200      -   3000      -   unverifiable          -\n",
		"2026-08-23..2026-09-21 (30 days)    720      -    300      -   unverifiable          -\n",
		"2026-09-22     24     12     10     -2        missing       warn\n",
		"2026-09-23     24     12     10     -2        missing       warn\n",
		"2026-09-24..2026-10-26 (33 days)    792      -    330      -   unverifiable          -\n",
		"2025-10-27..2026-08-22 unverifiable (300 days): older than Elido keeps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// The summary ends with the report.html to open, not its folder.
func TestSummaryEndsWithTheHTMLReport(t *testing.T) {
	for _, tt := range []struct{ dir, want string }{
		{"reports/20261023_20261026_a6c8dd124e7a", "report: reports/20261023_20261026_a6c8dd124e7a/report.html\n"},
		{"s3://bucket/recon/20261023_20261026_a6c8dd124e7a", "report: s3://bucket/recon/20261023_20261026_a6c8dd124e7a/report.html\n"},
	} {
		var b bytes.Buffer
		if err := printSummary(&b, "text", longWindow(3), tt.dir); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(b.String(), tt.want) {
			t.Errorf("summary ends %q, want %q", b.String()[max(0, b.Len()-80):], tt.want)
		}
	}
}

// "the largest first" holds across days: past the screenful the links cut
// are the smallest, not the latest days'.
func TestSummaryListsTheLargestLinksFirst(t *testing.T) {
	r := longWindow(3)
	for i := range 12 {
		r.Links = append(r.Links, report.Link{Date: "day-000", LinkID: fmt.Sprintf("lnk_small_%02d", i), API: 10, Local: 9, Delta: -1, Status: "missing"})
	}
	r.Links = append(r.Links, report.Link{Date: "day-001", LinkID: "lnk_big", API: 100, Local: 40, Delta: -60, Status: "missing"})
	var b bytes.Buffer
	if err := printSummary(&b, "text", r, "reports/x"); err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(b.String(), "the largest first):\n")
	if !strings.HasPrefix(list, "  day-001  lnk_big ") {
		t.Errorf("the links listed do not start with the largest:\n%s", list)
	}
}
