package alert

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/report/history"
)

// channelFake speaks chat.postMessage and conversations.history as Slack
// does with message metadata: a post keeps its metadata, and the history
// returns it only when include_all_metadata is set, newest first, limit
// messages a page, from oldest on.
type channelFake struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	messages []fakeMessage // oldest first
	pages    int           // conversations.history calls
	fail     string        // answer conversations.history with ok:false and this error
}

type fakeMessage struct {
	TS       string          `json:"ts"`
	Text     string          `json:"text"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

func newChannelFake(t *testing.T) *channelFake {
	f := &channelFake{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *channelFake) client() *slack.Client {
	return slack.New(testToken, slack.OptionAPIURL(f.srv.URL+"/"))
}

// add puts a message posted at ts into the channel directly.
func (f *channelFake) add(ts time.Time, text string, metadata string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := fakeMessage{TS: slackTS(ts), Text: text}
	if metadata != "" {
		m.Metadata = json.RawMessage(metadata)
	}
	f.messages = append(f.messages, m)
}

func (f *channelFake) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("token") != testToken && r.Header.Get("Authorization") != "Bearer "+testToken {
		writeJSON(w, map[string]any{"ok": false, "error": "not_authed"})
		return
	}
	if r.Form.Get("channel") != testChannelID {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case "chat.postMessage":
		// Slack's clock: a post made now, after the intent was recorded.
		ts := slackTS(time.Now().Add(time.Duration(len(f.messages)) * time.Microsecond))
		m := fakeMessage{TS: ts, Text: r.Form.Get("text")}
		if md := r.Form.Get("metadata"); md != "" {
			m.Metadata = json.RawMessage(md)
		}
		f.messages = append(f.messages, m)
		writeJSON(w, map[string]any{"ok": true, "channel": testChannelID, "ts": ts})
	case "conversations.history":
		f.pages++
		if f.fail != "" {
			writeJSON(w, map[string]any{"ok": false, "error": f.fail})
			return
		}
		oldest, _ := strconv.ParseFloat(r.Form.Get("oldest"), 64)
		limit, _ := strconv.Atoi(r.Form.Get("limit"))
		start, _ := strconv.Atoi(r.Form.Get("cursor"))
		var newestFirst []fakeMessage
		for i := len(f.messages) - 1; i >= 0; i-- {
			m := f.messages[i]
			if ts, _ := strconv.ParseFloat(m.TS, 64); ts < oldest {
				continue
			}
			if r.Form.Get("include_all_metadata") != "1" {
				m.Metadata = nil
			}
			newestFirst = append(newestFirst, m)
		}
		end := min(start+limit, len(newestFirst))
		resp := map[string]any{"ok": true, "messages": newestFirst[start:end], "has_more": end < len(newestFirst)}
		if end < len(newestFirst) {
			resp["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
		}
		writeJSON(w, resp)
	default:
		f.t.Errorf("unexpected Slack call %s", r.URL.Path)
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// metadataOf returns the metadata postMetadata gives in, as Slack keeps it.
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
	in := history.Intent{ID: 42, RunKey: "20261124_20261126_0123456789ab"}

	tests := []struct {
		name      string
		messages  func(f *channelFake)
		wantTS    string
		wantFound bool
	}{
		{
			name: "found_among_other_posts_on_a_later_page",
			messages: func(f *channelFake) {
				f.add(since.Add(1*time.Minute), "our post", metadataOf(t, 42, in.RunKey))
				for i := range 450 { // three pages of chatter after it
					f.add(since.Add(2*time.Minute+time.Duration(i)*time.Second), "chatter", "")
				}
			},
			wantTS: slackTS(since.Add(1 * time.Minute)), wantFound: true,
		},
		{
			name: "other_intents_and_other_histories_do_not_count",
			messages: func(f *channelFake) {
				f.add(since.Add(time.Minute), "the next post", metadataOf(t, 43, in.RunKey))
				f.add(since.Add(2*time.Minute), "another history's post 42", metadataOf(t, 42, "20261124_20261126_ffffffffffff"))
				f.add(since.Add(3*time.Minute), "another app", `{"event_type":"deploy","event_payload":{"intent_id":"42"}}`)
			},
		},
		{
			name: "a_post_before_since_is_not_searched",
			messages: func(f *channelFake) {
				f.add(since.Add(-time.Hour), "an older post", metadataOf(t, 42, in.RunKey))
			},
		},
		{name: "empty_channel", messages: func(*channelFake) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newChannelFake(t)
			tt.messages(f)
			ts, found, err := findPosted(context.Background(), f.client(), testChannelID, in, since)
			if err != nil {
				t.Fatal(err)
			}
			if ts != tt.wantTS || found != tt.wantFound {
				t.Errorf("findPosted = %q, %v; want %q, %v", ts, found, tt.wantTS, tt.wantFound)
			}
		})
	}
}

// A message posted with postMetadata through the real client is found by
// findPosted: what a rerun does after a post whose answer never came.
func TestFindPostedFindsAPostWithItsMetadata(t *testing.T) {
	f := newChannelFake(t)
	api := f.client()
	ctx := context.Background()
	in := history.Intent{ID: 7, RunKey: "20261124_20261126_0123456789ab"}
	if _, _, err := api.PostMessageContext(ctx, testChannelID, slack.MsgOptionText("before", false)); err != nil {
		t.Fatal(err)
	}
	_, posted, err := api.PostMessageContext(ctx, testChannelID, slack.MsgOptionText("gap alert", false), postMetadata(in))
	if err != nil {
		t.Fatal(err)
	}
	ts, found, err := findPosted(ctx, api, testChannelID, in, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !found || ts != posted {
		t.Errorf("findPosted = %q, %v; want %q, true", ts, found, posted)
	}
	in.ID = 8
	if _, found, err := findPosted(ctx, api, testChannelID, in, time.Unix(0, 0)); err != nil || found {
		t.Errorf("findPosted of a post never made = %v, %v; want false, nil", found, err)
	}
}

// A channel too busy to search, or one the token cannot read, resolves
// nothing: an error, never "not found" (which would post again).
func TestFindPostedErrors(t *testing.T) {
	ctx := context.Background()
	in := history.Intent{ID: 42, RunKey: "rk"}
	since := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

	busy := newChannelFake(t)
	for i := range historyPage*maxHistoryPages + 1 {
		busy.add(since.Add(time.Duration(i)*time.Second), "chatter", "")
	}
	if _, found, err := findPosted(ctx, busy.client(), testChannelID, in, since); err == nil || found {
		t.Errorf("findPosted in a channel of %d messages = %v, %v; want an error", historyPage*maxHistoryPages+1, found, err)
	}
	if busy.pages != maxHistoryPages {
		t.Errorf("conversations.history was called %d times, want at most %d", busy.pages, maxHistoryPages)
	}

	denied := newChannelFake(t)
	denied.fail = "missing_scope"
	_, found, err := findPosted(ctx, denied.client(), testChannelID, in, since)
	if err == nil || found || !strings.Contains(err.Error(), "missing_scope") {
		t.Errorf("findPosted without channels:history = %v, %v; want an error naming missing_scope", found, err)
	}
	if err != nil && strings.Contains(err.Error(), testToken) {
		t.Errorf("error shows the token: %v", err)
	}
}

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

// outboxHistory returns a migrated SQLite history of the test's own.
func outboxHistory(t *testing.T) *history.History {
	t.Helper()
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
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
		in.ID = id
		return in
	}
	alerted := func(t *testing.T, h *history.History) map[string]history.Alert {
		t.Helper()
		got, err := h.Alerts(ctx, scope.WorkspaceID, scope.StoreID, scope.TZ, "2026-11-20", "2026-11-30")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pendingAfter := func(t *testing.T, h *history.History) int {
		t.Helper()
		p, err := h.Pending(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		return len(p)
	}

	t.Run("bot_post_that_arrived_is_adopted", func(t *testing.T) {
		h, f := outboxHistory(t), newChannelFake(t)
		in := intend(t, h, history.TransportBot, 0)
		// The post arrived; its answer never did.
		_, ts, err := f.client().PostMessageContext(ctx, testChannelID, slack.MsgOptionText("gap", false), postMetadata(in))
		if err != nil {
			t.Fatal(err)
		}
		repeat, err := resolvePending(ctx, h, f.client(), testChannelID, scope, now)
		if err != nil || repeat != 0 {
			t.Fatalf("resolvePending = %d, %v; want 0, nil", repeat, err)
		}
		if a := alerted(t, h)[gap.Date]; a.TS != ts || a.Channel != testChannelID {
			t.Errorf("alert of %s = %+v, want the adopted message %s", gap.Date, a, ts)
		}
		if n := pendingAfter(t, h); n != 0 {
			t.Errorf("%d posts still pending", n)
		}
	})
	t.Run("bot_post_that_never_arrived_is_abandoned", func(t *testing.T) {
		h, f := outboxHistory(t), newChannelFake(t)
		intend(t, h, history.TransportBot, 0)
		repeat, err := resolvePending(ctx, h, f.client(), testChannelID, scope, now)
		if err != nil || repeat != 0 {
			t.Fatalf("resolvePending = %d, %v; want 0, nil", repeat, err)
		}
		if a := alerted(t, h); len(a) != 0 {
			t.Errorf("alerts = %v, want none: the gap is to be posted", a)
		}
		if n := pendingAfter(t, h); n != 0 {
			t.Errorf("%d posts still pending", n)
		}
	})
	t.Run("bot_post_unknown_while_slack_fails_stays_pending", func(t *testing.T) {
		h, f := outboxHistory(t), newChannelFake(t)
		f.fail = "ratelimited"
		intend(t, h, history.TransportBot, 0)
		if _, err := resolvePending(ctx, h, f.client(), testChannelID, scope, now); err == nil {
			t.Fatal("resolvePending while Slack fails: got nil, want an error (post nothing)")
		}
		if n := pendingAfter(t, h); n != 1 {
			t.Errorf("%d posts pending, want the 1 kept", n)
		}
	})
	t.Run("webhook_post_is_repeated_once_then_taken_as_delivered", func(t *testing.T) {
		h := outboxHistory(t)
		first := intend(t, h, history.TransportWebhook, 0)
		repeat, err := resolvePending(ctx, h, nil, "", scope, now)
		if err != nil || repeat != first.ID {
			t.Fatalf("resolvePending = %d, %v; want %d, nil", repeat, err, first.ID)
		}
		if a := alerted(t, h); len(a) != 0 {
			t.Errorf("alerts = %v, want none: the gap is posted once more", a)
		}
		// The repeat's answer is lost too: it is not posted a third time.
		intend(t, h, history.TransportWebhook, first.ID)
		repeat, err = resolvePending(ctx, h, nil, "", scope, now)
		if err != nil || repeat != 0 {
			t.Fatalf("resolvePending of the repeat = %d, %v; want 0, nil", repeat, err)
		}
		if _, ok := alerted(t, h)[gap.Date]; !ok {
			t.Errorf("the repeated gap is not counted as alerted: a third post would follow")
		}
	})
}
