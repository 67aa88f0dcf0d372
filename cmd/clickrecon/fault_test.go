package main

// The fault suite: whole runs through runWith, against a real Postgres
// store and httptest fakes for Elido, Slack, the Pushgateway and the
// healthcheck, each fault one row. Every row checks the promises of
// RELIABILITY.md: the exit code says whether a retry can help, a fault
// never becomes a gap (missing or surplus), the report on disk is whole,
// and no secret reaches a place it does not belong.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// The recognisable secrets of the suite; each belongs to one origin.
const (
	faultKey        = "sk_live_FAULT_KEY_9f8e7d6c5b4a"
	faultDBPassword = "pgPW_fault_3141592"
	faultHookPath   = "/services/T0FAULT/B0FAULT/hookSECRET2718"
	faultBotToken   = "xoxb-fault-BOT-TOKEN-1618"
	faultPingPath   = "/ping/hcSECRET-1414-2135"
	faultPushUser   = "pushuser"
	faultPushPass   = "pushPW_SECRET_1732"
)

// faultStats counts, over the fault suite and the secret scan, what
// RELIABILITY.md reports; TestFaultSuite logs it (go test -v).
var faultStats struct {
	mu                                sync.Mutex
	tried, survived, falseGaps, leaks int
}

// exchange is one request a fake received.
type exchange struct {
	method, url string
	header      http.Header
	body        []byte
}

// fake is a fake server that records every request it receives and
// answers with handle (200 "ok" when nil).
type fake struct {
	*httptest.Server
	name   string
	mu     sync.Mutex
	got    []exchange
	handle func(w http.ResponseWriter, r *http.Request)
	first  chan struct{}
	once   sync.Once
}

func newFake(t *testing.T, name string, handle func(w http.ResponseWriter, r *http.Request)) *fake {
	rec := &fake{name: name, handle: handle, first: make(chan struct{})}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		rec.mu.Lock()
		rec.got = append(rec.got, exchange{method: r.Method, url: r.URL.String(), header: r.Header.Clone(), body: body})
		rec.mu.Unlock()
		rec.once.Do(func() { close(rec.first) })
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rec.handle != nil {
			rec.handle(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *fake) exchanges() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]exchange(nil), rec.got...)
}

// faultRig is one run's world: the fake Elido behind a recording front
// that can misbehave itself, a Postgres store, Slack, the Pushgateway, the
// healthcheck and a server elsewhere that nothing should reach.
type faultRig struct {
	t         *testing.T
	elido     *elidotest.Server
	front     *fake
	hook      *fake
	bot       *fake
	push      *fake
	health    *fake
	elsewhere *fake
	env       map[string]string
	reportDir string
	waits     *waitLog
	truth     map[string]reconcile.Status // each day's status in the data
	frontHook atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
}

// faultWorkspaces makes each rig's workspace, and so its run lock, unique.
var faultWorkspaces atomic.Int64

// newFaultRig builds a world whose store holds local and whose Elido
// serves api, over 2026-10-24..26 (Warsaw's DST change on the 25th).
func newFaultRig(t *testing.T, gaps bool) *faultRig {
	t.Helper()
	api := dstWindowClicks()
	local := api
	truth := map[string]reconcile.Status{"2026-10-24": "match", "2026-10-25": "match", "2026-10-26": "match"}
	if gaps {
		local = lossAndDuplicate(api)
		truth = map[string]reconcile.Status{"2026-10-24": "match", "2026-10-25": "missing", "2026-10-26": "surplus"}
	}
	ws := fmt.Sprintf("%s%03d", testWorkspace, faultWorkspaces.Add(1))
	rig := &faultRig{t: t, reportDir: filepath.Join(t.TempDir(), "reports"), waits: &waitLog{}, truth: truth}
	rig.elido = elidotest.NewServer(ws, faultKey, api)
	t.Cleanup(rig.elido.Close)
	backend, _ := url.Parse(strings.TrimSuffix(rig.elido.URL(), "/v1"))
	proxy := httputil.NewSingleHostReverseProxy(backend)
	rig.front = newFake(t, "elido", func(w http.ResponseWriter, r *http.Request) {
		if h := rig.frontHook.Load(); h != nil && (*h)(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	})
	rig.hook = newFake(t, "slack-webhook", nil)
	rig.bot = newFake(t, "slack-bot", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true,"channel":"C0FAULT","ts":"1700000000.000100","messages":[]}`)
	})
	rig.push = newFake(t, "pushgateway", nil)
	rig.health = newFake(t, "healthcheck", nil)
	rig.elsewhere = newFake(t, "elsewhere", nil)

	db, dsn := newStoreDB(t, "postgres", "events")
	for _, c := range local {
		if _, err := db.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES ($1, $2, $3)`, c.TS, c.LinkID, c.CountryCode); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), faultDBPassword) // trust auth ignores it
	q := u.Query()
	q.Set("application_name", "clickrecon-fault-"+ws)
	u.RawQuery = q.Encode()
	pu, _ := url.Parse(rig.push.URL)
	pu.User = url.UserPassword(faultPushUser, faultPushPass)
	rig.env = map[string]string{
		"ELIDO_API_KEY":      faultKey,
		"ELIDO_WORKSPACE_ID": ws,
		"ELIDO_API_BASE":     rig.front.URL + "/v1",
		"ELIDO_RATE_LIMIT":   "60000",
		"STORE_DSN":          u.String(),
		"RECON_TZ":           "Europe/Warsaw",
		"RECON_REPORT_DIR":   rig.reportDir,
		"RECON_TIMEOUT":      "20s",
		"SLACK_WEBHOOK_URL":  rig.hook.URL + faultHookPath,
		"SLACK_NOTIFY":       "always",
		"PUSHGATEWAY_URL":    pu.String(),
		"HEALTHCHECK_URL":    rig.health.URL + faultPingPath,
		"LOG_LEVEL":          "debug",
	}
	return rig
}

