package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

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
func setup(t *testing.T, tr transport, edit ...func(*Config)) (*fakeSlack, *Notifier, *slacktest.Sleeps, *bytes.Buffer) {
	t.Helper()
	f := newFakeSlack(t)
	cfg := tr.cfg(f)
	for _, e := range edit {
		e(&cfg)
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	c := &slacktest.Sleeps{}
	nt, err := New(cfg, WithClock(time.Now, c.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	return f, nt, c, &logs
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

func TestPostRetriesAfter429(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, c, logs := setup(t, tr)
			f.fail(tr.post, fault{status: http.StatusTooManyRequests, retryAfter: "7"})
			if _, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]time.Duration{7 * time.Second}, c.Slept()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := len(f.got(tr.post)); got != 2 {
				t.Errorf("%d requests, want 2 (429, then the post)", got)
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Errorf("the retry is not logged: %s", logs)
			}
			noSecret(t, "log", logs.String())
		})
	}
}

// A Web API 5xx on a bot's post is ambiguous (Slack may have posted), so
// it is not retried: the post fails. A webhook's 5xx is Slack's answer
// that it did not post: it is retried, 4 attempts in all. The error names
// no secret.
func TestPostIsNotRetriedAfter5xx(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, c, logs := setup(t, tr)
			f.fail(tr.post, fault{status: http.StatusInternalServerError, always: true})
			_, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
			if err == nil {
				t.Fatal("Post succeeded against a Slack that always answers 500")
			}
			attempts, said := 1, "not retried"
			if tr.name == "webhook" {
				attempts, said = 4, "gave up after 4 attempts"
			}
			if !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), said) {
				t.Errorf("error %q does not say what Slack answered", err)
			}
			if got := len(f.got(tr.post)); got != attempts {
				t.Errorf("%d attempts, want %d", got, attempts)
			}
			if got := len(c.Slept()); got != attempts-1 {
				t.Errorf("waited %v, want %d waits", c.Slept(), attempts-1)
			}
			noSecret(t, "error", err.Error())
			noSecret(t, "log", logs.String())
		})
	}
}

// A connection refused never reached Slack: it is retried with backoff,
// then fails without naming the URL.
func TestPostRetriesARefusedConnection(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			dead := httptest.NewServer(http.NotFoundHandler())
			dead.Close()
			f := &fakeSlack{srv: dead}
			cfg := tr.cfg(f)
			cfg.HTTPClient = nil
			var logs bytes.Buffer
			cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			c := &slacktest.Sleeps{}
			nt, err := New(cfg, WithClock(time.Now, c.Sleep))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
			if err == nil {
				t.Fatal("Post succeeded against a closed port")
			}
			if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, c.Slept()); diff != "" {
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

func TestPostGivesUpWhenRetryAfterPassesTheDeadline(t *testing.T) {
	f, nt, c, _ := setup(t, webhook)
	f.fail(testHookPath, fault{status: http.StatusTooManyRequests, retryAfter: "120"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := nt.Post(ctx, Render(oneDayGap(), nil), PostMark{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one that wraps context.DeadlineExceeded", err)
	}
	if len(c.Slept()) != 0 {
		t.Errorf("waited %v for a retry that could not happen", c.Slept())
	}
}

// chat.update repeats nothing if sent twice, so a 5xx on it is retried.
func TestUpdateIsRetriedAfter5xx(t *testing.T) {
	f, nt, c, _ := setup(t, bot)
	ctx := context.Background()
	ch, ts, err := nt.Post(ctx, Render(oneDayGap(), nil), PostMark{})
	if err != nil {
		t.Fatal(err)
	}
	f.fail("/api/chat.update", fault{status: http.StatusBadGateway})
	f.fail("/api/chat.update", fault{slackErr: "internal_error"})
	if err := nt.Update(ctx, ch, ts, RenderUpdate(heal())); err != nil {
		t.Fatal(err)
	}
	if got := len(f.got("/api/chat.update")); got != 3 {
		t.Errorf("%d chat.update attempts, want 3", got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, c.Slept()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// A message that can no longer be edited is told apart, so that its news
// is posted instead; another failure is not.
func TestUpdateOfADeletedMessageIsGone(t *testing.T) {
	f, nt, _, _ := setup(t, bot)
	ctx := context.Background()
	ch, ts, err := nt.Post(ctx, Render(oneDayGap(), nil), PostMark{})
	if err != nil {
		t.Fatal(err)
	}
	f.fail("/api/chat.update", fault{slackErr: "message_not_found"})
	if err := nt.Update(ctx, ch, ts, RenderUpdate(heal())); !Gone(err) {
		t.Errorf("Update of a deleted message = %v, want one Gone reports", err)
	}
	f.fail("/api/chat.update", fault{slackErr: "invalid_auth"})
	if err := nt.Update(ctx, ch, ts, RenderUpdate(heal())); err == nil || Gone(err) {
		t.Errorf("Update with a revoked token = %v, want an error Gone does not report", err)
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
	if nt.Always() {
		t.Error("a nil Notifier says SLACK_NOTIFY=always")
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
			_, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
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
	if _, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{}); err == nil || errors.Is(err, ErrMisconfigured) {
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
