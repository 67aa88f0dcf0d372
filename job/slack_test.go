package job

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
)

// Secrets the fake Slack accepts. Tests check that neither ever shows in an
// error, a log line or an outcome.
const (
	testToken     = "xoxb-1234-5678-s3cretTokenValue"
	testHookPath  = "/services/T0000/B0000/s3cretHookPath"
	testChannelID = "C0ALERTS"
)

// fakeSlack is slacktest's Slack with this package's test token and
// channel.
type fakeSlack struct{ *slacktest.Server }

func newFakeSlack(t *testing.T) *fakeSlack {
	return &fakeSlack{slacktest.New(t, slacktest.WithToken(testToken), slacktest.WithChannel(testChannelID))}
}

func (f *fakeSlack) webhookURL() string { return f.URL + testHookPath }
func (f *fakeSlack) apiURL() string     { return f.URL + "/api/" }

// got returns the requests received on path, in order.
func (f *fakeSlack) got(path string) []slacktest.Request { return f.Requests(path) }

func (f *fakeSlack) total() int { return len(f.Requests("")) }

// transport is one way to reach the fake Slack.
type transport struct {
	name string
	cfg  func(f *fakeSlack) alert.Config
	// post is the path a new message arrives on.
	post string
}

var (
	webhook = transport{name: "webhook", post: testHookPath, cfg: func(f *fakeSlack) alert.Config {
		return alert.Config{WebhookURL: f.webhookURL(), HTTPClient: f.Client()}
	}}
	bot = transport{name: "bot", post: "/api/chat.postMessage", cfg: func(f *fakeSlack) alert.Config {
		return alert.Config{BotToken: testToken, Channel: "#recon-alerts", APIURL: f.apiURL(), HTTPClient: f.Client()}
	}}
	transports = []transport{webhook, bot}
)

// setupSlack returns a fake Slack and a notifier for it, with a fake clock
// and a log buffer.
func setupSlack(t *testing.T, tr transport, edit ...func(*alert.Config)) (*fakeSlack, *alert.Notifier, *slacktest.Sleeps, *bytes.Buffer) {
	t.Helper()
	f := newFakeSlack(t)
	cfg := tr.cfg(f)
	for _, e := range edit {
		e(&cfg)
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	c := &slacktest.Sleeps{}
	nt, err := alert.New(cfg, alert.WithClock(time.Now, c.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	return f, nt, c, &logs
}

// send runs the gap alert stage for rep with nt, the history h (nil: none)
// and guard (none: the lock is held), as the end of a run does: read
// (recallAlerts), decide (planGaps), carry out (sendGaps).
func send(ctx context.Context, nt *alert.Notifier, rep report.Report, csv []byte, h *history.History, guard ...func(context.Context) error) (gapOutcome, error) {
	t := teller{slack: nt, history: h, guard: func(context.Context) error { return nil }, now: time.Now, log: slog.New(slog.DiscardHandler)}
	if len(guard) > 0 {
		t.guard = guard[0]
	}
	var facts alertFacts
	if h != nil {
		facts = recallAlerts(ctx, h, nt, t.guard, rep, nil, t.now())
	}
	return t.sendGaps(ctx, planGaps(rep, csv, facts, gapSettings{transport: nt.Transport(), always: nt.Always(), history: h != nil}))
}

// newHistory returns a migrated SQLite history of the test's own
// (history's own tests run on PostgreSQL and MySQL as well).
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