// onFront lets the Elido front answer a request itself: h returns true
// when it did.
func (rig *faultRig) onFront(h func(w http.ResponseWriter, r *http.Request) bool) {
	rig.frontHook.Store(&h)
}

// useBot switches Slack from the webhook to a bot token.
func (rig *faultRig) useBot() {
	delete(rig.env, "SLACK_WEBHOOK_URL")
	rig.env["SLACK_BOT_TOKEN"] = faultBotToken
	rig.env["SLACK_CHANNEL"] = "C0FAULT"
	rig.env["SLACK_API_URL"] = rig.bot.URL + "/api/"
}

type faultResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// run runs clickrecon under ctx with the rig's fake clock and waits.
func (rig *faultRig) run(ctx context.Context, args ...string) faultResult {
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := runWith(ctx, append([]string{"run"}, args...), envconfig.MapLookuper(rig.env), &stdout, &stderr, rig.deps())
	return faultResult{code: code, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
}

func (rig *faultRig) deps() deps {
	f := &fixture{waits: rig.waits}
	return f.deps()
}

// secretPlace is one secret and the origin it belongs to ("" for none:
// it may appear in no request at all).
type secretPlace struct {
	name, value, owner string
}

func (rig *faultRig) secrets() []secretPlace {
	basic := base64.StdEncoding.EncodeToString([]byte(faultPushUser + ":" + faultPushPass))
	return []secretPlace{
		{"ELIDO_API_KEY", faultKey, "elido"},
		{"the store password", faultDBPassword, ""},
		{"SLACK_WEBHOOK_URL", strings.TrimPrefix(faultHookPath, "/services/"), "slack-webhook"},
		{"SLACK_BOT_TOKEN", faultBotToken, "slack-bot"},
		{"HEALTHCHECK_URL", strings.TrimPrefix(faultPingPath, "/ping/"), "healthcheck"},
		{"PUSHGATEWAY_URL's password", faultPushPass, "pushgateway"},
		{"PUSHGATEWAY_URL's credentials", basic, "pushgateway"},
	}
}

// leaks scans every output of a run for a secret outside its origin:
// stdout, stderr, every report file, every request every fake received
// (a request, Slack payloads included, may hold only the secret of the
// origin it went to: a bot token goes in the form body of Slack's API).
func (rig *faultRig) leaks(r faultResult) []string {
	var out []string
	scan := func(where, text, allowed string) {
		for _, s := range rig.secrets() {
			if s.owner == allowed && allowed != "" {
				continue
			}
			for _, form := range []string{s.value, url.QueryEscape(s.value), url.PathEscape(s.value)} {
				if strings.Contains(text, form) {
					out = append(out, fmt.Sprintf("%s in %s", s.name, where))
					break
				}
			}
		}
	}
	scan("stdout", r.stdout, "")
	scan("stderr", r.stderr, "")
	filepath.Walk(rig.reportDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			scan(path, string(b), "")
		}
		return nil
	})
	for _, rec := range []*fake{rig.front, rig.hook, rig.bot, rig.push, rig.health, rig.elsewhere} {
		for i, x := range rec.exchanges() {
			var h strings.Builder
			x.header.Write(&h)
			scan(fmt.Sprintf("request %d to %s (URL, headers)", i, rec.name), x.url+"\n"+h.String(), rec.name)
			scan(fmt.Sprintf("request %d to %s (body)", i, rec.name), string(x.body), rec.name)
		}
	}
	return out
}

