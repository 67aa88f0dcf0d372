package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// clock records the waits a notifier asks for instead of waiting.
type clock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	return ctx.Err()
}

func (c *clock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// transport is one way to reach the fake Slack.
type transport struct {
	name string
	cfg  func(f *fakeSlack) Config
	// post is the path a new message arrives on.
	post string
}

var (
	webhook = transport{name: "webhook", post: testHookPath, cfg: func(f *fakeSlack) Config {
		return Config{WebhookURL: f.webhookURL(), HTTPClient: f.srv.Client()}
	}}
	bot = transport{name: "bot", post: "/api/chat.postMessage", cfg: func(f *fakeSlack) Config {
		return Config{BotToken: testToken, Channel: "#recon-alerts", APIURL: f.apiURL(), HTTPClient: f.srv.Client()}
	}}
	transports = []transport{webhook, bot}
)

// setup returns a fake Slack and a notifier for it, with a fake clock and
// a log buffer.
func setup(t *testing.T, tr transport, edit ...func(*Config)) (*fakeSlack, *Notifier, *clock, *bytes.Buffer) {
	t.Helper()
	f := newFakeSlack(t)
	cfg := tr.cfg(f)
	for _, e := range edit {
		e(&cfg)
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	c := &clock{}
	nt, err := New(cfg, WithClock(time.Now, c.sleep))
	if err != nil {
		t.Fatal(err)
	}
	return f, nt, c, &logs
}

// newHistory returns a migrated SQLite history (history's own tests run on
// PostgreSQL as well).
func newHistory(t *testing.T) *history.History {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	ctx := context.Background()
	if _, err := history.Migrate(ctx, dbtest.Parsed(t, history.ParseMigrateDSN, dsn)); err != nil {
		t.Fatal(err)
	}
	h, err := history.Open(ctx, dbtest.Parsed(t, history.ParseDSN, dsn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// noSecret fails t if s holds the webhook URL, its path or the token.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{testHookPath, "s3cretHookPath", testToken, "s3cretTokenValue"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s shows a secret (%s): %s", what, secret, s)
		}
	}
}

var csv = []byte("date,link_id,api,local,delta,status\n2026-11-25,,1200,1195,-5,missing\n")

func TestSendPostsOneAlertForAGap(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tr)
			rep := oneDayGap()
			out, err := nt.Send(context.Background(), rep, csv, nil)
			if err != nil {
				t.Fatal(err)
			}
			posts := f.got(tr.post)
			if len(posts) != 1 {
				t.Fatalf("%d messages posted, want 1", len(posts))
			}
			want := Render(rep, nil)
			wantJSON, _ := json.Marshal(want.Blocks)
			gotJSON, _ := json.Marshal(blocksOf(t, posts[0]))
			if diff := cmp.Diff(string(wantJSON), string(gotJSON)); diff != "" {
				t.Errorf("posted blocks differ from Render (-want +got):\n%s", diff)
			}
			if out.Posted != history.KindAlert || len(out.New) != 1 || out.New[0] != "2026-11-25" {
				t.Errorf("Outcome = %+v", out)
			}
		})
	}
}

// With a bot token the alert goes to the channel, and the report's CSV
// into its thread through the files upload v2 flow.
func TestSendAttachesTheCSVInTheAlertsThread(t *testing.T) {
	f, nt, _, _ := setup(t, bot)
	rep := oneDayGap()
	out, err := nt.Send(context.Background(), rep, csv, nil)
	if err != nil {
		t.Fatal(err)
	}
	posts := f.got("/api/chat.postMessage")
	if len(posts) != 1 {
		t.Fatalf("%d messages posted, want 1", len(posts))
	}
	if got := posts[0].form.Get("channel"); got != "#recon-alerts" {
		t.Errorf("posted to %q", got)
	}
	if posts[0].form.Get("text") == "" {
		t.Error("no fallback text")
	}
	urls := f.got("/api/files.getUploadURLExternal")
	if len(urls) != 1 || urls[0].form.Get("filename") != "clickrecon-"+rep.RunKey+".csv" || urls[0].form.Get("length") != strconv.Itoa(len(csv)) {
		t.Errorf("files.getUploadURLExternal: %+v", urls)
	}
	uploads := f.got("/upload/F0CSV")
	if len(uploads) != 1 || !bytes.Equal(uploads[0].file, csv) {
		t.Fatalf("uploads: %+v, want the CSV once", uploads)
	}
	completes := f.got("/api/files.completeUploadExternal")
	if len(completes) != 1 {
		t.Fatalf("%d files.completeUploadExternal, want 1", len(completes))
	}
	c := completes[0].form
	if c.Get("channel_id") != testChannelID || c.Get("thread_ts") != out.TS || out.TS == "" {
		t.Errorf("completed into channel %q thread %q, want %q thread %q", c.Get("channel_id"), c.Get("thread_ts"), testChannelID, out.TS)
	}
	if !out.CSVAttached || out.Channel != testChannelID {
		t.Errorf("Outcome = %+v", out)
	}
}

