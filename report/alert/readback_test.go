package alert

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

// botSlack returns a fake Slack and a bot notifier posting to its channel,
// named by its ID as a read-back needs.
func botSlack(t *testing.T) (*fakeSlack, *Notifier) {
	t.Helper()
	f := newFakeSlack(t)
	nt, err := New(Config{BotToken: testToken, Channel: testChannelID, APIURL: f.apiURL(), HTTPClient: f.srv.Client()},
		WithClock(time.Now, (&slacktest.Sleeps{}).Sleep))
	if err != nil {
		t.Fatal(err)
	}
	return f, nt
}

// metadataOf returns the metadata a post marked id and runKey carries, as
// Slack keeps it.
func metadataOf(t *testing.T, id int64, runKey string) string {
	b, err := json.Marshal(slack.SlackMetadata{EventType: postEventType,
		EventPayload: map[string]any{payloadIntent: strconv.FormatInt(id, 10), payloadRunKey: runKey}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFindPosted(t *testing.T) {
	since := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	in := PostMark{ID: 42, RunKey: "20261124_20261126_0123456789ab"}

	tests := []struct {
		name      string
		messages  func(f *fakeSlack)
		wantTS    string
		wantFound bool
	}{
		{
			name: "found_among_other_posts_on_a_later_page",
			messages: func(f *fakeSlack) {
				f.Add(since.Add(1*time.Minute), "our post", metadataOf(t, 42, in.RunKey))
				for i := range 450 { // three pages of chatter after it
					f.Add(since.Add(2*time.Minute+time.Duration(i)*time.Second), "chatter", "")
				}
			},
			wantTS: slackTS(since.Add(1 * time.Minute)), wantFound: true,
		},
		{
			name: "other_intents_and_other_histories_do_not_count",
			messages: func(f *fakeSlack) {
				f.Add(since.Add(time.Minute), "the next post", metadataOf(t, 43, in.RunKey))
				f.Add(since.Add(2*time.Minute), "another history's post 42", metadataOf(t, 42, "20261124_20261126_ffffffffffff"))
				f.Add(since.Add(3*time.Minute), "another app", `{"event_type":"deploy","event_payload":{"intent_id":"42"}}`)
			},
		},
		{
			name: "a_post_before_since_is_not_searched",
			messages: func(f *fakeSlack) {
				f.Add(since.Add(-time.Hour), "an older post", metadataOf(t, 42, in.RunKey))
			},
		},
		{name: "empty_channel", messages: func(*fakeSlack) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, nt := botSlack(t)
			tt.messages(f)
			ch, ts, found, err := nt.FindPosted(context.Background(), in, since)
			if err != nil {
				t.Fatal(err)
			}
			if ts != tt.wantTS || found != tt.wantFound {
				t.Errorf("FindPosted = %q, %v; want %q, %v", ts, found, tt.wantTS, tt.wantFound)
			}
			if found && ch != testChannelID {
				t.Errorf("FindPosted found it in %q, want %q", ch, testChannelID)
			}
		})
	}
}

// A message posted with a mark is found by FindPosted: what a rerun does
// after a post whose answer never came. An unmarked post carries no
// metadata.
func TestFindPostedFindsAPostWithItsMetadata(t *testing.T) {
	f, nt := botSlack(t)
	ctx := context.Background()
	in := PostMark{ID: 7, RunKey: "20261124_20261126_0123456789ab"}
	if _, _, err := nt.Post(ctx, Message{Text: "before"}, PostMark{}); err != nil {
		t.Fatal(err)
	}
	_, posted, err := nt.Post(ctx, Message{Text: "gap alert"}, in)
	if err != nil {
		t.Fatal(err)
	}
	_, ts, found, err := nt.FindPosted(ctx, in, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !found || ts != posted {
		t.Errorf("FindPosted = %q, %v; want %q, true", ts, found, posted)
	}
	in.ID = 8
	if _, _, found, err := nt.FindPosted(ctx, in, time.Unix(0, 0)); err != nil || found {
		t.Errorf("FindPosted of a post never made = %v, %v; want false, nil", found, err)
	}
	if md := f.Posts()[0].Metadata; len(md) != 0 {
		t.Errorf("an unmarked post carries metadata %s", md)
	}
}

// An edit made with UpdateMarked is found on its message (FindEdited),
// among later messages; one made under another mark, or a message only
// posted, is not: that edit was never made.
func TestFindEditedFindsTheEditOnItsMessage(t *testing.T) {
	f, nt := botSlack(t)
	ctx := context.Background()
	post := PostMark{ID: 7, RunKey: "20261124_20261126_0123456789ab"}
	ch, ts, err := nt.Post(ctx, Message{Text: "gap alert"}, post)
	if err != nil {
		t.Fatal(err)
	}
	f.Add(time.Now().Add(time.Minute), "chatter after it", "")
	edit := PostMark{ID: 9, RunKey: "20261125_20261127_0123456789ab"}
	if found, err := nt.FindEdited(ctx, edit, ch, ts); err != nil || found {
		t.Errorf("FindEdited before the edit = %v, %v; want false, nil", found, err)
	}
	if err := nt.UpdateMarked(ctx, ch, ts, Message{Text: "healed"}, edit); err != nil {
		t.Fatal(err)
	}
	if found, err := nt.FindEdited(ctx, edit, ch, ts); err != nil || !found {
		t.Errorf("FindEdited after the edit = %v, %v; want true, nil", found, err)
	}
	for _, other := range []PostMark{{ID: 10, RunKey: edit.RunKey}, {ID: 9, RunKey: "another history's run"}, post} {
		if found, err := nt.FindEdited(ctx, other, ch, ts); err != nil || found {
			t.Errorf("FindEdited(%+v) = %v, %v; want false, nil: the message carries %+v", other, found, err, edit)
		}
	}
	if found, err := nt.FindEdited(ctx, edit, ch, "1.000001"); err != nil || found {
		t.Errorf("FindEdited of a message not there = %v, %v; want false, nil", found, err)
	}
}

// A channel too busy to search, or one the token cannot read, resolves
// nothing: an error, never "not found" (which would post again).
func TestFindPostedErrors(t *testing.T) {
	ctx := context.Background()
	in := PostMark{ID: 42, RunKey: "rk"}
	since := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

	busy, nt := botSlack(t)
	for i := range historyPage*maxHistoryPages + 1 {
		busy.Add(since.Add(time.Duration(i)*time.Second), "chatter", "")
	}
	if _, _, found, err := nt.FindPosted(ctx, in, since); err == nil || found {
		t.Errorf("FindPosted in a channel of %d messages = %v, %v; want an error", historyPage*maxHistoryPages+1, found, err)
	}
	if pages := len(busy.Requests("/api/conversations.history")); pages != maxHistoryPages {
		t.Errorf("conversations.history was called %d times, want at most %d", pages, maxHistoryPages)
	}

	denied, nt := botSlack(t)
	denied.fail("/api/conversations.history", fault{slackErr: "missing_scope", always: true})
	_, _, found, err := nt.FindPosted(ctx, in, since)
	if err == nil || found || !strings.Contains(err.Error(), "missing_scope") {
		t.Errorf("FindPosted without channels:history = %v, %v; want an error naming missing_scope", found, err)
	}
	if !errors.Is(err, ErrMisconfigured) {
		t.Errorf("FindPosted without channels:history = %v, want ErrMisconfigured", err)
	}
	_, wh, _, _ := setup(t, webhook)
	if _, _, _, err := wh.FindPosted(ctx, in, since); err == nil {
		t.Error("FindPosted through a webhook = nil, want an error: a webhook cannot be read back")
	}
	if err != nil && strings.Contains(err.Error(), testToken) {
		t.Errorf("error shows the token: %v", err)
	}
}

// The repeat marker heads both the blocks and the notification text, and
// a message already at Slack's block limit still fits with it.
func TestMarkRepeat(t *testing.T) {
	m := MarkRepeat(checked(Render(oneDayGap(), nil)))
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
	if err := MarkRepeat(full).Validate(); err != nil {
		t.Errorf("a full message marked as a repeat breaks a Slack limit: %v", err)
	}
	if !strings.HasPrefix(MarkRepeat(full).Text, repeatNote) {
		t.Error("a full message lost its repeat note")
	}
}