// checkReport checks that the run left exactly one report folder, whole,
// and returns its report.json.
func (rig *faultRig) checkReport(t *testing.T) report.Report {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(rig.reportDir, "*", "report.json"))
	if len(dirs) != 1 {
		t.Fatalf("want one report.json, found %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report.json is not whole: %v", err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(html), "</html>") {
		t.Errorf("report.html missing or cut short (%v)", err)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || len(md) == 0 {
		t.Errorf("report.md missing or empty (%v)", err)
	}
	if csvs, _ := filepath.Glob(filepath.Join(dir, "*.csv")); len(csvs) == 0 {
		t.Errorf("no CSV beside report.json")
	}
	if len(rep.Days) != 3 {
		t.Errorf("report has %d days, want 3", len(rep.Days))
	}
	return rep
}

// faultCase is one row of the suite.
type faultCase struct {
	name string
	gaps bool // the data has real gaps (match, missing, surplus)
	// setup makes the fault; it may return the context to run under.
	setup func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc)
	args  []string
	want  int    // exit code
	text  string // in stderr or the report's reasons and findings
	// unverifiable: every day is unverifiable (the fault hit the main
	// pass); otherwise the days are what the data says.
	unverifiable bool
	check        func(t *testing.T, rig *faultRig, rep report.Report)
}

// runFault runs one row and checks what every row promises.
func runFault(t *testing.T, tt faultCase) {
	rig := newFaultRig(t, tt.gaps)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if tt.setup != nil {
		tt.setup(t, rig, ctx, cancel)
	}
	args := tt.args
	if args == nil {
		args = []string{"--from", "2026-10-24", "--to", "2026-10-26"}
	}
	r := rig.run(ctx, args...)
	ok := true
	if r.code != tt.want {
		ok = false
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.want, r.stdout, lastLines(r.stderr, 15))
	}
	if r.took > 15*time.Second {
		ok = false
		t.Errorf("the run took %s: a fault must not hang it", r.took)
	}
	rep := rig.checkReport(t)
	var text strings.Builder
	text.WriteString(r.stderr + rep.Interrupted + "\n")
	falseGaps := 0
	for _, d := range rep.Days {
		text.WriteString(d.Reason + "\n")
		if d.IsGap() && rig.truth[d.Date] != d.Status {
			falseGaps++
			t.Errorf("%s reported %s: a fault became a gap (the data says %s)", d.Date, d.Status, rig.truth[d.Date])
		}
		if tt.unverifiable && d.Status != "unverifiable" {
			ok = false
			t.Errorf("%s is %s, want unverifiable", d.Date, d.Status)
		}
	}
	for _, f := range rep.Findings {
		text.WriteString(f.Message + "\n")
	}
	if tt.text != "" && !strings.Contains(text.String(), tt.text) {
		ok = false
		t.Errorf("neither stderr nor the report mentions %q", tt.text)
	}
	leaks := rig.leaks(r)
	for _, l := range leaks {
		t.Errorf("secret leaked: %s", l)
	}
	if tt.check != nil {
		tt.check(t, rig, rep)
	}
	faultStats.mu.Lock()
	faultStats.tried++
	if ok && falseGaps == 0 && len(leaks) == 0 && !t.Failed() {
		faultStats.survived++
	}
	faultStats.falseGaps += falseGaps
	faultStats.leaks += len(leaks)
	faultStats.mu.Unlock()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cancelOn cancels the run (SIGTERM, as main's signal.NotifyContext does)
// when ch is closed: an event, never a guessed time. The wait is bounded.
func cancelOn(t *testing.T, ctx context.Context, ch <-chan struct{}, cancel context.CancelFunc) {
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
			t.Errorf("the phase's first request never came")
			cancel()
		}
	}()
}

// customQuery writes a STORE_QUERY_FILE and points the run at it.
func customQuery(t *testing.T, rig *faultRig, sql string) {
	path := filepath.Join(t.TempDir(), "count.sql")
	if err := os.WriteFile(path, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}
	rig.env["STORE_QUERY_FILE"] = path
}

func faults(fs ...elidotest.Fault) func(*testing.T, *faultRig, context.Context, context.CancelFunc) {
	return func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) { rig.elido.SetFaults(fs...) }
}

// notOnElsewhere checks that the server a redirect pointed at got nothing
// that carries a credential.
func notOnElsewhere(t *testing.T, rig *faultRig, _ report.Report) {
	for _, x := range rig.elsewhere.exchanges() {
		if x.header.Get("Authorization") != "" {
			t.Errorf("the redirect target received an Authorization header")
		}
	}
}

// drillRequests is how many requests the drill-down sent.
func drillRequests(rep report.Report) int { return rep.Drilldown.Requests }

const countQuery = `-- test: clicks per link of one day
SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to GROUP BY link_id`

