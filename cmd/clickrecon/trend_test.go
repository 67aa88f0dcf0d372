package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history/historytest"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// The demo's reports, read back by trend: the day the demo repaired
// counts once, by its verdict after the repair; the day of duplicates is
// a surplus explained by them; the days no run checked are said.
func TestTrendOfTheDemo(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	at := deps{now: func() time.Time { return testNow }}
	if code := runWith(context.Background(), []string{"demo", "--report-dir", dir}, envconfig.MapLookuper(nil), &stdout, &stderr, at); code != exitOK {
		t.Fatalf("demo: exit %d\n%s", code, stderr.String())
	}
	trendOf := func(args ...string) (string, int) {
		stdout.Reset()
		stderr.Reset()
		args = append([]string{"trend", "--report-dir", dir, "--tz", "Europe/Warsaw", "--from", "2026-10-21", "--to", "2026-10-27"}, args...)
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr, at)
		return stdout.String(), code
	}
	out, code := trendOf("--format", "json")
	if code != exitOK {
		t.Fatalf("trend: exit %d\n%s", code, stderr.String())
	}
	var doc struct{ Series []trend.Series }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("trend --format json: %v\n%s", err, out)
	}
	if len(doc.Series) != 1 {
		t.Fatalf("%d series, want the demo's one:\n%s", len(doc.Series), out)
	}
	s := doc.Series[0]
	byDate := map[string]trend.Day{}
	for _, d := range s.Days {
		byDate[d.Date] = d
	}
	if d := byDate["2026-10-24"]; d.Status != reconcile.Match || d.Missing != 0 {
		t.Errorf("2026-10-24, repaired: %s missing %d, want match", d.Status, d.Missing)
	}
	if d := byDate["2026-10-25"]; d.Status != reconcile.Surplus || d.Surplus != 12 || d.Loss[reconcile.DiagDuplicates] != 12 {
		t.Errorf("2026-10-25: %s surplus %d loss %v, want 12 clicks of duplicates", d.Status, d.Surplus, d.Loss)
	}
	if d := byDate["2026-10-21"]; d.Checked {
		t.Errorf("2026-10-21 is before the demo's window, yet checked: %+v", d)
	}
	if s.Total.Unchecked != 3 || s.Total.Days != 7 {
		t.Errorf("total: %d days, %d unchecked; want 7 and 3", s.Total.Days, s.Total.Unchecked)
	}

	text, code := trendOf()
	if code != exitOK || !strings.Contains(text, "2026-10-25 surplus 12 clicks") || !strings.Contains(text, "duplicates") {
		t.Errorf("trend (text): exit %d\n%s", code, text)
	}
	rows, code := trendOf("--format", "csv", "--by", "day")
	recs, err := csv.NewReader(strings.NewReader(rows)).ReadAll()
	if code != exitOK || err != nil || len(recs) != 8 {
		t.Errorf("trend --format csv --by day: exit %d, %v, %d rows, want a header and 7 days\n%s", code, err, len(recs), rows)
	}
}

// A bad flag of trend exits 2 before reading anything, and names what to
// fix.
func TestTrendRefusesBadFlags(t *testing.T) {
	missing := t.TempDir() + "/none"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "year"}, "--by must be day, week or month"},
		{[]string{"--format", "xml"}, "must be text, json or csv"},
		{[]string{"--nights", "0"}, "nights must be a whole number from 1 to 3660"},
		{[]string{"--from", "2026-10-05", "--to", "2026-10-01"}, "to 2026-10-01 is before from 2026-10-05"},
		{[]string{"--to", "2026-13-01"}, "the range (--from, --to, --nights): to:"},
		{[]string{"--tz", "Mars/Olympus"}, "not an IANA time zone"},
		{[]string{"--report-dir", missing}, "is not a folder"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"trend", "--report-dir", t.TempDir()}, tt.args...)
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: func() time.Time { return testNow }})
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// With HISTORY_DSN, trend reads the recorded runs: the same nights as
// their reports say, also once the reports were pruned; a history not
// migrated exits 2 naming clickrecon migrate.
func TestTrendFromTheHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rawDSN := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	h := historytest.Open(t, rawDSN)
	day := func(date string, api, local int64, s reconcile.Status) report.Day {
		return report.Day{Date: date, Hours: 24, API: &api, Local: &local, Status: s, Settled: true}
	}
	loc, _ := time.LoadLocation("Europe/Warsaw")
	for i, days := range [][]report.Day{
		{day("2026-10-20", 100, 100, reconcile.Match), day("2026-10-21", 120, 80, reconcile.Missing)},
		{day("2026-10-21", 120, 120, reconcile.Match), day("2026-10-22", 90, 95, reconcile.Surplus)},
	} {
		from, _ := reconcile.ParseDate(days[0].Date)
		to, _ := reconcile.ParseDate(days[len(days)-1].Date)
		w := reconcile.Window{From: from, To: to, Loc: loc}
		rep := report.Report{SchemaVersion: report.SchemaVersion, Tool: report.Tool, RunKey: report.RunKey("48213", w, "s"), WorkspaceID: "48213",
			StoreID: "st_1", Window: report.Window{From: days[0].Date, To: days[len(days)-1].Date, TZ: "Europe/Warsaw"},
			GeneratedAt: time.Date(2026, 10, 22+i, 3, 0, 0, 0, time.UTC), Days: days,
			Diagnoses: []report.Diagnosis{}, Links: []report.Link{}, Countries: []report.Country{}, Findings: []report.Finding{}}
		if i == 0 {
			rep.Diagnoses = []report.Diagnosis{{Date: "2026-10-21", Kind: reconcile.DiagOutage, Clicks: 40}}
		}
		if err := h.RecordRun(ctx, rep); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.Write(dir, rep); err != nil {
			t.Fatal(err)
		}
	}
	trendOf := func(env map[string]string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		args := []string{"trend", "--format", "json", "--tz", "Europe/Warsaw", "--from", "2026-10-20", "--to", "2026-10-23"}
		code := runWith(ctx, args, envconfig.MapLookuper(env), &stdout, &stderr, deps{now: func() time.Time { return testNow }})
		return stdout.String(), stderr.String(), code
	}
	fromHistory, stderr, code := trendOf(map[string]string{"HISTORY_DSN": rawDSN, "RECON_REPORT_DIR": t.TempDir()})
	if code != exitOK {
		t.Fatalf("trend with HISTORY_DSN: exit %d\n%s", code, stderr)
	}
	fromReports, stderr, code := trendOf(map[string]string{"RECON_REPORT_DIR": dir})
	if code != exitOK {
		t.Fatalf("trend of the reports: exit %d\n%s", code, stderr)
	}
	var a, b struct{ Series []trend.Series }
	if err := json.Unmarshal([]byte(fromHistory), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(fromReports), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Series) != 1 || a.Series[0].Total.Surplus != 5 || a.Series[0].ToHeal.Days != 1 || a.Series[0].Days[1].WasMissing != 40 {
		t.Errorf("trend of the history: %s", fromHistory)
	}
	if diff := cmp.Diff(b.Series, a.Series); diff != "" {
		t.Errorf("the trend of the reports (-) and of the history (+) differ:\n%s", diff)
	}

	unmigrated := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(strings.TrimPrefix(unmigrated, "sqlite:"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := trendOf(map[string]string{"HISTORY_DSN": unmigrated}); code != exitUsage || !strings.Contains(stderr, "clickrecon migrate") {
		t.Errorf("trend on a history not migrated: exit %d, %s; want 2 naming clickrecon migrate", code, stderr)
	}
}
