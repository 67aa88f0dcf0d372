package alert

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

// hit is what a server got that could leak: the request's path, Referer,
// Authorization and body.
type hit struct {
	path, referer, authorization, body string
}

// hitServer records every request and answers it with h (200 "ok" when
// nil). As the other origin of a redirect it answers like Slack, so that
// a followed redirect would look like a success.
type hitServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newHitServer(t *testing.T, h http.HandlerFunc) *hitServer {
	t.Helper()
	s := &hitServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.hits = append(s.hits, hit{r.URL.Path, r.Header.Get("Referer"), r.Header.Get("Authorization"), string(b)})
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true,"channel":"C0ALERTS","ts":"1700000000.000001"}`)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hitServer) got() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

// TestWebhookRedirectIsAFailure: a webhook answering any 3xx did not
// post. The alert must not be reported posted (302 used to drop it while
// the run logged it as posted), nor forwarded (307 used to hand the alert
// and, in Referer, the webhook URL to the other host).
func TestWebhookRedirectIsAFailure(t *testing.T) {
	for _, tt := range []struct {
		name      string
		status    int
		sameHost  bool
		wantOther int
	}{
		{"302_to_another_host", http.StatusFound, false, 0},
		{"307_to_another_host", http.StatusTemporaryRedirect, false, 0},
		{"308_to_another_host", http.StatusPermanentRedirect, false, 0},
		{"301_within_the_host", http.StatusMovedPermanently, true, 0},
		{"307_within_the_host", http.StatusTemporaryRedirect, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			other := newHitServer(t, nil)
			hook := newHitServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != testHookPath {
					io.WriteString(w, "ok")
					return
				}
				target := other.URL + "/services/elsewhere"
				if tt.sameHost {
					target = "/services/elsewhere"
				}
				http.Redirect(w, r, target, tt.status)
			})
			var logs strings.Builder
			nt, err := New(Config{WebhookURL: hook.URL + testHookPath, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, WithClock(time.Now, (&slacktest.Sleeps{}).Sleep))
			if err != nil {
				t.Fatal(err)
			}
			_, ts, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
			if err == nil {
				t.Fatalf("Post succeeded against a webhook answering %d: ts %q", tt.status, ts)
			}
			if !errors.Is(err, safehttp.ErrRedirect) || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("error %q does not say Slack redirected", err)
			}
			if errors.Is(err, ErrUnconfirmed) {
				t.Errorf("a redirect is a refusal, not unconfirmed: %v", err)
			}
			if !errors.Is(err, ErrMisconfigured) {
				t.Errorf("error %v: a webhook URL that redirects is a configuration to fix", err)
			}
			noSecret(t, "error", err.Error())
			noSecret(t, "log", logs.String())
			if got := other.got(); len(got) > tt.wantOther {
				t.Errorf("the other host received %+v, want nothing", got)
			}
			for _, h := range hook.got() {
				if h.referer != "" {
					t.Errorf("a request to %s carried Referer %q", h.path, h.referer)
				}
			}
			if n := len(hook.got()); n != 1 {
				t.Errorf("%d requests to the webhook's host, want 1 (a redirect is neither followed nor retried)", n)
			}
		})
	}
}

// TestBotRedirectToAnotherOrigin: the Web API may redirect within its
// origin, never elsewhere with the bot token.
func TestBotRedirectToAnotherOrigin(t *testing.T) {
	other := newHitServer(t, nil)
	api := newHitServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	nt, err := New(Config{BotToken: testToken, Channel: testChannelID, APIURL: api.URL + "/api/"}, WithClock(time.Now, (&slacktest.Sleeps{}).Sleep))
	if err != nil {
		t.Fatal(err)
	}
	_, ts, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
	if err == nil || ts != "" {
		t.Fatalf("Post = %q, %v: want a failure", ts, err)
	}
	if !errors.Is(err, safehttp.ErrRedirect) {
		t.Errorf("error %v does not match safehttp.ErrRedirect", err)
	}
	noSecret(t, "error", err.Error())
	for _, h := range other.got() {
		noSecret(t, "a request to the other origin", h.authorization+" "+h.body+" "+h.referer)
	}
	if got := other.got(); len(got) > 0 {
		t.Errorf("the other origin received %d requests, want none", len(got))
	}
}

// TestRefusedBlocksFallBackToText: when Slack refuses the blocks, the same
// content goes out as plain text, so the alert still reaches people.
func TestRefusedBlocksFallBackToText(t *testing.T) {
	for _, tt := range []struct {
		tr    transport
		fault fault
	}{
		{bot, fault{slackErr: "invalid_blocks"}},
		{webhook, fault{status: http.StatusBadRequest}}, // the webhook's body says invalid_blocks
	} {
		t.Run(tt.tr.name, func(t *testing.T) {
			f, nt, _, logs := setup(t, tt.tr)
			f.fail(tt.tr.post, tt.fault)
			if _, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{}); err != nil {
				t.Fatalf("Post: %v", err)
			}
			posts := f.got(tt.tr.post)
			if len(posts) != 2 {
				t.Fatalf("%d posts, want 2 (blocks, then the fallback)", len(posts))
			}
			text, blocks := postedText(t, posts[1])
			if blocks != "" {
				t.Errorf("the fallback carries blocks %s", blocks)
			}
			for _, want := range []string{"2026-11-25", "1,200", "1,195", "lnk_spring_sale", "clickrecon run"} {
				if !strings.Contains(text, want) {
					t.Errorf("the fallback text lacks %q:\n%s", want, text)
				}
			}
			if len(text) > maxPlainText {
				t.Errorf("the fallback text has %d bytes, over %d", len(text), maxPlainText)
			}
			if !strings.Contains(logs.String(), "plain-text fallback") {
				t.Errorf("the fallback is not logged: %s", logs)
			}
		})
	}
}

// TestRefusedFallbackFails: when the text is refused too, the send fails
// after exactly two posts.
func TestRefusedFallbackFails(t *testing.T) {
	f, nt, _, _ := setup(t, bot)
	f.fail(bot.post, fault{slackErr: "invalid_blocks", always: true})
	_, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
	if err == nil || !strings.Contains(err.Error(), "fallback failed too") {
		t.Fatalf("err = %v, want the fallback's failure", err)
	}
	if n := len(f.got(bot.post)); n != 2 {
		t.Errorf("%d posts, want 2", n)
	}
}

// TestPostWithoutAnswerIsUnconfirmed: a post is bounded by the call
// timeout, and a post whose answer never came (or does not say whether
// Slack acted) is told apart from one Slack refused.
func TestPostWithoutAnswerIsUnconfirmed(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	for _, tr := range transports {
		t.Run(tr.name+"/no_answer", func(t *testing.T) {
			srv := newHitServer(t, hang)
			cfg := Config{WebhookURL: srv.URL + testHookPath}
			if tr.name == "bot" {
				cfg = Config{BotToken: testToken, Channel: testChannelID, APIURL: srv.URL + "/api/"}
			}
			nt, err := New(cfg, WithClock(time.Now, (&slacktest.Sleeps{}).Sleep), WithCallTimeout(100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, ts, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Post took %s with a 100ms call timeout", d)
			}
			if !errors.Is(err, ErrUnconfirmed) {
				t.Fatalf("err = %v, want ErrUnconfirmed", err)
			}
			if !strings.Contains(err.Error(), "no answer within 100ms") {
				t.Errorf("error %q does not say no answer came", err)
			}
			if ts != "" {
				t.Errorf("Post returned ts %q: it says the message was posted", ts)
			}
			if n := len(srv.got()); n != 1 {
				t.Errorf("%d posts, want 1: a post that may have gone through is not repeated", n)
			}
			noSecret(t, "error", err.Error())
		})
	}
	for _, tt := range []struct {
		name  string
		tr    transport
		fault fault
		want  bool
	}{
		{"webhook_500_refused", webhook, fault{status: http.StatusInternalServerError, always: true}, false},
		{"webhook_503_refused", webhook, fault{status: http.StatusServiceUnavailable, always: true}, false},
		{"bot_internal_error_may_have_posted", bot, fault{slackErr: "internal_error"}, true},
		{"webhook_404_refused", webhook, fault{status: http.StatusNotFound}, false},
		{"webhook_403_refused", webhook, fault{status: http.StatusForbidden}, false},
		{"bot_channel_not_found_refused", bot, fault{slackErr: "channel_not_found"}, false},
		{"bot_invalid_auth_refused", bot, fault{slackErr: "invalid_auth"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, nt, _, _ := setup(t, tt.tr)
			f.fail(tt.tr.post, tt.fault)
			_, _, err := nt.Post(context.Background(), Render(oneDayGap(), nil), PostMark{})
			if err == nil {
				t.Fatal("Post succeeded")
			}
			if got := errors.Is(err, ErrUnconfirmed); got != tt.want {
				t.Errorf("errors.Is(%v, ErrUnconfirmed) = %v, want %v", err, got, tt.want)
			}
		})
	}
	t.Run("run_stopped_mid_post", func(t *testing.T) {
		srv := newHitServer(t, hang)
		nt, err := New(Config{WebhookURL: srv.URL + testHookPath}, WithClock(time.Now, (&slacktest.Sleeps{}).Sleep))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _, err = nt.Post(ctx, Render(oneDayGap(), nil), PostMark{})
		if !errors.Is(err, ErrUnconfirmed) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrUnconfirmed and the deadline", err)
		}
	})
	t.Run("run_stopped_before_the_post", func(t *testing.T) {
		srv := newHitServer(t, nil)
		nt, err := New(Config{WebhookURL: srv.URL + testHookPath}, WithClock(time.Now, (&slacktest.Sleeps{}).Sleep))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err = nt.Post(ctx, Render(oneDayGap(), nil), PostMark{})
		if err == nil || errors.Is(err, ErrUnconfirmed) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want a cancellation that is not ErrUnconfirmed: nothing was sent", err)
		}
		if n := len(srv.got()); n != 0 {
			t.Errorf("%d requests after the run stopped", n)
		}
	})
}

// postedText returns the text and the raw blocks ("" when none) of a post.
func postedText(t *testing.T, r received) (text, blocks string) {
	t.Helper()
	if r.hook != nil {
		var m struct {
			Text   string          `json:"text"`
			Blocks json.RawMessage `json:"blocks"`
		}
		if err := json.Unmarshal(r.hook, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Blocks) > 0 && string(m.Blocks) != "null" {
			blocks = string(m.Blocks)
		}
		return m.Text, blocks
	}
	return r.form.Get("text"), r.form.Get("blocks")
}