// A CSV that cannot be attached does not fail the send: the alert is out,
// and a retried run must not post it again.
func TestSendWarnsWhenTheCSVCannotBeAttached(t *testing.T) {
	f, nt, _, _ := setup(t, bot)
	f.fail("/api/files.completeUploadExternal", fault{status: 500, always: true})
	out, err := nt.Send(context.Background(), oneDayGap(), csv, nil)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if out.CSVAttached || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "report CSV not attached") {
		t.Errorf("Outcome = %+v", out)
	}
	// Completing an upload shares the file: it is not repeated after a 500.
	if got := len(f.got("/api/files.completeUploadExternal")); got != 1 {
		t.Errorf("files.completeUploadExternal called %d times, want 1", got)
	}
	noSecret(t, "warning", strings.Join(out.Warnings, " "))
}

func TestSendRetriesAfter429(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, c, logs := setup(t, tr)
			f.fail(tr.post, fault{status: http.StatusTooManyRequests, retryAfter: "7"})
			out, err := nt.Send(context.Background(), oneDayGap(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]time.Duration{7 * time.Second}, c.slept()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := len(f.got(tr.post)); got != 2 {
				t.Errorf("%d requests, want 2 (429, then the post)", got)
			}
			if out.Posted != history.KindAlert {
				t.Errorf("Outcome = %+v", out)
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Errorf("the retry is not logged: %s", logs)
			}
			noSecret(t, "log", logs.String())
		})
	}
}

// A 5xx on a post is ambiguous (Slack may have posted), so it is not
// retried: the send fails and the error names no secret.
func TestSendDoesNotRetryAPostAfter5xx(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, c, logs := setup(t, tr)
			f.fail(tr.post, fault{status: http.StatusInternalServerError, always: true})
			_, err := nt.Send(context.Background(), oneDayGap(), csv, nil)
			if err == nil {
				t.Fatal("Send succeeded against a Slack that always answers 500")
			}
			if !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "not retried") {
				t.Errorf("error %q does not say what Slack answered", err)
			}
			if got := len(f.got(tr.post)); got != 1 {
				t.Errorf("%d attempts, want 1", got)
			}
			if len(c.slept()) != 0 {
				t.Errorf("waited %v", c.slept())
			}
			noSecret(t, "error", err.Error())
			noSecret(t, "log", logs.String())
		})
	}
}

// A connection refused never reached Slack: it is retried with backoff,
// then fails without naming the URL.
func TestSendRetriesARefusedConnection(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			dead := httptest.NewServer(http.NotFoundHandler())
			dead.Close()
			f := &fakeSlack{srv: dead}
			cfg := tr.cfg(f)
			cfg.HTTPClient = nil
			var logs bytes.Buffer
			cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			c := &clock{}
			nt, err := New(cfg, WithClock(time.Now, c.sleep))
			if err != nil {
				t.Fatal(err)
			}
			_, err = nt.Send(context.Background(), oneDayGap(), nil, nil)
			if err == nil {
				t.Fatal("Send succeeded against a closed port")
			}
			if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, c.slept()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), "gave up after 4 attempts") {
				t.Errorf("error %q does not say it gave up", err)
			}
			noSecret(t, "error", err.Error())
			noSecret(t, "log", logs.String())
		})
	}
}

