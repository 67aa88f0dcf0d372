package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/monitor"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

const testKey = "sk_live_NEVER_PRINT_ME_1234567890"

// testWorkspace is unique to this test process: the run lock is keyed by
// workspace across the whole database, which other test runs may share.
var testWorkspace = fmt.Sprintf("48213%05d", os.Getpid()%100000)

// testNow is 04:00 in Warsaw on 2026-11-29: every day before it has
// settled under the default RECON_SETTLE of 2h.
var testNow = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func clicksAt(link string, stamps ...string) []elidotest.Click {
	var out []elidotest.Click
	for _, s := range stamps {
		out = append(out, elidotest.Click{TS: utc(s), LinkID: link, CountryCode: "PL"})
	}
	return out
}

// dstWindowClicks is Elido's view of 2026-10-24..26 in Warsaw, with
// clicks on each day's boundaries and in the hour that happens twice on
// the 25th (the day has 25 hours).
func dstWindowClicks() []elidotest.Click {
	var c []elidotest.Click
	// 2026-10-24 (CEST, UTC+2): 00:00:00.000 local is 22:00Z the day before.
	c = append(c, clicksAt("lnk_a", "2026-10-23T22:00:00.000Z", "2026-10-24T08:00:00Z", "2026-10-24T21:59:59.999Z")...)
	c = append(c, clicksAt("lnk_b", "2026-10-24T12:00:00Z")...)
	// 2026-10-25: 02:30 CEST (00:30Z) and 02:30 CET (01:30Z) are both on it.
	c = append(c, clicksAt("lnk_a", "2026-10-24T22:00:00.000Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z")...)
	c = append(c, clicksAt("lnk_b", "2026-10-25T10:00:00Z", "2026-10-25T22:59:59.999Z")...)
	// 2026-10-26 (CET, UTC+1).
	c = append(c, clicksAt("lnk_a", "2026-10-25T23:00:00.000Z", "2026-10-26T09:00:00Z")...)
	c = append(c, clicksAt("lnk_b", "2026-10-26T15:00:00Z", "2026-10-26T22:59:59.999Z")...)
	// Outside the window on both sides.
	c = append(c, clicksAt("lnk_a", "2026-10-23T21:59:59.999Z", "2026-10-26T23:00:00.000Z")...)
	return c
}

// lossAndDuplicate is the store's view: the click in the repeated hour of
// the 25th was lost, and one on the 26th was recorded twice.
func lossAndDuplicate(api []elidotest.Click) []elidotest.Click {
	var out []elidotest.Click
	for _, c := range api {
		if c.TS.Equal(utc("2026-10-25T01:30:00Z")) {
			continue
		}
		out = append(out, c)
		if c.TS.Equal(utc("2026-10-26T09:00:00Z")) {
			out = append(out, c)
		}
	}
	return out
}

type fixture struct {
	t         *testing.T
	elido     *elidotest.Server
	env       map[string]string
	reportDir string
	waits     *waitLog
}

// waitLog records the client's waits instead of sleeping, so retry tests
// are fast and can see what was waited for.
type waitLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	w.mu.Unlock()
	return ctx.Err()
}

// newFixture starts a fake Elido serving api and builds a click store
// holding local, on backend "postgres" or "sqlite".
func newFixture(t *testing.T, backend string, api, local []elidotest.Click) *fixture {
	t.Helper()
	srv := elidotest.NewServer(testWorkspace, testKey, api)
	t.Cleanup(srv.Close)
	f := &fixture{t: t, elido: srv, reportDir: filepath.Join(t.TempDir(), "reports"), waits: &waitLog{}}
	f.env = map[string]string{
		"ELIDO_API_KEY":      testKey,
		"ELIDO_WORKSPACE_ID": testWorkspace,
		"ELIDO_API_BASE":     srv.URL(),
		"ELIDO_RATE_LIMIT":   "6000",
		"STORE_DSN":          buildStore(t, backend, local),
		"RECON_TZ":           "Europe/Warsaw",
		"RECON_REPORT_DIR":   f.reportDir,
		"LOG_LEVEL":          "debug",
	}
	return f
}

