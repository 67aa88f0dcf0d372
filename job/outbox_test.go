package job

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
)

func TestPendingSince(t *testing.T) {
	fallback := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	got := pendingSince(history.Intent{Created: "2026-12-01T02:00:00Z"}, fallback)
	if want := time.Date(2026, 12, 1, 1, 50, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("pendingSince = %v, want %v", got, want)
	}
	if got := pendingSince(history.Intent{}, fallback); !got.Equal(fallback) {
		t.Errorf("pendingSince without Created = %v, want %v", got, fallback)
	}
}

// A rerun settles the post an earlier run left pending before posting.
func TestResolvePending(t *testing.T) {
	ctx := context.Background()
	scope := history.Scope{WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw"}
	now := time.Now()
	gap := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		From: "2026-11-24", To: "2026-11-26", RunKey: "rk1"}
	intend := func(t *testing.T, h *history.History, transport string, repeatOf int64) history.Intent {
		t.Helper()
		a := gap
		a.Transport = transport
		in := history.Intent{Scope: scope, RunKey: "rk1", Kind: history.KindAlert, Transport: transport,
			From: "2026-11-24", To: "2026-11-26", Alerts: []history.Alert{a}, RepeatOf: repeatOf}
		id, err := h.Intend(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.MarkSent(ctx, id); err != nil {
			t.Fatal(err)
		}
		in.ID, in.Sent = id, true
		return in
	}

	// bot is a bot notifier for a channel named by its ID, which the
	// read-back needs.
	botNotifier := func(t *testing.T) (*fakeSlack, *alert.Notifier) {
		t.Helper()
		f, nt, _, _ := setupSlack(t, bot, func(c *alert.Config) { c.Channel = testChannelID })
		return f, nt
	}
	hook := func(t *testing.T) *alert.Notifier { return newWebhookFake(t).notifier(t) }

	t.Run("bot_post_that_arrived_is_adopted", func(t *testing.T) {
		h := newHistory(t)
		_, nt := botNotifier(t)
		in := intend(t, h, history.TransportBot, 0)
		// The post arrived; its answer never did.
		_, ts, err := nt.Post(ctx, alert.Message{Text: "gap"}, alert.PostMark{ID: in.ID, RunKey: in.RunKey})
		if err != nil {
			t.Fatal(err)
		}
		repeat, err := resolvePending(ctx, h, nt, scope, now)
		if err != nil || repeat != 0 {
			t.Fatalf("resolvePending = %d, %v; want 0, nil", repeat, err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.TS != ts || a.Channel != testChannelID {
			t.Errorf("alert of %s = %+v, want the adopted message %s", gap.Date, a, ts)
		}
		if n := pendingIn(t, h, scope); n != 0 {
			t.Errorf("%d posts still pending", n)
		}
	})
	// A bot's edit of its alert telling the day healed, killed between
	// the edit and its record: made, it is found on the message and its
	// heal counts as told; never made, it is given up and the day is
	// still the gap the channel shows (the long simulation, seed 1057,
	// bot, SQLite, night 239: the heal was told again).
	for _, made := range []bool{true, false} {
		t.Run(fmt.Sprintf("bot_edit_made_%v", made), func(t *testing.T) {
			h := newHistory(t)
			f, nt := botNotifier(t)
			posted := intend(t, h, history.TransportBot, 0)
			// The alert was posted two nights before its edit: older than
			// any search of the posts since the edit was intended.
			at := time.Now().Add(-48 * time.Hour)
			f.Add(at, "gap", "")
			ch, ts := testChannelID, fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000)
			if err := h.MarkPosted(ctx, posted.ID, ch, ts); err != nil {
				t.Fatal(err)
			}
			healed := gap
			healed.Transport, healed.Healed, healed.RunKey, healed.Channel, healed.TS = history.TransportBot, true, "rk2", ch, ts
			in := history.Intent{Scope: scope, RunKey: "rk2", Kind: history.KindHealed, Transport: history.TransportBot,
				From: gap.From, To: gap.To, Alerts: []history.Alert{healed}, Channel: ch, TS: ts}
			id, err := h.Intend(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.MarkSent(ctx, id); err != nil {
				t.Fatal(err)
			}
			if made {
				if err := nt.UpdateMarked(ctx, ch, ts, alert.Message{Text: "healed"}, alert.PostMark{ID: id, RunKey: "rk2"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := resolvePending(ctx, h, nt, scope, now); err != nil {
				t.Fatal(err)
			}
			if a := alertsIn(t, h, scope)[gap.Date]; a.Healed != made || a.TS != ts {
				t.Errorf("alert of %s = %+v, want healed %v on message %s", gap.Date, a, made, ts)
			}
			if n := pendingIn(t, h, scope); n != 0 {
				t.Errorf("%d posts still pending", n)
			}
		})
	}
	t.Run("bot_post_that_never_arrived_is_abandoned", func(t *testing.T) {
		h := newHistory(t)
		_, nt := botNotifier(t)
		intend(t, h, history.TransportBot, 0)
		repeat, err := resolvePending(ctx, h, nt, scope, now)
		if err != nil || repeat != 0 {
			t.Fatalf("resolvePending = %d, %v; want 0, nil", repeat, err)
		}
		if a := alertsIn(t, h, scope); len(a) != 0 {
			t.Errorf("alerts = %v, want none: the gap is to be posted", a)
		}
		if n := pendingIn(t, h, scope); n != 0 {
			t.Errorf("%d posts still pending", n)
		}
	})
	t.Run("bot_post_unknown_while_slack_fails_stays_pending", func(t *testing.T) {
		h := newHistory(t)
		f, nt := botNotifier(t)
		f.Fail("/api/conversations.history", slacktest.Fault{SlackErr: "ratelimited", Always: true})
		intend(t, h, history.TransportBot, 0)
		if _, err := resolvePending(ctx, h, nt, scope, now); err == nil {
			t.Fatal("resolvePending while Slack fails: got nil, want an error (post nothing)")
		}
		if n := pendingIn(t, h, scope); n != 1 {
			t.Errorf("%d posts pending, want the 1 kept", n)
		}
	})
	// A run that died between its record of a post and the post (seed
	// 1001 of the simulation, 149 nights: the day it would have shown
	// again was then shown a third time) leaves a post it never sent:
	// it told nothing, on either transport.
	for _, transport := range []string{history.TransportWebhook, history.TransportBot} {
		t.Run(transport+"_post_never_sent_is_abandoned", func(t *testing.T) {
			h := newHistory(t)
			a := gap
			a.Transport = transport
			if _, err := h.Intend(ctx, history.Intent{Scope: scope, RunKey: "rk1", Kind: history.KindAlert, Transport: transport,
				From: "2026-11-24", To: "2026-11-26", Alerts: []history.Alert{a}}); err != nil {
				t.Fatal(err)
			}
			n := hook(t)
			if transport == history.TransportBot {
				_, n = botNotifier(t)
			}
			repeat, err := resolvePending(ctx, h, n, scope, now)
			if err != nil || repeat != 0 {
				t.Fatalf("resolvePending = %d, %v; want 0, nil: nothing was sent, nothing may repeat", repeat, err)
			}
			if got := alertsIn(t, h, scope); len(got) != 0 {
				t.Errorf("alerts = %v, want none: the post never left", got)
			}
			if n := pendingIn(t, h, scope); n != 0 {
				t.Errorf("%d posts still pending", n)
			}
		})
	}
	t.Run("webhook_post_is_repeated_once_then_taken_as_delivered", func(t *testing.T) {
		h := newHistory(t)
		first := intend(t, h, history.TransportWebhook, 0)
		repeat, err := resolvePending(ctx, h, hook(t), scope, now)
		if err != nil || repeat != first.ID {
			t.Fatalf("resolvePending = %d, %v; want %d, nil", repeat, err, first.ID)
		}
		// It may be in the channel: its day counts as told once without
		// an answer, and is told once more (decideGaps).
		if a := alertsIn(t, h, scope)[gap.Date]; a.Unconfirmed != 1 {
			t.Errorf("alert of %s = %+v, want it told once without an answer", gap.Date, a)
		}
		// The repeat's answer is lost too: it is not posted a third time.
		second := intend(t, h, history.TransportWebhook, first.ID)
		repeat, err = resolvePending(ctx, h, hook(t), scope, now)
		if err != nil || repeat != second.ID {
			t.Fatalf("resolvePending of the repeat = %d, %v; want %d, nil", repeat, err, second.ID)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.Unconfirmed != 2 {
			t.Errorf("alert of %s = %+v, want it told twice without an answer: a third post would follow", gap.Date, a)
		}
	})
}

// alertsIn returns the alerts the history holds for the days of s around
// the outbox tests' gap (November 2026).
func alertsIn(t *testing.T, h *history.History, s history.Scope) map[string]history.Alert {
	t.Helper()
	got, err := h.Alerts(context.Background(), s, "2026-11-20", "2026-11-30")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// pendingIn returns how many posts of s are pending in the history.
func pendingIn(t *testing.T, h *history.History, s history.Scope) int {
	t.Helper()
	p, err := h.Pending(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return len(p)
}

// webhookFake is slacktest's Slack, posted to through its webhook.
type webhookFake struct{ *slacktest.Server }

func newWebhookFake(t *testing.T) *webhookFake { return &webhookFake{slacktest.New(t)} }

func (f *webhookFake) notifier(t *testing.T) *alert.Notifier {
	t.Helper()
	n, err := alert.New(alert.Config{WebhookURL: f.WebhookURL()})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// got returns the text of every message the webhook took.
func (f *webhookFake) got() []string { return f.Texts() }

func pendingOf(t *testing.T, h *history.History, n *alert.Notifier) []history.Intent {
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
	h := newHistory(t)
	f := newWebhookFake(t)
	n := f.notifier(t)
	f.SetStatus(http.StatusNotFound)
	if _, err := send(ctx, n, oneDayGap(), nil, h); !errors.Is(err, alert.ErrMisconfigured) || errors.Is(err, alert.ErrUnconfirmed) {
		t.Fatalf("Send to a removed webhook = %v, want a misconfiguration, not an unconfirmed post", err)
	}
	if p := pendingOf(t, h, n); len(p) != 0 {
		t.Errorf("%d posts pending after a refusal, want none", len(p))
	}
	f.SetStatus(http.StatusOK)
	if _, err := send(ctx, n, oneDayGap(), nil, h); err != nil {
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
		h := newHistory(t)
		f := newWebhookFake(t)
		_, err := send(ctx, f.notifier(t), oneDayGap(), nil, h, func(context.Context) error { return lost })
		if err == nil || !strings.Contains(err.Error(), lost.Error()) {
			t.Errorf("Send with the lock lost = %v, want the lost lock", err)
		}
		if got := f.got(); len(got) != 0 {
			t.Errorf("posted %q with the lock lost", got)
		}
	})
	// Another writer (a run that took the lock after this one lost it)
	// settled the pending post between its record and its mark as sent:
	// the mark is refused, and nothing is posted.
	t.Run("settled_by_another_before_sent", func(t *testing.T) {
		h := newHistory(t)
		f := newWebhookFake(t)
		n := f.notifier(t)
		settled := 0
		other := func(ctx context.Context) error {
			for _, p := range pendingOf(t, h, n) {
				if err := h.Abandon(ctx, p.ID); err != nil {
					t.Fatal(err)
				}
				settled++
			}
			return nil
		}
		_, err := send(ctx, n, oneDayGap(), nil, h, other)
		if settled != 1 {
			t.Fatalf("%d pending posts at the guard, want the one being sent", settled)
		}
		if !errors.Is(err, history.ErrResolved) {
			t.Errorf("Send of a post settled by another writer = %v, want history.ErrResolved", err)
		}
		if got := f.got(); len(got) != 0 {
			t.Errorf("posted %q, a post another writer had settled", got)
		}
	})
	t.Run("history_closed", func(t *testing.T) {
		h := newHistory(t)
		f := newWebhookFake(t)
		h.Close()
		if _, err := send(ctx, f.notifier(t), oneDayGap(), nil, h); err == nil {
			t.Error("Send with a closed history = nil, want an error")
		}
		if got := f.got(); len(got) != 0 {
			t.Errorf("posted %q without a history to record it", got)
		}
	})
}

// The notifier names its transport as the history records it: a pending
// bot post is read back only by a bot notifier.
func TestTransportNamesMatchTheHistory(t *testing.T) {
	if alert.TransportBot != history.TransportBot || alert.TransportWebhook != history.TransportWebhook {
		t.Errorf("alert's transports %q, %q; the history's %q, %q", alert.TransportBot, alert.TransportWebhook, history.TransportBot, history.TransportWebhook)
	}
}

// A bot's edit goes through the outbox as a post does; each row of the
// fault matrix for it: made (its days told), refused (a message gone: given
// up, nothing told, reported gone), a concurrent writer (the lock lost, or
// the pending edit settled by another run: nothing edited), and someone
// else's mark on the message (another history's edit: ours, never made, is
// given up, not adopted). Its answer lost is TestResolvePending's
// bot_edit_made_true.
func TestOutboxEdit(t *testing.T) {
	ctx := context.Background()
	scope := history.Scope{WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw"}
	gap := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		Transport: history.TransportBot, From: "2026-11-24", To: "2026-11-26", RunKey: "rk1"}
	// setup posts the alert of gap, recorded, and returns the intent of
	// its edit telling the day healed.
	setup := func(t *testing.T) (*history.History, *fakeSlack, *alert.Notifier, history.Intent) {
		t.Helper()
		h := newHistory(t)
		f, nt, _, _ := setupSlack(t, bot, func(c *alert.Config) { c.Channel = testChannelID })
		at := time.Now().Add(-time.Hour)
		f.Add(at, "gap", "")
		ch, ts := testChannelID, fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000)
		a := gap
		a.Channel, a.TS = ch, ts
		id, err := h.Intend(ctx, history.Intent{Scope: scope, RunKey: "rk1", Kind: history.KindAlert, Transport: history.TransportBot,
			From: gap.From, To: gap.To, Alerts: []history.Alert{a}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.MarkSent(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := h.MarkPosted(ctx, id, ch, ts); err != nil {
			t.Fatal(err)
		}
		healed := a
		healed.Healed, healed.RunKey = true, "rk2"
		return h, f, nt, history.Intent{Scope: scope, RunKey: "rk2", Kind: history.KindHealed, Transport: history.TransportBot,
			From: gap.From, To: gap.To, Alerts: []history.Alert{healed}, Channel: ch, TS: ts}
	}
	none := func(context.Context) error { return nil }

	t.Run("made", func(t *testing.T) {
		h, f, nt, in := setup(t)
		gone, err := outbox{slack: nt, history: h, guard: none}.edit(ctx, in, alert.Message{Text: "healed"})
		if err != nil || gone {
			t.Fatalf("edit = gone %v, %v; want made", gone, err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; !a.Healed || a.TS != in.TS {
			t.Errorf("alert row %+v, want healed on %s", a, in.TS)
		}
		if n := len(f.Updates()); n != 1 || pendingIn(t, h, scope) != 0 {
			t.Errorf("%d edits, %d pending; want 1, 0", n, pendingIn(t, h, scope))
		}
	})
	t.Run("refused_message_gone", func(t *testing.T) {
		h, f, nt, in := setup(t)
		in.TS = "1.000001" // no such message
		gone, err := outbox{slack: nt, history: h, guard: none}.edit(ctx, in, alert.Message{Text: "healed"})
		if err == nil || !gone {
			t.Fatalf("edit of a message gone = gone %v, %v; want gone and an error", gone, err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.Healed || pendingIn(t, h, scope) != 0 || len(f.Updates()) != 0 {
			t.Errorf("after a refused edit: row %+v, %d pending, %d edits; want nothing told, nothing pending", a, pendingIn(t, h, scope), len(f.Updates()))
		}
	})
	t.Run("refused_not_gone", func(t *testing.T) {
		h, f, nt, in := setup(t)
		f.Fail("/api/chat.update", slacktest.Fault{SlackErr: "invalid_blocks", Always: true})
		gone, err := outbox{slack: nt, history: h, guard: none}.edit(ctx, in, alert.Message{Text: "healed"})
		if err == nil || gone {
			t.Fatalf("edit refused = gone %v, %v; want an error, the message not gone", gone, err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.Healed || pendingIn(t, h, scope) != 0 {
			t.Errorf("after a refused edit: row %+v, %d pending; want nothing told, nothing pending", a, pendingIn(t, h, scope))
		}
	})
	t.Run("concurrent_writer_lock_lost", func(t *testing.T) {
		h, f, nt, in := setup(t)
		lost := errors.New("the run lock was lost")
		_, err := outbox{slack: nt, history: h, guard: func(context.Context) error { return lost }}.edit(ctx, in, alert.Message{Text: "healed"})
		if !errors.Is(err, lost) {
			t.Errorf("edit with the lock lost = %v, want the lost lock", err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.Healed || pendingIn(t, h, scope) != 0 || len(f.Updates()) != 0 {
			t.Errorf("with the lock lost: row %+v, %d pending, %d edits; want nothing", a, pendingIn(t, h, scope), len(f.Updates()))
		}
	})
	t.Run("concurrent_writer_settles_it_first", func(t *testing.T) {
		h, f, nt, in := setup(t)
		other := func(ctx context.Context) error {
			p, err := h.Pending(ctx, scope)
			if err != nil || len(p) != 1 {
				t.Fatalf("pending at the guard: %v, %v; want the edit", p, err)
			}
			return h.Abandon(ctx, p[0].ID)
		}
		_, err := outbox{slack: nt, history: h, guard: other}.edit(ctx, in, alert.Message{Text: "healed"})
		if !errors.Is(err, history.ErrResolved) {
			t.Errorf("edit settled by another writer = %v, want history.ErrResolved", err)
		}
		if len(f.Updates()) != 0 || alertsIn(t, h, scope)[gap.Date].Healed {
			t.Errorf("%d edits made of an edit another writer settled", len(f.Updates()))
		}
	})
	t.Run("someone_elses_mark", func(t *testing.T) {
		h, _, nt, in := setup(t)
		id, err := h.Intend(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.MarkSent(ctx, id); err != nil {
			t.Fatal(err)
		}
		// The run died before its edit; another history's edit of the
		// same message carries its own mark.
		if err := nt.UpdateMarked(ctx, in.Channel, in.TS, alert.Message{Text: "theirs"}, alert.PostMark{ID: id + 1000, RunKey: "theirs"}); err != nil {
			t.Fatal(err)
		}
		if _, err := resolvePending(ctx, h, nt, scope, time.Now()); err != nil {
			t.Fatal(err)
		}
		if a := alertsIn(t, h, scope)[gap.Date]; a.Healed || pendingIn(t, h, scope) != 0 {
			t.Errorf("row %+v, %d pending; want our edit given up, not adopted from another's mark", a, pendingIn(t, h, scope))
		}
	})
}