func faultCases() []faultCase {
	return []faultCase{
		// Elido, transient: survived.
		{name: "elido_429_storm_with_retry_after", setup: faults(elidotest.Fault{Kind: elidotest.RateLimited, RetryAfter: 3 * time.Second, Times: 4}), want: exitOK},
		{name: "elido_429_storm_without_retry_after", setup: faults(elidotest.Fault{Kind: elidotest.RateLimitedBody, Times: 4}), want: exitOK},
		{name: "elido_429_reset_header_only", setup: faults(elidotest.Fault{Kind: elidotest.RateLimitedReset, RetryAfter: 2 * time.Second, Times: 2}), want: exitOK},
		{name: "elido_5xx_burst", setup: faults(elidotest.Fault{Kind: elidotest.ServerError, Status: 503, Times: 3}), want: exitOK},
		{name: "elido_truncated_body_once", setup: faults(elidotest.Fault{Kind: elidotest.Truncated, Times: 1}), want: exitOK},
		{name: "elido_reset_mid_body_once", setup: resetMidBody(2), want: exitOK},
		// Elido, persistent: days unverifiable, exit 3.
		{name: "elido_429_forever", setup: faults(elidotest.Fault{Kind: elidotest.RateLimited, RetryAfter: time.Second}), want: exitIncomplete, unverifiable: true, text: "429"},
		{name: "elido_5xx_forever", setup: faults(elidotest.Fault{Kind: elidotest.ServerError, Status: 502}), want: exitIncomplete, unverifiable: true, text: "502"},
		{name: "elido_reset_mid_body_always", setup: resetMidBody(-1), want: exitIncomplete, unverifiable: true},
		{name: "elido_truncated_body", setup: faults(elidotest.Fault{Kind: elidotest.Truncated}), want: exitIncomplete, unverifiable: true},
		{name: "elido_oversized_body", setup: oversized, want: exitIncomplete, unverifiable: true},
		{name: "elido_silent_server", setup: silent, want: exitIncomplete, unverifiable: true, text: "RECON_TIMEOUT"},
		{name: "elido_missing_field", setup: faults(elidotest.Fault{Kind: elidotest.MissingField, Field: "clicks", Endpoint: "timeseries"}), want: exitIncomplete, unverifiable: true, text: "clicks"},
		{name: "elido_null_field", setup: faults(elidotest.Fault{Kind: elidotest.NullField, Field: "clicks", Endpoint: "summary"}), want: exitIncomplete, unverifiable: true, text: "clicks"},
		{name: "elido_missing_day", setup: faults(elidotest.Fault{Kind: elidotest.MissingDay}), want: exitIncomplete, unverifiable: true},
		{name: "elido_duplicate_day", setup: faults(elidotest.Fault{Kind: elidotest.DuplicateDay}), want: exitIncomplete, unverifiable: true},
		{name: "elido_reversed_days", setup: faults(elidotest.Fault{Kind: elidotest.ReversedDays}), want: exitIncomplete, unverifiable: true, text: "order"},
		{name: "elido_count_at_int64_max", setup: faults(elidotest.Fault{Kind: elidotest.HugeCount}), want: exitIncomplete, unverifiable: true, text: "9223372036854775807"},
		{name: "elido_summary_disagrees", setup: faults(elidotest.Fault{Kind: elidotest.SummaryOff, Offset: 40}), want: exitOK, unverifiable: true, text: "/summary"},
		{name: "elido_error_body_echoes_the_key", setup: faults(elidotest.Fault{Kind: elidotest.EchoAuthorization}), want: exitIncomplete, unverifiable: true},
		// Elido, what no retry mends: exit 2.
		{name: "elido_key_revoked", setup: faults(elidotest.Fault{Kind: elidotest.Unauthorized}), want: exitUsage, unverifiable: true, text: "ELIDO_API_KEY"},
		{name: "elido_key_lacks_scope", setup: faults(elidotest.Fault{Kind: elidotest.Forbidden}), want: exitUsage, unverifiable: true, text: "analytics:read"},
		{name: "elido_redirect_302_to_another_port", setup: redirect(http.StatusFound), want: exitUsage, unverifiable: true, text: "ELIDO_API_BASE", check: notOnElsewhere},
		{name: "elido_redirect_307_to_another_port", setup: redirect(http.StatusTemporaryRedirect), want: exitUsage, unverifiable: true, text: "ELIDO_API_BASE", check: notOnElsewhere},
		// The drill-down.
		{name: "drilldown_key_revoked", gaps: true, setup: faults(elidotest.Fault{Kind: elidotest.Unauthorized, Endpoint: "breakdown/link"}), want: exitUsage, text: "ELIDO_API_KEY"},
		{name: "drilldown_key_lacks_scope", gaps: true, setup: faults(elidotest.Fault{Kind: elidotest.Forbidden, Endpoint: "breakdown/country"}), want: exitUsage, text: "analytics:read"},
		{name: "drilldown_endless_cursor", gaps: true, setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.elido.SetFaults(elidotest.Fault{Kind: elidotest.EndlessCursor})
			rig.env["RECON_DRILLDOWN_MAX_REQUESTS"] = "5"
		}, want: exitOK, text: "RECON_DRILLDOWN_MAX_REQUESTS ran out", check: func(t *testing.T, rig *faultRig, rep report.Report) {
			if n := drillRequests(rep); n > 5 {
				t.Errorf("the drill-down sent %d requests, over its budget of 5", n)
			}
			if n := rig.elido.Requests()["breakdown/link"]; n > 5 {
				t.Errorf("Elido got %d /breakdown/link requests, over the budget of 5", n)
			}
			for _, l := range rep.Links {
				t.Errorf("link row %+v from a breakdown read only in part", l)
			}
		}},
		{name: "drilldown_5xx_forever", gaps: true, setup: faults(elidotest.Fault{Kind: elidotest.ServerError, Status: 503, Endpoint: "breakdown/link"}), want: exitOK, text: "503"},
		// The store.
		{name: "store_dies_mid_query", setup: func(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			customQuery(t, rig, `-- test: a backend that dies while it counts
SELECT link_id, count(*) AS clicks FROM clicks, (SELECT pg_terminate_backend(pg_backend_pid())) AS dying
WHERE ts >= :from AND ts < :to GROUP BY link_id`)
		}, want: exitIncomplete, unverifiable: true},
		{name: "store_terminated_mid_query", setup: terminateMidQuery, want: exitIncomplete, unverifiable: true},
		{name: "store_query_past_the_deadline", setup: func(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			customQuery(t, rig, `-- test: a count slower than the run
SELECT link_id, count(*) AS clicks FROM clicks, (SELECT pg_sleep(60)) AS slow
WHERE ts >= :from AND ts < :to GROUP BY link_id`)
			rig.env["RECON_TIMEOUT"] = "2s"
		}, want: exitIncomplete, unverifiable: true, text: "RECON_TIMEOUT"},
		{name: "store_query_tries_to_write", setup: func(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			customQuery(t, rig, `-- test: a "count" that deletes
WITH gone AS (DELETE FROM clicks WHERE ts >= :from AND ts < :to RETURNING link_id)
SELECT link_id, count(*) AS clicks FROM gone GROUP BY link_id`)
		}, want: exitUsage, unverifiable: true, text: "read-only", check: func(t *testing.T, rig *faultRig, _ report.Report) {
			db, err := rig.admin()
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM clicks`); err != nil || n != len(dstWindowClicks()) {
				t.Errorf("clicks left: %d (%v), want %d: the query wrote", n, err, len(dstWindowClicks()))
			}
		}},
		{name: "store_custom_query_works", setup: func(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			customQuery(t, rig, countQuery)
		}, want: exitOK},
		// SIGTERM in each phase.
		{name: "sigterm_at_boot", setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			cancelOn(t, ctx, rig.health.first, cancel)
			rig.holdHealthcheck()
		}, want: exitIncomplete},
		{name: "sigterm_reading_elido", setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			rig.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute})
			cancelOn(t, ctx, rig.elido.Arrived("timeseries"), cancel)
		}, want: exitIncomplete, unverifiable: true, text: "SIGTERM"},
		{name: "sigterm_reading_the_store", setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			customQuery(t, rig, `-- test: a slow count
SELECT link_id, count(*) AS clicks FROM clicks, (SELECT pg_sleep(60)) AS slow
WHERE ts >= :from AND ts < :to GROUP BY link_id`)
			cancelOn(t, ctx, rig.sleeping(ctx), cancel)
		}, want: exitIncomplete, unverifiable: true, text: "SIGTERM"},
		{name: "sigterm_in_the_drilldown", gaps: true, setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			rig.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute, Endpoint: "breakdown/link"})
			cancelOn(t, ctx, rig.elido.Arrived("breakdown/link"), cancel)
		}, want: exitIncomplete, text: "SIGTERM", check: noAlert},
		{name: "sigterm_while_posting_to_slack", gaps: true, setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			rig.hook.handle = holdUntil(t, ctx)
			cancelOn(t, ctx, rig.hook.first, cancel)
		}, want: exitIncomplete},
		{name: "sigterm_while_posting_with_a_bot", gaps: true, setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			rig.useBot()
			rig.bot.handle = holdUntil(t, ctx)
			cancelOn(t, ctx, rig.bot.first, cancel)
		}, want: exitIncomplete},
		{name: "sigterm_while_pushing_metrics", setup: func(t *testing.T, rig *faultRig, ctx context.Context, cancel context.CancelFunc) {
			rig.push.handle = holdUntil(t, ctx)
			cancelOn(t, ctx, rig.push.first, cancel)
		}, want: exitOK},
		// Slack, the Pushgateway and the healthcheck misbehaving.
		{name: "slack_webhook_redirects_elsewhere", gaps: true, setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.hook.handle = redirectTo(rig.elsewhere.URL, http.StatusTemporaryRedirect)
		}, want: exitUsage, check: nothingElsewhere},
		{name: "slack_bot_redirects_elsewhere", gaps: true, setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.useBot()
			rig.bot.handle = redirectTo(rig.elsewhere.URL, http.StatusFound)
		}, want: exitUsage, check: nothingElsewhere},
		{name: "monitoring_redirects_elsewhere", setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.push.handle = redirectTo(rig.elsewhere.URL, http.StatusTemporaryRedirect)
			rig.health.handle = redirectTo(rig.elsewhere.URL, http.StatusFound)
		}, want: exitOK, check: nothingElsewhere},
	}
}

// resetMidBody makes the Elido front cut the connection halfway through
// the body of the first n timeseries answers (every one when n < 0).
func resetMidBody(n int) func(*testing.T, *faultRig, context.Context, context.CancelFunc) {
	return func(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
		var left atomic.Int64
		left.Store(int64(n))
		rig.onFront(func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.Contains(r.URL.Path, "/timeseries") || (n >= 0 && left.Add(-1) < 0) {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "4096")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"interval":"day","tz":"Europe/Warsaw","items":[{"date":"2026-10-24","cli`)
			w.(http.Flusher).Flush()
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return true
		})
	}
}