// buildStore makes an events-preset store on backend ("postgres", "mysql"
// or "sqlite") holding clicks, from the reference schema users adopt.
func buildStore(t testing.TB, backend string, clicks []elidotest.Click) string {
	t.Helper()
	db, dsn := newStoreDB(t, backend, "events")
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	insert, err := tx.Preparex(db.Rebind(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clicks {
		var ts any = c.TS
		if backend == "sqlite" {
			ts = c.TS.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if _, err := insert.Exec(ts, c.LinkID, c.CountryCode); err != nil {
			t.Fatalf("insert click: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// newStoreDB creates an empty store on backend with the reference schema
// of preset, and returns a handle to fill it and the DSN to give the job.
func newStoreDB(t testing.TB, backend, preset string) (*sqlx.DB, string) {
	t.Helper()
	var db *sqlx.DB
	var dsn string
	switch backend {
	case "postgres":
		db, dsn = pgtest.New(t)
	case "sqlite":
		path := filepath.Join(t.TempDir(), "clicks.db")
		var err error
		if db, err = sqlx.Open("sqlite", path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dsn = "sqlite:" + path
	case "mysql":
		db, dsn = mysqltest.New(t)
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	schema, err := os.ReadFile(filepath.Join("..", "..", "sql", "store", backend, preset+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	return db, dsn
}

type result struct {
	code           int
	stdout, stderr string
}

func (f *fixture) run(args ...string) result {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), append([]string{"run"}, args...), envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps())
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, testKey) {
			f.t.Errorf("the API key appears in the output:\n%s", out)
		}
	}
	return r
}

// deps are the fixture's clock, and waits that are recorded, not slept.
func (f *fixture) deps() deps {
	return deps{
		now:     func() time.Time { return testNow },
		elido:   []elido.Option{elido.WithClock(time.Now, f.waits.sleep)},
		monitor: []monitor.Option{monitor.WithSleep(f.waits.sleep)},
	}
}

// readReport reads the single report the runs wrote.
func (f *fixture) readReport() report.Report {
	f.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(f.reportDir, "*", "report.json"))
	if len(paths) != 1 {
		f.t.Fatalf("want one report.json, found %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		f.t.Fatal(err)
	}
	if bytes.Contains(b, []byte(testKey)) {
		f.t.Errorf("the API key appears in report.json")
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		f.t.Fatalf("report.json: %v", err)
	}
	return r
}

func n(v int64) *int64 { return &v }

func TestRunReportsLossAndDuplicateExactly(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, backend, api, lossAndDuplicate(api))
			r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
			if r.code != exitOK {
				t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			got := f.readReport()
			want := report.Report{
				SchemaVersion: 1,
				Tool:          report.Tool,
				WorkspaceID:   testWorkspace,
				Window:        report.Window{From: "2026-10-24", To: "2026-10-26", TZ: "Europe/Warsaw"},
				GeneratedAt:   testNow,
				Status:        "discrepancies",
				Totals:        report.Totals{API: 13, Local: 13, Delta: 0, APISummary: n(13)},
				Coverage:      report.Coverage{Days: 3, Match: 1, Missing: 1, Surplus: 1},
				Days: []report.Day{
					{Date: "2026-10-24", Hours: 24, API: n(4), Local: n(4), Delta: n(0), Status: "match", Severity: "ok", Settled: true},
					{Date: "2026-10-25", Hours: 25, API: n(5), Local: n(4), Delta: n(-1), Status: "missing", Severity: "warn", Settled: true,
						// 01:30Z is 02:30 in the second 02:00 hour (CET).
						HoursWithGap: []report.Hour{{Start: "2026-10-25T02:00:00+01:00", API: 1, Local: 0, Delta: -1}}},
					{Date: "2026-10-26", Hours: 24, API: n(4), Local: n(5), Delta: n(1), Status: "surplus", Severity: "warn", Settled: true,
						HoursWithGap: []report.Hour{{Start: "2026-10-26T10:00:00+01:00", API: 1, Local: 2, Delta: 1}}},
				},
				Links: []report.Link{
					{Date: "2026-10-25", LinkID: "lnk_a", API: 3, Local: 2, Delta: -1, Status: "missing"},
					{Date: "2026-10-26", LinkID: "lnk_a", API: 2, Local: 3, Delta: 1, Status: "surplus"},
				},
				Countries: []report.Country{
					{Date: "2026-10-25", CountryCode: "PL", API: 5, Local: n(4), Delta: n(-1)},
					{Date: "2026-10-26", CountryCode: "PL", API: 4, Local: n(5), Delta: n(1)},
				},
				Findings: []report.Finding{
					{Kind: "gap_window", Message: "2026-10-25: the gap is 02:00 CET–03:00 CET (Europe/Warsaw): -1 of the day's -1 clicks; the other hours match"},
					{Kind: "gap_window", Message: "2026-10-26: the gap is 10:00 CET–11:00 CET (Europe/Warsaw): +1 of the day's +1 clicks; the other hours match"},
					// A gap of one click shows no shape: its raw clicks are
					// not read, and the report says why it has no diagnosis.
					{Kind: "diagnosis", Message: "2026-10-25: the gap of 1 click is too small to show a shape (fewer than 5)"},
					{Kind: "diagnosis", Message: "2026-10-26: the gap of 1 click is too small to show a shape (fewer than 5)"},
				},
				// Per day that differs: one page of links, one of countries,
				// one of hours.
				Requests:  map[string]int{"summary": 1, "timeseries": 3, "breakdown/link": 2, "breakdown/country": 2},
				Drilldown: report.Drilldown{Mode: "breakdown", Requests: 6},
				Diagnoses: []report.Diagnosis{},
			}
			if !strings.HasPrefix(got.StoreID, "st_") || got.StoreID != identityStoreID(t, f.env["STORE_DSN"], "events") {
				t.Errorf("store_id %q, want the opaque id of the store's identity and its query", got.StoreID)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(report.Report{}, "RunKey", "StoreID")); diff != "" {
				t.Errorf("report.json (-want +got):\n%s", diff)
			}
			for _, s := range []string{"2026-10-25", "missing", "surplus", "-1", "+1"} {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}

			// A rerun of the same window has the same key and replaces
			// the report in place.
			if r2 := f.run("--from", "2026-10-24", "--to", "2026-10-26"); r2.code != exitOK {
				t.Fatalf("rerun exit %d", r2.code)
			}
			if again := f.readReport(); again.RunKey != got.RunKey || got.RunKey == "" {
				t.Errorf("run keys %q and %q, want the same non-empty key", got.RunKey, again.RunKey)
			}
		})
	}
}

func TestRunFailOn(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	for _, tt := range []struct {
		failOn string
		want   int
	}{{"none", exitOK}, {"warn", exitGaps}, {"fail", exitOK}} {
		if r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--fail-on", tt.failOn); r.code != tt.want {
			t.Errorf("--fail-on %s: exit %d, want %d", tt.failOn, r.code, tt.want)
		}
	}
	f.env["RECON_FAIL_ABS"] = "0"
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--fail-on", "fail"); r.code != exitGaps {
		t.Errorf("--fail-on fail with RECON_FAIL_ABS=0: exit %d, want 1", r.code)
	}
	f.env["RECON_TOLERANCE_ABS"] = "1"
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--fail-on", "warn"); r.code != exitOK {
		t.Errorf("a one-click tolerance: exit %d, want 0", r.code)
	}
}

func TestRunDefaultWindowAndJSONOutput(t *testing.T) {
	api := clicksAt("lnk_a", "2026-11-25T23:00:00Z", "2026-11-27T12:00:00Z", "2026-11-28T22:59:59.999Z", "2026-11-28T23:00:00Z")
	f := newFixture(t, "sqlite", api, api)
	r := f.run("--format", "json")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		report.Report
		ReportDir string `json:"report_dir"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	var dates []string
	var apiCounts []int64
	for _, d := range out.Days {
		dates = append(dates, d.Date)
		apiCounts = append(apiCounts, *d.API)
	}
	if diff := cmp.Diff([]string{"2026-11-26", "2026-11-27", "2026-11-28"}, dates); diff != "" {
		t.Errorf("default window (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{1, 1, 1}, apiCounts); diff != "" {
		t.Errorf("api counts (-want +got):\n%s", diff)
	}
	if out.Status != "ok" || out.ReportDir == "" {
		t.Errorf("status %q, report_dir %q", out.Status, out.ReportDir)
	}
}

// A bad flag or variable exits 2 before any request or query, and writes
// no report.
func TestRunRejectsBadInputBeforeAnyRequest(t *testing.T) {
	queryFile := filepath.Join(t.TempDir(), "bad.sql")
	if err := os.WriteFile(queryFile, []byte("SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= :since GROUP BY link_id"), 0o644); err != nil {
		t.Fatal(err)
	}
	goodQuery := filepath.Join(t.TempDir(), "count.sql")
	if err := os.WriteFile(goodQuery, []byte("SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to GROUP BY link_id"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{name: "total_query_without_query", env: map[string]string{"STORE_TOTAL_QUERY_FILE": goodQuery}, want: "STORE_TOTAL_QUERY_FILE is set without STORE_QUERY_FILE"},
		{name: "total_query_file_missing", env: map[string]string{"STORE_QUERY_FILE": goodQuery, "STORE_TOTAL_QUERY_FILE": "/nonexistent/total.sql"}, want: "STORE_TOTAL_QUERY_FILE"},
		{name: "total_query_unknown_parameter", env: map[string]string{"STORE_QUERY_FILE": goodQuery, "STORE_TOTAL_QUERY_FILE": queryFile}, want: "STORE_TOTAL_QUERY_FILE"},
		{name: "unknown_timestamp_zone", env: map[string]string{"STORE_TIMESTAMP_TZ": "Mars/Olympus"}, want: "STORE_TIMESTAMP_TZ"},
		{name: "local_timestamp_zone", env: map[string]string{"STORE_TIMESTAMP_TZ": "Local"}, want: "STORE_TIMESTAMP_TZ"},
		{name: "from_after_to", args: []string{"--from", "2026-11-28", "--to", "2026-11-26"}, want: "after --to"},
		{name: "day_not_ended", args: []string{"--date", "2026-11-29"}, want: "has not ended"},
		{name: "malformed_date", args: []string{"--date", "2026-13-01"}, want: "--date"},
		{name: "unknown_zone", args: []string{"--tz", "Mars/Olympus"}, want: "unknown time zone"},
		{name: "window_too_long", args: []string{"--from", "2025-01-01", "--to", "2026-11-28"}, want: "RECON_MAX_DAYS=400"},
		{name: "date_with_range", args: []string{"--date", "2026-11-26", "--from", "2026-11-25", "--to", "2026-11-26"}, want: "cannot be combined"},
		{name: "unknown_flag", args: []string{"--bogus"}, want: "flag provided but not defined"},
		{name: "bad_fail_on", args: []string{"--fail-on", "sometimes"}, want: "--fail-on"},
		{name: "bad_shard", args: []string{"--shard", "4/4"}, want: "--shard"},
		{name: "stray_argument", args: []string{"yesterday"}, want: "unexpected argument"},
		{name: "days_not_a_number", env: map[string]string{"RECON_DAYS": "abc"}, want: `RECON_DAYS="abc" is not a whole number (e.g. RECON_DAYS=7)`},
		{name: "pct_with_a_percent_sign", env: map[string]string{"RECON_TOLERANCE_PCT": "0.5%"}, want: `RECON_TOLERANCE_PCT="0.5%" is not a plain number, no % sign (e.g. RECON_TOLERANCE_PCT=0.5)`},
		{name: "key_file_missing", env: map[string]string{"ELIDO_API_KEY": "", "ELIDO_API_KEY_FILE": "/nonexistent"}, want: "ELIDO_API_KEY_FILE=/nonexistent: cannot read"},
		{name: "no_api_key", env: map[string]string{"ELIDO_API_KEY": ""}, want: "ELIDO_API_KEY"},
		{name: "no_workspace", env: map[string]string{"ELIDO_WORKSPACE_ID": ""}, want: "ELIDO_WORKSPACE_ID"},
		{name: "unsupported_store", env: map[string]string{"STORE_DSN": "sqlserver://u:pw@db/clicks"}, want: "STORE_DSN"},
		{name: "mysql_store_multi_statements", env: map[string]string{"STORE_DSN": "mysql://u:pw@db/clicks?multiStatements=true"}, want: "invalid MySQL STORE_DSN: multiStatements=true is refused"},
		{name: "bad_preset", env: map[string]string{"STORE_PRESET": "hourly"}, want: "STORE_PRESET"},
		{name: "tolerance_over_100", env: map[string]string{"RECON_TOLERANCE_PCT": "150"}, want: "RECON_TOLERANCE_PCT"},
		{name: "bad_settle", env: map[string]string{"RECON_SETTLE": "soon"}, want: `RECON_SETTLE="soon" is not a duration`},
		{name: "query_file_missing", env: map[string]string{"STORE_QUERY_FILE": "/nonexistent/count.sql"}, want: "STORE_QUERY_FILE"},
		{name: "query_unknown_parameter", env: map[string]string{"STORE_QUERY_FILE": queryFile}, want: ":since"},
		{name: "bad_api_base", env: map[string]string{"ELIDO_API_BASE": "api.elido.app"}, want: "ELIDO_API_BASE"},
		{name: "store_password_misread", env: map[string]string{"STORE_DSN": "postgres://recon:1234#Abc@127.0.0.1:5432/clicks"}, want: "percent-encode"},
		{name: "history_malformed", env: map[string]string{"HISTORY_DSN": "mysql://h/x"}, want: "HISTORY_DSN"},
		{name: "slack_notify_unknown", env: map[string]string{"SLACK_NOTIFY": "never"}, want: "SLACK_NOTIFY"},
		{name: "zero_days_with_a_date", args: []string{"--date", "2026-11-26"}, env: map[string]string{"RECON_DAYS": "0"}, want: "RECON_DAYS"},
		{name: "bad_log_format", env: map[string]string{"LOG_FORMAT": "xml"}, want: "LOG_FORMAT"},
		{name: "key_and_key_file", env: map[string]string{"ELIDO_API_KEY_FILE": queryFile}, want: "both ELIDO_API_KEY and ELIDO_API_KEY_FILE"},
		{name: "workspace_placeholder", env: map[string]string{"ELIDO_WORKSPACE_ID": "REPLACE_ME"}, want: `ELIDO_WORKSPACE_ID holds "REPLACE_ME" with the placeholder REPLACE_ME`},
		{name: "store_password_placeholder", env: map[string]string{"STORE_DSN": "postgres://recon:REPLACE_ME@127.0.0.1:5432/clicks"}, want: "STORE_DSN holds a value with the placeholder REPLACE_ME"},
		{name: "report_bucket_placeholder", env: map[string]string{"RECON_REPORT_DIR": "s3://REPLACE_ME-clickrecon-reports/clickrecon?region=eu-central-1"}, want: "RECON_REPORT_DIR"},
		{name: "report_dir_url_with_one_slash", args: []string{"--report-dir", "s3:/bad"}, want: "--report-dir (RECON_REPORT_DIR) \"s3:/bad\" is neither a folder nor a URL: write s3://BUCKET/PREFIX"},
		{name: "report_dir_url_without_slashes", env: map[string]string{"RECON_REPORT_DIR": "gs:bucket"}, want: "gs://BUCKET/PREFIX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", nil, nil)
			for k, v := range tt.env {
				f.env[k] = v
			}
			r := f.run(tt.args...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want 2\nstderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not mention %q:\n%s", tt.want, r.stderr)
			}
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("requests were made: %v", log)
			}
			if _, err := os.Stat(f.reportDir); !os.IsNotExist(err) {
				t.Errorf("a report folder was created (%v)", err)
			}
		})
	}
}

// Days older than Elido keeps are unverifiable and not asked for: a
// zero Elido might answer for them must not become a surplus.
func TestRunOutsideRetention(t *testing.T) {
	api := clicksAt("lnk_a", "2026-10-30T12:00:00Z", "2026-11-02T12:00:00Z")
	f := newFixture(t, "sqlite", nil, api) // Elido has forgotten both clicks
	f.env["ELIDO_RETENTION_DAYS"] = "29"   // today is 2026-11-29: 2026-10-31, plus a day of margin
	r := f.run("--from", "2026-10-30", "--to", "2026-11-02")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var statuses []string
	for _, d := range f.readReport().Days {
		statuses = append(statuses, d.Date+" "+string(d.Status))
		if d.Status == "unverifiable" && !strings.Contains(d.Reason, "ELIDO_RETENTION_DAYS=29") {
			t.Errorf("%s: reason %q does not name the retention", d.Date, d.Reason)
		}
	}
	want := []string{"2026-10-30 unverifiable", "2026-10-31 unverifiable", "2026-11-01 match", "2026-11-02 surplus"}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	for _, req := range f.elido.RequestLog() {
		if strings.Contains(req, "from=2026-10-3") {
			t.Errorf("a day outside retention was asked for: %s", req)
		}
	}
}

// A window given by flags replaces the one the variables give.
func TestRunFlagsOverrideWindowVariables(t *testing.T) {
	api := clicksAt("lnk_a", "2026-11-25T12:00:00Z", "2026-11-26T12:00:00Z")
	f := newFixture(t, "sqlite", api, api)
	f.env["RECON_FROM"], f.env["RECON_TO"] = "2026-11-01", "2026-11-03"
	if r := f.run("--date", "2026-11-25"); r.code != exitOK {
		t.Fatalf("--date over RECON_FROM/RECON_TO: exit %d\n%s", r.code, r.stderr)
	}
	delete(f.env, "RECON_FROM")
	delete(f.env, "RECON_TO")
	f.env["RECON_DATE"] = "2026-11-01"
	if r := f.run("--from", "2026-11-25", "--to", "2026-11-26", "--format", "json"); r.code != exitOK || !strings.Contains(r.stdout, `"from":"2026-11-25","to":"2026-11-26"`) {
		t.Errorf("--from/--to over RECON_DATE: exit %d\n%s", r.code, r.stdout)
	}
}

func TestRunSecretsFromFiles(t *testing.T) {
	api := clicksAt("lnk_a", "2026-11-27T12:00:00Z")
	f := newFixture(t, "sqlite", api, api)
	dir := t.TempDir()
	keyFile, dsnFile := filepath.Join(dir, "key"), filepath.Join(dir, "dsn")
	os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600)
	os.WriteFile(dsnFile, []byte(f.env["STORE_DSN"]+"\n"), 0o600)
	delete(f.env, "ELIDO_API_KEY")
	delete(f.env, "STORE_DSN")
	f.env["ELIDO_API_KEY_FILE"], f.env["STORE_DSN_FILE"] = keyFile, dsnFile
	if r := f.run("--date", "2026-11-27"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := f.readReport().Days[0].Status; got != "match" {
		t.Errorf("status %q, want match", got)
	}
}

// Faults of the API: transient ones are survived; persistent ones and
// misread answers make days unverifiable, never missing or surplus.
func TestRunUnderAPIFaults(t *testing.T) {
	tests := []struct {
		name         string
		faults       []elidotest.Fault
		wantCode     int
		wantStatuses []reconcile.Status
		wantStatus   report.Status
		wantText     string // in a day's reason or a finding
	}{
		{name: "transient_503_survived", faults: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 503, Times: 2}},
			wantCode: exitOK, wantStatuses: []reconcile.Status{"match", "missing", "surplus"}, wantStatus: "discrepancies"},
		{name: "transient_429_survived", faults: []elidotest.Fault{{Kind: elidotest.RateLimited, RetryAfter: 7 * time.Second, Times: 1}},
			wantCode: exitOK, wantStatuses: []reconcile.Status{"match", "missing", "surplus"}, wantStatus: "discrepancies"},
		{name: "summary_settles_on_second_read", faults: []elidotest.Fault{{Kind: elidotest.SummaryOff, Offset: 3, Times: 1}},
			wantCode: exitOK, wantStatuses: []reconcile.Status{"match", "missing", "surplus"}, wantStatus: "discrepancies"},
		{name: "persistent_500", faults: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 500}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "500"},
		{name: "persistent_timeseries_502", faults: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 502, Endpoint: "timeseries"}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "502"},
		{name: "truncated_json", faults: []elidotest.Fault{{Kind: elidotest.Truncated}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete"},
		{name: "missing_clicks_field", faults: []elidotest.Fault{{Kind: elidotest.MissingField, Field: "clicks", Endpoint: "timeseries"}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "clicks"},
		{name: "null_clicks_field", faults: []elidotest.Fault{{Kind: elidotest.NullField, Field: "clicks", Endpoint: "summary"}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "clicks"},
		{name: "missing_day", faults: []elidotest.Fault{{Kind: elidotest.MissingDay}},
			wantCode: exitIncomplete, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete"},
		{name: "summary_disagrees", faults: []elidotest.Fault{{Kind: elidotest.SummaryOff, Offset: 40}},
			wantCode: exitOK, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "/summary"},
		// Elido's own numbers disagree on the 26th only: per-day summaries
		// leave the other days verified, gaps included.
		{name: "summary_disagrees_on_one_day", faults: []elidotest.Fault{{Kind: elidotest.SummaryOff, Offset: 40, Date: "2026-10-26"}},
			wantCode: exitGaps, wantStatuses: []reconcile.Status{"match", "missing", "unverifiable"}, wantStatus: "discrepancies", wantText: "/summary for 2026-10-26"},
		{name: "key_revoked", faults: []elidotest.Fault{{Kind: elidotest.Unauthorized}},
			wantCode: exitUsage, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "ELIDO_API_KEY"},
		{name: "key_lacks_scope", faults: []elidotest.Fault{{Kind: elidotest.Forbidden}},
			wantCode: exitUsage, wantStatuses: []reconcile.Status{"unverifiable", "unverifiable", "unverifiable"}, wantStatus: "incomplete", wantText: "analytics:read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			f.elido.SetFaults(tt.faults...)
			r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--fail-on", "warn")
			if tt.wantCode == exitOK && tt.wantStatus == "discrepancies" {
				tt.wantCode = exitGaps // --fail-on warn
			}
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			got := f.readReport()
			var statuses []reconcile.Status
			var text strings.Builder
			for _, d := range got.Days {
				statuses = append(statuses, d.Status)
				text.WriteString(d.Reason + "\n")
				if d.Status == "unverifiable" && d.API != nil && !strings.HasPrefix(tt.name, "summary_disagrees") {
					t.Errorf("%s: unverifiable with an api count %d", d.Date, *d.API)
				}
			}
			for _, fi := range got.Findings {
				text.WriteString(fi.Message + "\n")
			}
			if diff := cmp.Diff(tt.wantStatuses, statuses); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if got.Status != tt.wantStatus {
				t.Errorf("report status %q, want %q", got.Status, tt.wantStatus)
			}
			if !strings.Contains(text.String(), tt.wantText) {
				t.Errorf("reasons and findings do not mention %q:\n%s", tt.wantText, text.String())
			}
			if strings.Contains(text.String(), testKey) {
				t.Errorf("the key appears in the report")
			}
		})
	}
}

func TestRunHonoursRetryAfter(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.RateLimited, RetryAfter: 7 * time.Second, Times: 1})
	if r := f.run("--date", "2026-10-25"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	found := false
	for _, w := range f.waits.waits {
		if w >= 7*time.Second && w < 9*time.Second {
			found = true
		}
	}
	if !found {
		t.Errorf("waits %v: none honours Retry-After: 7", f.waits.waits)
	}
}

// A SQLite store file that does not exist is a configuration error: exit
// 2 before any request, no report.
func TestRunMissingSQLiteStore(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	f.env["STORE_DSN"] = "sqlite:" + filepath.Join(t.TempDir(), "no-such.db")
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitUsage || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("exit %d, want 2 naming the missing file\n%s", r.code, r.stderr)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
}

// A store that cannot be reached once the run has started leaves every
// day unverifiable, with Elido's counts kept, and exits 3 to be retried.
func TestRunStoreUnreachable(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	f.env["STORE_DSN"] = "postgres://recon@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=1"
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	for _, d := range f.readReport().Days {
		if d.Status != "unverifiable" || d.Local != nil || d.API == nil {
			t.Errorf("%s: status %s, local %v, api %v; want unverifiable with Elido's count kept", d.Date, d.Status, d.Local, d.API)
		}
	}
}

func TestRunPostgresPasswordNeverShown(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	f.env["STORE_DSN"] = "postgres://recon:s3cr3t-pw@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=1"
	r := f.run("--date", "2026-10-25")
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	b, _ := json.Marshal(f.readReport())
	for _, out := range []string{r.stdout, r.stderr, string(b)} {
		if strings.Contains(out, "s3cr3t-pw") {
			t.Errorf("the store password appears in:\n%s", out)
		}
	}
}

// A store query that fails the same way on every day (here: a custom
// query whose rows are not (link_id, clicks), which prepares fine and so
// passes the probe) is logged once with the days it hit and a hint, not
// once a day, though each day's error names its own date; and exits 2: a
// retry cannot mend it.
func TestRunRepeatedStoreErrorLoggedOnce(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE visits (ts TEXT, page TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	query := filepath.Join(t.TempDir(), "count.sql")
	if err := os.WriteFile(query, []byte(`-- test: the wrong columns
SELECT page, count(*) AS clicks FROM visits WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY page`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.env["STORE_DSN"] = "sqlite:" + path
	f.env["STORE_QUERY_FILE"] = query
	f.env["LOG_FORMAT"] = "json"
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	var failed []map[string]any
	for _, line := range strings.Split(r.stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "store read failed" {
			failed = append(failed, rec)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d \"store read failed\" lines, want 1:\n%s", len(failed), r.stderr)
	}
	rec := failed[0]
	if rec["days"] != float64(3) || rec["from"] != "2026-10-24" || rec["to"] != "2026-10-26" {
		t.Errorf("the line does not name the days it hit: %v", rec)
	}
	if err, _ := rec["err"].(string); !strings.Contains(err, "STORE_PRESET") || !strings.Contains(err, "STORE_QUERY_FILE") {
		t.Errorf("the error gives no hint: %q", err)
	}
}

// A store that cannot serve the run as configured is found before the
// first request to Elido, and said once: exit 2 naming what to fix, no
// report, no table on stdout. A server that does not answer is left for
// the run to meet (exit 3, a retry may help).
func TestRunProbesTheStoreBeforeElido(t *testing.T) {
	api := dstWindowClicks()
	notMigrated := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(notMigrated, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  func(f *fixture)
		want []string // in stderr
	}{
		{"daily_preset_on_an_events_database", func(f *fixture) { f.env["STORE_PRESET"] = "daily" }, []string{"STORE_PRESET=daily", "click_counts"}},
		{"custom_query_names_a_missing_column", func(f *fixture) {
			path := filepath.Join(t.TempDir(), "count.sql")
			if err := os.WriteFile(path, []byte("SELECT link_id, count(*) AS clicks FROM clicks WHERE clicked_at >= :from GROUP BY link_id"), 0o600); err != nil {
				t.Fatal(err)
			}
			f.env["STORE_QUERY_FILE"] = path
		}, []string{"STORE_QUERY_FILE", "clicked_at"}},
		{"database_does_not_exist", func(f *fixture) {
			f.env["STORE_DSN"] = "postgres://postgres@127.0.0.1:5432/no_such_database?sslmode=disable"
		}, []string{"STORE_DSN", "no_such_database"}},
		{"history_never_migrated", func(f *fixture) { f.env["HISTORY_DSN"] = "sqlite:" + notMigrated }, []string{"HISTORY_DSN", "clickrecon migrate"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", api, api)
			tt.env(f)
			// A year, as the user who met this ran it.
			r := f.run("--from", "2025-10-27", "--to", "2026-10-26")
			if r.code != exitUsage {
				t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
			}
			if got := f.elido.Requests(); len(got) != 0 {
				t.Errorf("Elido was asked %v before the store was probed", got)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not name %q:\n%s", want, r.stderr)
				}
			}
			if n := strings.Count(r.stderr, "\n"); n > 2 || r.stdout != "" {
				t.Errorf("%d lines on stderr, stdout %q; want the reason said once", n, r.stdout)
			}
			if paths, _ := filepath.Glob(filepath.Join(f.reportDir, "*", "report.json")); len(paths) != 0 {
				t.Errorf("a report was written: %v", paths)
			}
		})
	}
}

// Every mistake in the flags and variables is listed in one go, so that a
// newcomer fixes them all at once, not one run at a time; none is sent
// anywhere, and no folder is made of a URL that lost a slash.
func TestRunListsEveryConfigErrorAtOnce(t *testing.T) {
	f := newFixture(t, "sqlite", nil, nil)
	t.Chdir(t.TempDir())
	f.env["ELIDO_API_KEY"] = ""
	f.env["ELIDO_WORKSPACE_ID"] = "REPLACE_ME"
	f.env["RECON_DAYS"] = "abc"
	f.env["RECON_SETTLE"] = "soon"
	// A zone that does not load makes no window, and the date is still
	// checked.
	r := f.run("--date", "2026-13-01", "--tz", "Europe/Warsw", "--report-dir", "s3:/bad", "--fail-on", "sometimes")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"clickrecon: 8 configuration errors:\n",
		"  - --tz (RECON_TZ): unknown time zone",
		`  - --date: "2026-13-01" is not a date: no such day in the calendar`,
		`  - RECON_DAYS="abc" is not a whole number`,
		`  - RECON_SETTLE="soon" is not a duration`,
		"  - ELIDO_WORKSPACE_ID holds",
		"  - ELIDO_API_KEY",
		"  - --date",
		"  - --report-dir (RECON_REPORT_DIR)",
		"  - --fail-on",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if got := f.elido.Requests(); len(got) != 0 {
		t.Errorf("requests sent: %v", got)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("the run made %v in its folder", entries)
	}
}