func TestSendGivesUpWhenRetryAfterPassesTheDeadline(t *testing.T) {
	f, nt, c, _ := setup(t, webhook)
	f.fail(testHookPath, fault{status: http.StatusTooManyRequests, retryAfter: "120"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := nt.Send(ctx, oneDayGap(), nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one that wraps context.DeadlineExceeded", err)
	}
	if len(c.slept()) != 0 {
		t.Errorf("waited %v for a retry that could not happen", c.slept())
	}
}

// chat.update repeats nothing if sent twice, so a 5xx on it is retried.
func TestUpdateIsRetriedAfter5xx(t *testing.T) {
	f, nt, c, _ := setup(t, bot)
	h := newHistory(t)
	ctx := context.Background()
	if _, err := nt.Send(ctx, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	f.fail("/api/chat.update", fault{status: http.StatusBadGateway})
	f.fail("/api/chat.update", fault{slackErr: "internal_error"})
	out, err := nt.Send(ctx, repaired(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.got("/api/chat.update")); got != 3 {
		t.Errorf("%d chat.update attempts, want 3", got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, c.slept()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if len(out.Updated) != 1 {
		t.Errorf("Outcome = %+v", out)
	}
}

// repaired is oneDayGap after the poller backfilled 2026-11-25, a day
// later: the window moved on by one day.
func repaired() report.Report {
	r := newReport(
		day("2026-11-25", 1200, 1200, "match", "ok"),
		day("2026-11-26", 41, 41, "match", "ok"),
		provisional("2026-11-27", 30, 30),
	)
	r.RunKey = "20261125_20261127_77aa12bb34cc"
	r.GeneratedAt = time.Date(2026, 11, 28, 3, 0, 9, 0, time.UTC)
	return r
}

func TestRerunWithHistoryPostsNothingNew(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			if _, err := nt.Send(ctx, oneDayGap(), csv, h); err != nil {
				t.Fatal(err)
			}
			before := f.total()
			out, err := nt.Send(ctx, oneDayGap(), csv, h)
			if err != nil {
				t.Fatal(err)
			}
			if after := f.total(); after != before {
				t.Errorf("the rerun made %d requests, want none", after-before)
			}
			want := Outcome{Transport: tr.name, Unchanged: []string{"2026-11-25"}, Skipped: "already alerted with the same numbers"}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("Outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// History says 2026-11-25 was alerted missing -5; the store was repaired
// and the day matches now. With a bot token the alert is edited in place;
// with a webhook a short "healed" message follows. Then it stays quiet.
func TestHealAfterTheStoreIsRepaired(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := nt.Send(ctx, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			out, err := nt.Send(ctx, repaired(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2026-11-25"}, out.Healed); diff != "" {
				t.Errorf("healed (-want +got):\n%s", diff)
			}
			wantBlocks, _ := json.Marshal(RenderUpdate(heal()).Blocks)
			var got received
			switch tr.name {
			case "bot":
				if n := len(f.got(tr.post)); n != 1 {
					t.Errorf("%d messages posted, want the first alert only", n)
				}
				updates := f.got("/api/chat.update")
				if len(updates) != 1 {
					t.Fatalf("%d chat.update, want 1", len(updates))
				}
				got = updates[0]
				if got.form.Get("ts") != first.TS || got.form.Get("channel") != first.Channel {
					t.Errorf("updated %s/%s, want the alert %s/%s", got.form.Get("channel"), got.form.Get("ts"), first.Channel, first.TS)
				}
				if diff := cmp.Diff([]string{first.Channel + "/" + first.TS}, out.Updated); diff != "" {
					t.Errorf("Outcome.Updated (-want +got):\n%s", diff)
				}
			case "webhook":
				posts := f.got(tr.post)
				if len(posts) != 2 {
					t.Fatalf("%d messages posted, want the alert and a healed message", len(posts))
				}
				got = posts[1]
				if out.Posted != history.KindHealed {
					t.Errorf("Outcome.Posted = %q, want healed", out.Posted)
				}
			}
			gotBlocks, _ := json.Marshal(blocksOf(t, got))
			if diff := cmp.Diff(string(wantBlocks), string(gotBlocks)); diff != "" {
				t.Errorf("the heal differs from heal.json.golden's message (-want +got):\n%s", diff)
			}

			before := f.total()
			if out, err := nt.Send(ctx, repaired(), nil, h); err != nil || f.total() != before {
				t.Errorf("a rerun after the heal: %d requests, %+v, %v; want none", f.total()-before, out, err)
			}
		})
	}
}

// Late data shrank the gap from -5 to -2: the alert is updated, not
// repeated; then the same numbers again are news to nobody.
func TestChangedNumbersUpdateTheAlert(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := nt.Send(ctx, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			later := oneDayGap()
			later.Days[1] = day("2026-11-25", 1200, 1198, "missing", "warn")
			out, err := nt.Send(ctx, later, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2026-11-25"}, out.Changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
			var got received
			if tr.name == "bot" {
				updates := f.got("/api/chat.update")
				if len(updates) != 1 || updates[0].form.Get("ts") != first.TS {
					t.Fatalf("chat.update: %+v, want one of %s", updates, first.TS)
				}
				got = updates[0]
			} else {
				posts := f.got(tr.post)
				if len(posts) != 2 {
					t.Fatalf("%d posts, want the alert and an update", len(posts))
				}
				got = posts[1]
			}
			if h := headerOf(t, got); !strings.HasPrefix(h, "🔄 Updated") {
				t.Errorf("header %q", h)
			}
			before := f.total()
			if _, err := nt.Send(ctx, later, nil, h); err != nil || f.total() != before {
				t.Errorf("same numbers again: %d requests, %v; want none", f.total()-before, err)
			}
		})
	}
}

// A run with a new gap and a heal posts one alert that reports both, and
// with a bot token also marks the earlier alert healed.
func TestNewGapAndHealInOneRun(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := nt.Send(ctx, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			next := repaired()
			next.Days[1] = day("2026-11-26", 41, 20, "missing", "fail")
			out, err := nt.Send(ctx, next, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			posts := f.got(tr.post)
			if len(posts) != 2 {
				t.Fatalf("%d posts, want 2 alerts", len(posts))
			}
			if !strings.Contains(string(mustJSON(t, blocksOf(t, posts[1]))), "Since the last alert") {
				t.Error("the second alert does not report the heal")
			}
			if tr.name == "bot" {
				updates := f.got("/api/chat.update")
				if len(updates) != 1 || updates[0].form.Get("ts") != first.TS {
					t.Errorf("chat.update: %d, want the first alert marked healed", len(updates))
				} else if h := headerOf(t, updates[0]); !strings.HasPrefix(h, "✅ Healed") {
					t.Errorf("the first alert became %q", h)
				}
			}
			if diff := cmp.Diff([]string{"2026-11-26"}, out.New); diff != "" {
				t.Errorf("new (-want +got):\n%s", diff)
			}
			// The heal was told; the new gap was alerted: a rerun is quiet.
			before := f.total()
			if _, err := nt.Send(ctx, next, nil, h); err != nil || f.total() != before {
				t.Errorf("rerun: %d requests, %v; want none", f.total()-before, err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The alert was deleted: its heal is posted as a new message.
func TestHealOfADeletedAlertIsPosted(t *testing.T) {
	f, nt, _, _ := setup(t, bot)
	h := newHistory(t)
	ctx := context.Background()
	if _, err := nt.Send(ctx, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	f.fail("/api/chat.update", fault{slackErr: "message_not_found"})
	out, err := nt.Send(ctx, repaired(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	posts := f.got("/api/chat.postMessage")
	if len(posts) != 2 || !strings.HasPrefix(headerOf(t, posts[1]), "✅ Healed") {
		t.Fatalf("%d posts; want the alert, then the heal", len(posts))
	}
	if out.Posted != history.KindHealed || len(out.Updated) != 0 {
		t.Errorf("Outcome = %+v", out)
	}
}

// A failed heal is not recorded, so the next run tries again.
func TestAFailedHealIsRetriedByTheNextRun(t *testing.T) {
	f, nt, _, _ := setup(t, webhook)
	h := newHistory(t)
	ctx := context.Background()
	if _, err := nt.Send(ctx, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	f.fail(testHookPath, fault{status: 503})
	if _, err := nt.Send(ctx, repaired(), nil, h); err == nil {
		t.Fatal("Send succeeded against a 503")
	}
	out, err := nt.Send(ctx, repaired(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if out.Posted != history.KindHealed {
		t.Errorf("the next run: Outcome = %+v, want the heal posted", out)
	}
}

func TestWithoutHistoryEveryRunAlerts(t *testing.T) {
	f, nt, _, _ := setup(t, webhook)
	for range 2 {
		if _, err := nt.Send(context.Background(), oneDayGap(), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.got(testHookPath)); got != 2 {
		t.Errorf("%d posts, want 2", got)
	}
}

// Provisional and unverifiable days are never alerted as gaps, even when
// their counts differ; SLACK_NOTIFY=always posts anyway and counts them.
func TestProvisionalAndUnverifiableDaysAreNotGaps(t *testing.T) {
	rep := newReport(
		day("2026-11-24", 100, 100, "match", "ok"),
		unverifiable("2026-11-25", 80),
		provisional("2026-11-26", 40, 10),
	)
	f, nt, _, _ := setup(t, webhook)
	out, err := nt.Send(context.Background(), rep, nil, newHistory(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.total() != 0 || out.Skipped != "no settled gap" {
		t.Errorf("%d requests, Outcome %+v; want nothing sent", f.total(), out)
	}

	f, nt, _, _ = setup(t, webhook, func(c *Config) { c.Notify = NotifyAlways })
	if _, err := nt.Send(context.Background(), rep, nil, newHistory(t)); err != nil {
		t.Fatal(err)
	}
	posts := f.got(testHookPath)
	if len(posts) != 1 {
		t.Fatalf("%d posts with SLACK_NOTIFY=always, want 1", len(posts))
	}
	body := string(posts[0].hook)
	if !strings.Contains(body, "1 provisional · 1 unverifiable") || !strings.Contains(headerOf(t, posts[0]), "not fully verified") {
		t.Errorf("the message does not count them: %s", body)
	}
}

// A day healed earlier and missing again is a new gap.
func TestAGapThatReturnsIsAlertedAgain(t *testing.T) {
	f, nt, _, _ := setup(t, webhook)
	h := newHistory(t)
	ctx := context.Background()
	for _, rep := range []report.Report{oneDayGap(), repaired(), oneDayGap()} {
		if _, err := nt.Send(ctx, rep, nil, h); err != nil {
			t.Fatal(err)
		}
	}
	posts := f.got(testHookPath)
	var headers []string
	for _, p := range posts {
		headers = append(headers, strings.SplitN(headerOf(t, p), ":", 2)[0])
	}
	want := []string{"🟠 Click gaps in workspace 48213", "✅ Healed", "🟠 Click gaps in workspace 48213"}
	if diff := cmp.Diff(want, headers); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestDecide(t *testing.T) {
	alerted := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5}
	healed := alerted
	healed.Healed = true
	tests := []struct {
		name  string
		day   report.Day
		prior map[string]history.Alert
		want  string
	}{
		{"gap_never_alerted_is_new", day("2026-11-25", 1200, 1195, "missing", "warn"), nil, "fresh"},
		{"same_numbers_are_not_news", day("2026-11-25", 1200, 1195, "missing", "fail"), map[string]history.Alert{"2026-11-25": alerted}, "same"},
		{"store_count_changed", day("2026-11-25", 1200, 1197, "missing", "warn"), map[string]history.Alert{"2026-11-25": alerted}, "changed"},
		{"elido_count_revised", day("2026-11-25", 1201, 1195, "missing", "warn"), map[string]history.Alert{"2026-11-25": alerted}, "changed"},
		{"missing_turned_surplus", day("2026-11-25", 1200, 1300, "surplus", "fail"), map[string]history.Alert{"2026-11-25": alerted}, "changed"},
		{"late_click_heals", day("2026-11-25", 1200, 1200, "match", "ok"), map[string]history.Alert{"2026-11-25": alerted}, "healed"},
		{"healed_day_stays_quiet", day("2026-11-25", 1200, 1200, "match", "ok"), map[string]history.Alert{"2026-11-25": healed}, ""},
		{"healed_day_reopens", day("2026-11-25", 1200, 1195, "missing", "warn"), map[string]history.Alert{"2026-11-25": healed}, "fresh"},
		{"match_never_alerted", day("2026-11-25", 1200, 1200, "match", "ok"), nil, ""},
		{"unverifiable_heals_nothing", unverifiable("2026-11-25", 1200), map[string]history.Alert{"2026-11-25": alerted}, ""},
		{"provisional_gap_is_not_alerted", provisional("2026-11-25", 1200, 10), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decide(newReport(tt.day), tt.prior)
			var got []string
			for name, n := range map[string]int{"fresh": len(p.fresh), "same": len(p.same), "changed": len(p.changed), "healed": len(p.healed)} {
				for range n {
					got = append(got, name)
				}
			}
			want := []string{}
			if tt.want != "" {
				want = []string{tt.want}
			}
			if diff := cmp.Diff(want, append([]string{}, got...)); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	hook := "https://hooks.slack.com" + testHookPath
	tests := []struct {
		name string
		cfg  Config
		want string // in the error; "" for none
	}{
		{"webhook", Config{WebhookURL: hook}, ""},
		{"bot", Config{BotToken: testToken, Channel: "C0ALERTS"}, ""},
		{"both", Config{WebhookURL: hook, BotToken: testToken, Channel: "C0ALERTS"}, "SLACK_WEBHOOK_URL and SLACK_BOT_TOKEN are both set"},
		{"token_without_channel", Config{BotToken: testToken}, "SLACK_CHANNEL is not"},
		{"channel_without_token", Config{Channel: "C0ALERTS"}, "SLACK_BOT_TOKEN is not"},
		{"channel_with_webhook", Config{WebhookURL: hook, Channel: "C0ALERTS"}, "unset SLACK_CHANNEL"},
		{"api_url_alone", Config{APIURL: "https://slack-gov.com/api/"}, "SLACK_BOT_TOKEN is not"},
		{"api_url_with_webhook", Config{WebhookURL: hook, APIURL: "https://slack-gov.com/api/"}, "SLACK_API_URL"},
		{"bad_webhook", Config{WebhookURL: "hooks.slack.com" + testHookPath}, "SLACK_WEBHOOK_URL is not a URL"},
		{"bad_api_url", Config{BotToken: testToken, Channel: "C0ALERTS", APIURL: "slack-gov.com"}, "SLACK_API_URL is not a URL"},
		{"token_with_newline", Config{BotToken: testToken + "\n", Channel: "C0ALERTS"}, "SLACK_BOT_TOKEN contains white space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nt, err := New(tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want == "" && nt == nil:
				t.Fatal("New returned no notifier")
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: err = %v, want one containing %q", err, tt.want)
			}
			if err != nil {
				noSecret(t, "error", err.Error())
			}
		})
	}
	nt, err := New(Config{Notify: NotifyAlways})
	if nt != nil || err != nil {
		t.Errorf("New without Slack = %v, %v; want nil, nil", nt, err)
	}
	out, err := nt.Send(context.Background(), oneDayGap(), nil, nil)
	if err != nil || out.Skipped == "" {
		t.Errorf("Send on a nil Notifier = %+v, %v", out, err)
	}
}

func TestConfigNeverPrintsItsSecrets(t *testing.T) {
	cfg := Config{WebhookURL: "https://hooks.slack.com" + testHookPath, BotToken: testToken}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "slack", cfg)
	for _, s := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%+v", cfg), strings.ReplaceAll(logs.String(), `\/`, "/")} {
		noSecret(t, "config", s)
	}
}

// A failure no retry can fix says what to do next.
func TestErrorsSayWhatToDo(t *testing.T) {
	tests := []struct {
		tr    transport
		fault fault
		want  string
	}{
		{webhook, fault{status: http.StatusNotFound}, "update SLACK_WEBHOOK_URL"},
		{bot, fault{slackErr: "not_in_channel"}, "invite the bot"},
		{bot, fault{slackErr: "invalid_auth"}, "SLACK_BOT_TOKEN is not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f, nt, _, _ := setup(t, tt.tr)
			f.fail(tt.tr.post, tt.fault)
			_, err := nt.Send(context.Background(), oneDayGap(), nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if got := len(f.got(tt.tr.post)); got != 1 {
				t.Errorf("%d attempts, want 1", got)
			}
			if !errors.Is(err, ErrMisconfigured) {
				t.Errorf("err = %v, want ErrMisconfigured: only the configuration can mend it", err)
			}
			noSecret(t, "error", err.Error())
		})
	}
	// A failure a retry may mend is not a configuration error.
	f, nt, _, _ := setup(t, webhook)
	f.fail(webhook.post, fault{status: http.StatusInternalServerError, always: true})
	if _, err := nt.Send(context.Background(), oneDayGap(), nil, nil); err == nil || errors.Is(err, ErrMisconfigured) {
		t.Errorf("500: err = %v, want one that is not ErrMisconfigured", err)
	}
}

func TestParseNotify(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{"", NotifyGaps, ""},
		{"gaps", NotifyGaps, ""},
		{"always", NotifyAlways, ""},
		{"sometimes", "", `SLACK_NOTIFY must be gaps or always, got "sometimes"`},
	} {
		got, err := ParseNotify(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("ParseNotify(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
