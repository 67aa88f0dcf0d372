package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

func TestDemo(t *testing.T) {
	// Years from now the demo still shows its gaps: its days never age out.
	for _, now := range []time.Time{testNow, testNow.AddDate(5, 0, 0)} {
		t.Run(now.Format("2006"), func(t *testing.T) { testDemo(t, now) })
	}
}

// With --format json the demo's stdout is its report, one JSON line, as
// run's is: it stops after the first report, with no Slack message and no
// repair to print.
func TestDemoJSONIsOneReport(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"demo", "--report-dir", dir, "--format", "json"}, envconfig.MapLookuper(nil), &stdout, &stderr,
		deps{now: func() time.Time { return testNow }})
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	var rep report.Report
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rep) != nil || rep.Tool != report.Tool || rep.Status != report.StatusDiscrepancies {
		t.Fatalf("stdout is not one report.json line with status discrepancies:\n%s", stdout.String())
	}
	if paths, _ := filepath.Glob(filepath.Join(dir, "*", "report.json")); len(paths) != 1 {
		t.Errorf("report.json files: %v, want the first run's alone", paths)
	}
}

func testDemo(t *testing.T, now time.Time) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"demo", "--report-dir", dir}, envconfig.MapLookuper(nil), &stdout, &stderr,
		deps{now: func() time.Time { return now }})
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	// Two reports: the run's, and the re-run's after the repair; stdout
	// ends naming both files to open.
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	if len(paths) != 2 {
		t.Fatalf("report.json files: %v", paths)
	}
	var before, after string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if p, ok := strings.CutPrefix(line, "  before the repair  "); ok {
			before = p
		}
		if p, ok := strings.CutPrefix(line, "  after the repair   "); ok {
			after = p
		}
	}
	if _, err := os.Stat(before); err != nil || filepath.Base(before) != "report.html" {
		t.Fatalf("stdout does not name the report to open (%q: %v):\n%s", before, err, stdout.String())
	}
	if _, err := os.Stat(after); err != nil || after == before {
		t.Fatalf("stdout does not name the report after the repair (%q: %v)", after, err)
	}
	var repaired report.Report
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(after), "report.json"))
	if err := json.Unmarshal(b, &repaired); err != nil {
		t.Fatal(err)
	}
	var statuses []reconcile.Status
	for _, d := range repaired.Days {
		statuses = append(statuses, d.Status)
	}
	if diff := cmp.Diff([]reconcile.Status{reconcile.Match, reconcile.Match, reconcile.Surplus, reconcile.Match}, statuses); diff != "" {
		t.Errorf("the report after the repair (-want +got):\n%s", diff)
	}
	// The re-check the demo shows must work once it is over: not a run
	// against a simulated API that is gone.
	if strings.Contains(stdout.String(), "clickrecon run --from") || strings.Contains(stdout.String(), "clickrecon run --date") {
		t.Errorf("the demo suggests a run against its own world, gone when it ends:\n%s", stdout.String())
	}
	b, _ = os.ReadFile(filepath.Join(filepath.Dir(before), "report.json"))
	var got report.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}

	// The demo's own clicks, bucketed independently of the pipeline: by
	// each click's calendar date in Warsaw.
	loc, _ := time.LoadLocation(demo.Zone)
	from, _ := reconcile.ParseDate(demo.From)
	to, _ := reconcile.ParseDate(demo.To)
	elidoClicks, storeClicks := demo.Clicks(reconcile.Window{From: from, To: to, Loc: loc})
	byDay := func(ts []time.Time) map[string]int64 {
		m := map[string]int64{}
		for _, t := range ts {
			m[t.In(loc).Format("2006-01-02")]++
		}
		return m
	}
	var apiTS, localTS []time.Time
	for _, c := range elidoClicks {
		apiTS = append(apiTS, c.TS)
	}
	for _, c := range storeClicks {
		localTS = append(localTS, c.TS)
	}
	apiDays, localDays := byDay(apiTS), byDay(localTS)

	type row struct {
		Date       string
		Hours      float64
		API, Local int64
		Status     reconcile.Status
	}
	var want, gotRows []row
	wantStatus := []reconcile.Status{reconcile.Match, reconcile.Missing, reconcile.Surplus, reconcile.Match}
	for i, d := range []string{"2026-10-23", "2026-10-24", "2026-10-25", "2026-10-26"} {
		hours := 24.0
		if d == "2026-10-25" {
			hours = 25
		}
		want = append(want, row{d, hours, apiDays[d], localDays[d], wantStatus[i]})
	}
	for _, d := range got.Days {
		gotRows = append(gotRows, row{d.Date, d.Hours, *d.API, *d.Local, d.Status})
	}
	if diff := cmp.Diff(want, gotRows); diff != "" {
		t.Errorf("demo days (-want +got):\n%s", diff)
	}
	if got.Status != report.StatusDiscrepancies || got.Window.TZ != "Europe/Warsaw" {
		t.Errorf("status %q in %s", got.Status, got.Window.TZ)
	}
	// The demo tells a receiver down longer than Elido's retry window and
	// a batch handled twice: its report must say the same, not a poller.
	var kinds []string
	for _, g := range got.Diagnoses {
		kinds = append(kinds, g.Date+" "+g.Kind)
	}
	if diff := cmp.Diff([]string{"2026-10-24 outage", "2026-10-25 duplicates"}, kinds); diff != "" {
		t.Errorf("the demo's diagnoses (-want +got):\n%s", diff)
	}
}

func TestVersionAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runWith(context.Background(), []string{"version"}, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: time.Now}); code != exitOK || !strings.HasPrefix(stdout.String(), "clickrecon ") {
		t.Errorf("version: exit %d, %q", code, stdout.String())
	}
	runIt := func(args ...string) (int, string, string) {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: time.Now})
		return code, stdout.String(), stderr.String()
	}
	if code, _, errOut := runIt(); code != exitUsage || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no command: exit %d, stderr %q", code, errOut)
	}
	// A mistake is one line and a hint, not a page of help.
	for _, args := range [][]string{{"frobnicate"}, {"run", "--frobnicate"}, {"demo", "--date", "2026-01-01"}} {
		code, out, errOut := runIt(args...)
		if code != exitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "help") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with a hint", args, code, out, errOut)
		}
	}
	// Asked-for help goes to stdout, exit 0, with the command's own defaults.
	if code, out, errOut := runIt("run", "--help"); code != exitOK || !strings.Contains(out, "ELIDO_API_KEY") || errOut != "" {
		t.Errorf("run --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := runIt("demo", "-h"); code != exitOK || !strings.Contains(out, "clickrecon-demo") || !strings.Contains(out, "Europe/Warsaw") || strings.Contains(out, "ELIDO_API_KEY") {
		t.Errorf("demo -h: exit %d, stdout %q; want the demo's defaults and no run variables", code, out)
	}
	// The flags are printed as the docs write them, --date; the demo's
	// help names no variable it does not read.
	for _, cmd := range []string{"run", "repair", "merge", "demo"} {
		_, out, _ := runIt(cmd, "--help")
		if !strings.Contains(out, "\n  --format string\n") || strings.Contains(out, "\n  -format") {
			t.Errorf("%s --help does not print --format with two dashes:\n%s", cmd, out)
		}
	}
	if _, out, _ := runIt("demo", "--help"); strings.Contains(out, "RECON_") || !strings.Contains(out, "--serve") {
		t.Errorf("demo --help names a RECON_ variable the demo does not read, or lacks --serve:\n%s", out)
	}
	if _, out, _ := runIt("run", "--help"); !strings.Contains(out, "  --date string\n    \treconcile one day, YYYY-MM-DD (RECON_DATE)\n") {
		t.Errorf("run --help lacks --date and its variable:\n%s", out)
	}
	// repair's help lists the variables repair reads, and not the ones it
	// does not (it posts nothing to Slack).
	_, runHelp, _ := runIt("run", "--help")
	_, repairHelp, _ := runIt("repair", "--help")
	for _, v := range []string{"SLACK_WEBHOOK_URL", "RECON_TOLERANCE_ABS", "PUSHGATEWAY_URL", "STORE_TOTAL_QUERY_FILE"} {
		if !strings.Contains(runHelp, v) || strings.Contains(repairHelp, v) {
			t.Errorf("%s: want it in run --help and not in repair --help", v)
		}
	}
	for _, v := range []string{"STORE_WRITE_DSN", "REPAIR_INSERT_FILE", "HISTORY_DSN", "RECON_SETTLE", "STORE_TIMESTAMP_TZ", "LOG_LEVEL"} {
		if !strings.Contains(repairHelp, v) {
			t.Errorf("repair --help lacks %s", v)
		}
	}

}

// A text log line writes a map as its pairs, not in Go's map syntax.
func TestTextLogWritesMapsPlainly(t *testing.T) {
	var buf bytes.Buffer
	log := console.NewLogger(console.NewBar(&buf), "text", "info")
	log.Info("elido read", "requests", map[string]int{"timeseries": 1, "summary": 1}, "days", 3)
	if got := buf.String(); !strings.Contains(got, `requests="summary:1 timeseries:1" days=3`) || strings.Contains(got, "map[") {
		t.Errorf("log line: %s", got)
	}
}