// oversized answers every timeseries request with 40 MiB of JSON.
func oversized(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
	rig.onFront(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Path, "/timeseries") {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"interval":"day","tz":"Europe/Warsaw","items":[`)
		pad := bytes.Repeat([]byte(" "), 1<<20)
		for i := 0; i < 40; i++ {
			if _, err := w.Write(pad); err != nil {
				return true
			}
		}
		io.WriteString(w, `]}`)
		return true
	})
}

// silent never answers: the run's deadline must end it.
func silent(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
	rig.env["RECON_TIMEOUT"] = "1500ms"
	done := t.Context()
	rig.onFront(func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-done.Done():
		case <-time.After(30 * time.Second):
		}
		return true
	})
}

// redirect makes Elido answer status towards the server elsewhere.
func redirect(status int) func(*testing.T, *faultRig, context.Context, context.CancelFunc) {
	return func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
		rig.elido.SetFaults(elidotest.Fault{Kind: elidotest.Redirect, Status: status, Location: rig.elsewhere.URL + "/v1"})
	}
}

func redirectTo(base string, status int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+"/landed", status)
	}
}

// nothingElsewhere checks that a redirect to another origin was followed
// by nothing at all: no credential, no alert, no ping.
func nothingElsewhere(t *testing.T, rig *faultRig, _ report.Report) {
	if got := rig.elsewhere.exchanges(); len(got) > 0 {
		t.Errorf("the redirect target received %d requests, first %s %s", len(got), got[0].method, got[0].url)
	}
}

// noAlert checks that nothing reached Slack.
func noAlert(t *testing.T, rig *faultRig, _ report.Report) {
	if got := rig.hook.exchanges(); len(got) > 0 {
		t.Errorf("Slack got %d posts after SIGTERM", len(got))
	}
}

// holdUntil answers only once the run is stopped (or the test ends, or a
// bound passes), as a server that hangs while the job is posting.
func holdUntil(t *testing.T, ctx context.Context) func(w http.ResponseWriter, r *http.Request) {
	done := t.Context()
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-ctx.Done():
		case <-done.Done():
		case <-time.After(20 * time.Second):
		}
		http.Error(w, "stopped", http.StatusServiceUnavailable)
	}
}

// holdHealthcheck holds the /start ping until the run is stopped.
func (rig *faultRig) holdHealthcheck() {
	done := rig.t.Context()
	rig.health.handle = func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/start") {
			select {
			case <-r.Context().Done():
			case <-done.Done():
			case <-time.After(5 * time.Second):
			}
		}
		io.WriteString(w, "ok")
	}
}

// sleeping returns a channel closed once one of the run's store
// connections (found by its application_name) sits in pg_sleep.
func (rig *faultRig) sleeping(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	app := "clickrecon-fault-" + rig.env["ELIDO_WORKSPACE_ID"]
	go func() {
		db, err := rig.admin()
		if err != nil {
			return
		}
		defer db.Close()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var n int
			if db.GetContext(ctx, &n, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep%' AND state = 'active'`, app) == nil && n > 0 {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return ch
}

