package alert

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
)

// webhookFake is slacktest's Slack, posted to through its webhook.
type webhookFake struct{ *slacktest.Server }

func newWebhookFake(t *testing.T) *webhookFake { return &webhookFake{slacktest.New(t)} }

func (f *webhookFake) notifier(t *testing.T) *Notifier {
	t.Helper()
	n, err := New(Config{WebhookURL: f.WebhookURL()})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// got returns the text of every message the webhook took.
func (f *webhookFake) got() []string { return f.Texts() }

func pendingOf(t *testing.T, h *history.History, n *Notifier) []history.Intent {
	t.Helper()
	rep := oneDayGap()
	p, err := h.Pending(context.Background(), history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A post Slack refused is given up, not left pending: once the webhook is
// mended, the gap is posted as a plain alert, not marked as a repeat.
func TestDeliverRefusedPostIsAbandoned(t *testing.T) {
	ctx := context.Background()
	h := outboxHistory(t)
	f := newWebhookFake(t)
	n := f.notifier(t)
	f.SetStatus(http.StatusNotFound)
	if _, err := n.Send(ctx, oneDayGap(), nil, h); !errors.Is(err, ErrMisconfigured) || errors.Is(err, ErrUnconfirmed) {
		t.Fatalf("Send to a removed webhook = %v, want a misconfiguration, not an unconfirmed post", err)
	}
	if p := pendingOf(t, h, n); len(p) != 0 {
		t.Errorf("%d posts pending after a refusal, want none", len(p))
	}
	f.SetStatus(http.StatusOK)
	if _, err := n.Send(ctx, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	if got := f.got(); len(got) != 1 || strings.Contains(got[0], "Possible repeat") {
		t.Errorf("posted %q, want one alert not marked as a repeat", got)
	}
}

// A guard that fails (the run lock lost) or a history that cannot record
// the post stop it before anything reaches Slack.
func TestDeliverNeedsTheGuardAndTheRecord(t *testing.T) {
	ctx := context.Background()
	lost := errors.New("the run lock was lost")
	t.Run("guard_fails", func(t *testing.T) {
		h := outboxHistory(t)
		f := newWebhookFake(t)
		_, err := f.notifier(t).Send(ctx, oneDayGap(), nil, h, func(context.Context) error { return lost })
		if err == nil || !strings.Contains(err.Error(), lost.Error()) {
			t.Errorf("Send with the lock lost = %v, want the lost lock", err)
		}
		if got := f.got(); len(got) != 0 {
			t.Errorf("posted %q with the lock lost", got)
		}
	})
	t.Run("history_closed", func(t *testing.T) {
		h := outboxHistory(t)
		f := newWebhookFake(t)
		h.Close()
		if _, err := f.notifier(t).Send(ctx, oneDayGap(), nil, h); err == nil {
			t.Error("Send with a closed history = nil, want an error")
		}
		if got := f.got(); len(got) != 0 {
			t.Errorf("posted %q without a history to record it", got)
		}
	})
}

// The repeat marker heads both the blocks and the notification text, and
// a message already at Slack's block limit still fits with it.
func TestMarkRepeat(t *testing.T) {
	m := markRepeat(checked(Render(oneDayGap(), nil)))
	if !strings.HasPrefix(m.Text, repeatNote) {
		t.Errorf("text %q does not start with the repeat note", m.Text)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("marked message breaks a Slack limit: %v", err)
	}
	cb, ok := m.Blocks[0].(*slack.ContextBlock)
	if !ok || len(cb.ContextElements.Elements) == 0 {
		t.Fatalf("first block %T, want the repeat note", m.Blocks[0])
	}
	if tb, ok := cb.ContextElements.Elements[0].(*slack.TextBlockObject); !ok || !strings.Contains(tb.Text, repeatNote) {
		t.Errorf("first block %+v, want the repeat note", cb.ContextElements.Elements[0])
	}
	full := checked(Render(manyLinks(), nil))
	if err := markRepeat(full).Validate(); err != nil {
		t.Errorf("a full message marked as a repeat breaks a Slack limit: %v", err)
	}
	if !strings.HasPrefix(markRepeat(full).Text, repeatNote) {
		t.Error("a full message lost its repeat note")
	}
}