// terminateMidQuery kills each of the run's store connections (found by
// their application_name) while it runs a count, from outside, as a
// failover or an administrator would: the store dies mid-run, every time
// it is asked. The count sleeps until it is killed, so the kill always
// lands mid-query; the watch ends with the test, or after a bound.
func terminateMidQuery(t *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
	customQuery(t, rig, `-- test: a count that waits to be killed
SELECT link_id, count(*) AS clicks FROM clicks, (SELECT pg_sleep(30)) AS slow
WHERE ts >= :from AND ts < :to GROUP BY link_id`)
	app := "clickrecon-fault-" + rig.env["ELIDO_WORKSPACE_ID"]
	db, err := rig.admin()
	if err != nil {
		t.Fatal(err)
	}
	done := t.Context()
	killed := make(chan struct{})
	t.Cleanup(func() { <-killed; db.Close() })
	go func() {
		defer close(killed)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		bound := time.After(20 * time.Second)
		for {
			db.ExecContext(done, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep(30)%'`, app)
			select {
			case <-done.Done():
				return
			case <-bound:
				return
			case <-tick.C:
			}
		}
	}()
}

// admin opens a connection of its own to the store's database, under an
// application_name the run does not use.
func (rig *faultRig) admin() (*sqlx.DB, error) {
	u, err := url.Parse(rig.env["STORE_DSN"])
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("application_name", "clickrecon-fault-admin")
	u.RawQuery = q.Encode()
	return sqlx.Open("postgres", u.String())
}

// The secret scan: the paths where a secret could slip out (an alert with
// a webhook and with a bot, an error body echoing the key, a redirect, a
// store that cannot be reached), each run with every secret set, and every
// output and every request of every fake scanned. The scan itself is
// checked first: a planted secret must be found.
func TestSecretScan(t *testing.T) {
	t.Run("scanner_finds_a_planted_secret", func(t *testing.T) {
		rig := newFaultRig(t, false)
		r := rig.run(t.Context(), "--date", "2026-10-25")
		r.stderr += "oops " + faultDBPassword
		rig.elsewhere.got = append(rig.elsewhere.got, exchange{url: "/x", header: http.Header{"Authorization": {"Bearer " + faultKey}}})
		got := rig.leaks(r)
		if len(got) != 2 {
			t.Errorf("planted two leaks, found %v", got)
		}
	})
	for _, tt := range []faultCase{
		{name: "alert_through_the_webhook", gaps: true, want: exitOK},
		{name: "alert_through_a_bot", gaps: true, want: exitOK, setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.useBot()
		}},
		{name: "error_body_echoes_the_key", gaps: true, want: exitIncomplete, unverifiable: true, setup: faults(elidotest.Fault{Kind: elidotest.EchoAuthorization, Status: 502})},
		{name: "redirect_to_another_origin", want: exitUsage, unverifiable: true, setup: redirect(http.StatusTemporaryRedirect)},
		{name: "store_refuses_the_connection", want: exitIncomplete, unverifiable: true, setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
			rig.env["STORE_DSN"] = "postgres://recon:" + faultDBPassword + "@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=2"
		}},
		// A password of one letter is hidden where it stands in the DSN,
		// and the error's words, full of that letter, are kept whole.
		{name: "store_refuses_a_one_letter_password", want: exitIncomplete, unverifiable: true, text: "connect: connection refused",
			setup: func(_ *testing.T, rig *faultRig, _ context.Context, _ context.CancelFunc) {
				rig.env["STORE_DSN"] = "postgres://recon:e@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=2"
			},
			check: func(t *testing.T, _ *faultRig, rep report.Report) {
				for _, d := range rep.Days {
					if strings.Contains(d.Reason, ":e@") {
						t.Errorf("%s's reason shows the password: %s", d.Date, d.Reason)
					}
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) { runFault(t, tt) })
	}
}

// TestFaultSuite runs every fault of RELIABILITY.md's matrix through
// clickrecon run.
func TestFaultSuite(t *testing.T) {
	// After every row (parallel rows end before the cleanup runs): the
	// figures RELIABILITY.md quotes, TestSecretScan's rows included when
	// it ran first.
	t.Cleanup(func() {
		faultStats.mu.Lock()
		defer faultStats.mu.Unlock()
		t.Logf("fault suite: faults tried %d, survived %d, false gaps %d, secrets leaked %d",
			faultStats.tried, faultStats.survived, faultStats.falseGaps, faultStats.leaks)
	})
	for _, tt := range faultCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each row has its own fakes, schema and workspace
			runFault(t, tt)
		})
	}
}

// tenGapDays is Elido's view and the store's daily counters of
// 2026-11-01..10: every day lost a few clicks of lnk_a, the 7th 157
// (graded fail).
func tenGapDays() ([]elidotest.Click, map[string]int64) {
	var api []elidotest.Click
	daily := map[string]int64{}
	for i := 1; i <= 10; i++ {
		day := fmt.Sprintf("2026-11-%02d", i)
		noon := utc(day + "T11:00:00Z")
		for k := 0; k < 200; k++ {
			api = append(api, elidotest.Click{TS: noon.Add(time.Duration(k) * time.Second), LinkID: "lnk_a", CountryCode: "PL"})
		}
		daily[day] = int64(200 - i) // small gaps, graded warn
	}
	daily["2026-11-07"] = 200 - 157 // the worst: beyond RECON_FAIL_ABS
	return api, daily
}

// With a budget for one day, the drill-down reads the worst day (graded
// fail, the largest gap), not the first in date order.
func TestDrilldownBudgetGoesToTheWorstDay(t *testing.T) {
	api, daily := tenGapDays()
	f := newFixture(t, "sqlite", api, nil)
	f.env["STORE_DSN"] = buildDailyStore(t, "postgres", daily)
	f.env["STORE_PRESET"] = "daily"
	f.env["RECON_DRILLDOWN_MAX_REQUESTS"] = "3" // links, countries, hours of one day
	r := f.run("--from", "2026-11-01", "--to", "2026-11-10")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	var drilled []string
	for _, l := range got.Links {
		drilled = append(drilled, fmt.Sprintf("%s %s %+d", l.Date, l.LinkID, l.Delta))
	}
	if want := []string{"2026-11-07 lnk_a -157"}; strings.Join(drilled, ",") != strings.Join(want, ",") {
		t.Errorf("links read %v, want %v: the budget must go to the worst day first", drilled, want)
	}
	if got.Drilldown.Requests != 3 {
		t.Errorf("drill-down %+v, want 3 requests", got.Drilldown)
	}
}

// The one-by-one fallback asks each link's series over every day that
// differs, though the days are drilled worst first, not in date order.
func TestDrilldownFallbackSpansEveryGapDay(t *testing.T) {
	api, daily := tenGapDays()
	f := newFixture(t, "sqlite", api, nil)
	f.env["STORE_DSN"] = buildDailyStore(t, "postgres", daily)
	f.env["STORE_PRESET"] = "daily"
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"})
	r := f.run("--from", "2026-11-01", "--to", "2026-11-10")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	if len(got.Links) != 10 || got.Drilldown.Mode != "fallback" {
		t.Errorf("drill-down %+v with %d link rows, want the fallback and one row a day:\n%s",
			got.Drilldown, len(got.Links), findingText(got.Findings, "drilldown_incomplete"))
	}
}

// Store failures through the real entry point: what a retry cannot mend
// exits 2, what it may mend exits 3, and neither is ever a gap.
func TestStoreExitCodes(t *testing.T) {
	notADB := filepath.Join(t.TempDir(), "clicks.db")
	if err := os.WriteFile(notADB, bytes.Repeat([]byte("not a database\n"), 200), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dsn string
		want      int
	}{
		{"sqlite_file_not_a_database", "sqlite:" + notADB, exitUsage},
		{"bad_sslmode", "postgres://postgres@127.0.0.1:5432/test?sslmode=bogus", exitUsage},
		{"port_out_of_range", "postgres://postgres@127.0.0.1:99999/test?sslmode=disable", exitUsage},
		{"port_not_a_number", "postgres://postgres@127.0.0.1:pg/test?sslmode=disable", exitUsage},
		{"connection_refused", "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", exitIncomplete},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			srv := elidotest.NewServer(testWorkspace, testKey, api)
			defer srv.Close()
			reports := filepath.Join(t.TempDir(), "reports")
			env := envconfig.MapLookuper(map[string]string{
				"ELIDO_API_KEY": testKey, "ELIDO_WORKSPACE_ID": testWorkspace, "ELIDO_API_BASE": srv.URL(),
				"ELIDO_RATE_LIMIT": "6000", "STORE_DSN": tt.dsn, "RECON_TZ": "Europe/Warsaw",
				"RECON_REPORT_DIR": reports, "RECON_TIMEOUT": "20s",
			})
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"run", "--date", "2026-10-25"}, env, &stdout, &stderr)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", code, tt.want, lastLines(stderr.String(), 10))
			}
			if tt.want == exitUsage && !strings.Contains(stderr.String(), "STORE_DSN") && !strings.Contains(stderr.String(), notADB) {
				t.Errorf("the message names neither STORE_DSN nor the file:\n%s", lastLines(stderr.String(), 5))
			}
			paths, _ := filepath.Glob(filepath.Join(reports, "*", "report.json"))
			for _, p := range paths {
				b, _ := os.ReadFile(p)
				var rep report.Report
				if err := json.Unmarshal(b, &rep); err != nil {
					t.Fatal(err)
				}
				for _, d := range rep.Days {
					if d.IsGap() {
						t.Errorf("%s is %s: a store failure became a gap", d.Date, d.Status)
					}
				}
			}
		})
	}
}

// RELIABILITY.md names real tests: every `package TestName[/row]` in it is
// a test (or fuzz target) of that package, every row a case of it, and
// every row of the fault suite is in the matrix.
func TestReliabilityMatrixNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "RELIABILITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`([a-z0-9/]+) ((?:Test|Fuzz)[A-Za-z0-9_]+)(?:/([a-z0-9_]+))?`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 50 {
		t.Fatalf("found %d test names in RELIABILITY.md; the pattern no longer reads it", len(names))
	}
	sources := map[string]string{}
	for _, m := range names {
		pkg, fn, row := m[1], m[2], m[3]
		src, ok := sources[pkg]
		if !ok {
			files, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
			var b strings.Builder
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(data)
			}
			src = b.String()
			sources[pkg] = src
		}
		if !strings.Contains(src, "func "+fn+"(") {
			t.Errorf("RELIABILITY.md names %s %s: no such test", pkg, fn)
		}
		if row != "" && !strings.Contains(src, strconv.Quote(row)) {
			t.Errorf("RELIABILITY.md names %s %s/%s: no such row", pkg, fn, row)
		}
	}
	for _, tt := range faultCases() {
		if want := "`cmd/clickrecon TestFaultSuite/" + tt.name + "`"; !strings.Contains(string(doc), want) {
			t.Errorf("the fault suite's row %s is not in RELIABILITY.md", tt.name)
		}
	}
}
