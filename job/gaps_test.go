package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/reporttest"
)

// The reports of these tests (see reporttest).
var (
	day          = reporttest.Day
	provisional  = reporttest.Provisional
	unverifiable = reporttest.Unverifiable
	gapReport    = reporttest.New
	oneDayGap    = reporttest.OneDayGap
)

// heal: the poller backfilled 2026-11-25, alerted as missing -5.
func heal() alert.Update {
	return alert.Update{
		WorkspaceID: "48213",
		TZ:          "Europe/Warsaw",
		From:        "2026-11-24",
		To:          "2026-11-26",
		RunKey:      "20261125_20261127_77aa12bb34cc",
		GeneratedAt: time.Date(2026, 11, 28, 3, 0, 9, 0, time.UTC),
		Days: []alert.Change{{
			Date: "2026-11-25",
			Kind: alert.ChangeHealed,
			Was:  alert.State{Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5},
			Now:  &alert.State{Status: "match", Severity: "ok", API: 1200, Local: 1200},
		}},
	}
}

var csv = []byte("date,link_id,api,local,delta,status\n2026-11-25,,1200,1195,-5,missing\n")

func TestSendPostsOneAlertForAGap(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, nt, _, _ := setupSlack(t, tr)
			rep := oneDayGap()
			out, err := send(context.Background(), nt, rep, csv, nil)
			if err != nil {
				t.Fatal(err)
			}
			posts := f.got(tr.post)
			if len(posts) != 1 {
				t.Fatalf("%d messages posted, want 1", len(posts))
			}
			want := alert.Render(rep, nil)
			wantJSON, _ := json.Marshal(want.Blocks)
			gotJSON, _ := json.Marshal(slacktest.Blocks(t, posts[0]))
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
	f, nt, _, _ := setupSlack(t, bot)
	rep := oneDayGap()
	out, err := send(context.Background(), nt, rep, csv, nil)
	if err != nil {
		t.Fatal(err)
	}
	posts := f.got("/api/chat.postMessage")
	if len(posts) != 1 {
		t.Fatalf("%d messages posted, want 1", len(posts))
	}
	if got := posts[0].Form.Get("channel"); got != "#recon-alerts" {
		t.Errorf("posted to %q", got)
	}
	if posts[0].Form.Get("text") == "" {
		t.Error("no fallback text")
	}
	urls := f.got("/api/files.getUploadURLExternal")
	if len(urls) != 1 || urls[0].Form.Get("filename") != "clickrecon-"+rep.RunKey+".csv" || urls[0].Form.Get("length") != strconv.Itoa(len(csv)) {
		t.Errorf("files.getUploadURLExternal: %+v", urls)
	}
	uploads := f.got("/upload/F0CSV")
	if len(uploads) != 1 || !bytes.Equal(uploads[0].File, csv) {
		t.Fatalf("uploads: %+v, want the CSV once", uploads)
	}
	completes := f.got("/api/files.completeUploadExternal")
	if len(completes) != 1 {
		t.Fatalf("%d files.completeUploadExternal, want 1", len(completes))
	}
	c := completes[0].Form
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
	f, nt, _, _ := setupSlack(t, bot)
	f.Fail("/api/files.completeUploadExternal", slacktest.Fault{Status: 500, Always: true})
	out, err := send(context.Background(), nt, oneDayGap(), csv, nil)
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

// repaired is oneDayGap after the poller backfilled 2026-11-25, a day
// later: the window moved on by one day.
func repaired() report.Report {
	r := gapReport(
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
			f, nt, _, _ := setupSlack(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			if _, err := send(ctx, nt, oneDayGap(), csv, h); err != nil {
				t.Fatal(err)
			}
			before := f.total()
			out, err := send(ctx, nt, oneDayGap(), csv, h)
			if err != nil {
				t.Fatal(err)
			}
			if after := f.total(); after != before {
				t.Errorf("the rerun made %d requests, want none", after-before)
			}
			want := gapOutcome{Transport: tr.name, Unchanged: []string{"2026-11-25"}, Skipped: "already alerted with the same numbers"}
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
			f, nt, _, _ := setupSlack(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := send(ctx, nt, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			out, err := send(ctx, nt, repaired(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2026-11-25"}, out.Healed); diff != "" {
				t.Errorf("healed (-want +got):\n%s", diff)
			}
			wantBlocks, _ := json.Marshal(alert.RenderUpdate(heal()).Blocks)
			var got slacktest.Request
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
				if got.Form.Get("ts") != first.TS || got.Form.Get("channel") != first.Channel {
					t.Errorf("updated %s/%s, want the alert %s/%s", got.Form.Get("channel"), got.Form.Get("ts"), first.Channel, first.TS)
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
			gotBlocks, _ := json.Marshal(slacktest.Blocks(t, got))
			if diff := cmp.Diff(string(wantBlocks), string(gotBlocks)); diff != "" {
				t.Errorf("the heal differs from heal.json.golden's message (-want +got):\n%s", diff)
			}

			before := f.total()
			if out, err := send(ctx, nt, repaired(), nil, h); err != nil || f.total() != before {
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
			f, nt, _, _ := setupSlack(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := send(ctx, nt, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			later := oneDayGap()
			later.Days[1] = day("2026-11-25", 1200, 1198, "missing", "warn")
			out, err := send(ctx, nt, later, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2026-11-25"}, out.Changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
			var got slacktest.Request
			if tr.name == "bot" {
				updates := f.got("/api/chat.update")
				if len(updates) != 1 || updates[0].Form.Get("ts") != first.TS {
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
			if h := slacktest.Header(t, got); !strings.HasPrefix(h, "🔄 Updated") {
				t.Errorf("header %q", h)
			}
			before := f.total()
			if _, err := send(ctx, nt, later, nil, h); err != nil || f.total() != before {
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
			f, nt, _, _ := setupSlack(t, tr)
			h := newHistory(t)
			ctx := context.Background()
			first, err := send(ctx, nt, oneDayGap(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			next := repaired()
			next.Days[1] = day("2026-11-26", 41, 20, "missing", "fail")
			out, err := send(ctx, nt, next, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			posts := f.got(tr.post)
			if len(posts) != 2 {
				t.Fatalf("%d posts, want 2 alerts", len(posts))
			}
			if !strings.Contains(string(mustJSON(t, slacktest.Blocks(t, posts[1]))), "Since the last alert") {
				t.Error("the second alert does not report the heal")
			}
			if tr.name == "bot" {
				updates := f.got("/api/chat.update")
				if len(updates) != 1 || updates[0].Form.Get("ts") != first.TS {
					t.Errorf("chat.update: %d, want the first alert marked healed", len(updates))
				} else if h := slacktest.Header(t, updates[0]); !strings.HasPrefix(h, "✅ Healed") {
					t.Errorf("the first alert became %q", h)
				}
			}
			if diff := cmp.Diff([]string{"2026-11-26"}, out.New); diff != "" {
				t.Errorf("new (-want +got):\n%s", diff)
			}
			// The heal was told; the new gap was alerted: a rerun is quiet.
			before := f.total()
			if _, err := send(ctx, nt, next, nil, h); err != nil || f.total() != before {
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
	f, nt, _, _ := setupSlack(t, bot)
	h := newHistory(t)
	ctx := context.Background()
	if _, err := send(ctx, nt, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	f.Fail("/api/chat.update", slacktest.Fault{SlackErr: "message_not_found"})
	out, err := send(ctx, nt, repaired(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	posts := f.got("/api/chat.postMessage")
	if len(posts) != 2 || !strings.HasPrefix(slacktest.Header(t, posts[1]), "✅ Healed") {
		t.Fatalf("%d posts; want the alert, then the heal", len(posts))
	}
	if out.Posted != history.KindHealed || len(out.Updated) != 0 {
		t.Errorf("Outcome = %+v", out)
	}
}

// A failed heal is not recorded, so the next run tries again.
func TestAFailedHealIsRetriedByTheNextRun(t *testing.T) {
	f, nt, _, _ := setupSlack(t, webhook)
	h := newHistory(t)
	ctx := context.Background()
	if _, err := send(ctx, nt, oneDayGap(), nil, h); err != nil {
		t.Fatal(err)
	}
	// A webhook's 5xx is retried within the run: Slack refuses every try.
	f.Fail(testHookPath, slacktest.Fault{Status: 503, Always: true})
	if _, err := send(ctx, nt, repaired(), nil, h); err == nil {
		t.Fatal("Send succeeded against a 503")
	}
	f.Clear(testHookPath)
	out, err := send(ctx, nt, repaired(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if out.Posted != history.KindHealed {
		t.Errorf("the next run: Outcome = %+v, want the heal posted", out)
	}
}

func TestWithoutHistoryEveryRunAlerts(t *testing.T) {
	f, nt, _, _ := setupSlack(t, webhook)
	for range 2 {
		if _, err := send(context.Background(), nt, oneDayGap(), nil, nil); err != nil {
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
	rep := gapReport(
		day("2026-11-24", 100, 100, "match", "ok"),
		unverifiable("2026-11-25", 80),
		provisional("2026-11-26", 40, 10),
	)
	f, nt, _, _ := setupSlack(t, webhook)
	out, err := send(context.Background(), nt, rep, nil, newHistory(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.total() != 0 || out.Skipped != "no settled gap" {
		t.Errorf("%d requests, Outcome %+v; want nothing sent", f.total(), out)
	}

	f, nt, _, _ = setupSlack(t, webhook, func(c *alert.Config) { c.Notify = alert.NotifyAlways })
	if _, err := send(context.Background(), nt, rep, nil, newHistory(t)); err != nil {
		t.Fatal(err)
	}
	posts := f.got(testHookPath)
	if len(posts) != 1 {
		t.Fatalf("%d posts with SLACK_NOTIFY=always, want 1", len(posts))
	}
	body := string(posts[0].Hook)
	if !strings.Contains(body, "1 provisional · 1 unverifiable") || !strings.Contains(slacktest.Header(t, posts[0]), "not fully verified") {
		t.Errorf("the message does not count them: %s", body)
	}
}

// A day healed earlier and missing again is a new gap.
func TestAGapThatReturnsIsAlertedAgain(t *testing.T) {
	f, nt, _, _ := setupSlack(t, webhook)
	h := newHistory(t)
	ctx := context.Background()
	for _, rep := range []report.Report{oneDayGap(), repaired(), oneDayGap()} {
		if _, err := send(ctx, nt, rep, nil, h); err != nil {
			t.Fatal(err)
		}
	}
	posts := f.got(testHookPath)
	var headers []string
	for _, p := range posts {
		headers = append(headers, strings.SplitN(slacktest.Header(t, p), ":", 2)[0])
	}
	want := []string{"🟠 Click gaps in workspace 48213", "✅ Healed", "🟠 Click gaps in workspace 48213"}
	if diff := cmp.Diff(want, headers); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// decideGaps has a row for each outcome of each kind of gap message:
// what Slack accepted (Unconfirmed 0), and what a post whose answer was
// lost may have shown, once (1) or twice (2). A refused post leaves the
// history as it was: its row is the one before it (a day never alerted, or
// alerted as before).
func TestDecideGaps(t *testing.T) {
	alerted := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5}
	healed := alerted
	healed.Healed = true
	lost := func(a history.Alert, times int) map[string]history.Alert {
		a.Unconfirmed = times
		return map[string]history.Alert{a.Date: a}
	}
	tests := []struct {
		name   string
		day    report.Day
		prior  map[string]history.Alert
		want   string
		repeat bool
	}{
		// An alert (or update) whose answer was lost.
		{"alert_answer_lost_once_is_told_again_marked", day("2026-11-25", 1200, 1195, "missing", "warn"), lost(alerted, 1), "fresh", true},
		{"alert_answer_lost_twice_is_taken_as_told", day("2026-11-25", 1200, 1195, "missing", "warn"), lost(alerted, 2), "same", false},
		{"unconfirmed_alert_whose_numbers_change_is_updated_marked", day("2026-11-25", 1200, 1197, "missing", "warn"), lost(alerted, 2), "changed", true},
		{"unconfirmed_alert_whose_day_heals_is_healed_marked", day("2026-11-25", 1200, 1200, "match", "ok"), lost(alerted, 1), "healed", true},
		{"alert_told_twice_unconfirmed_whose_day_heals_is_healed_marked", day("2026-11-25", 1200, 1200, "match", "ok"), lost(alerted, 2), "healed", true},
		// A heal whose answer was lost.
		{"heal_answer_lost_once_is_told_again_marked", day("2026-11-25", 1200, 1200, "match", "ok"), lost(healed, 1), "healed", true},
		{"heal_answer_lost_twice_is_taken_as_told", day("2026-11-25", 1200, 1200, "match", "ok"), lost(healed, 2), "", false},
		{"unconfirmed_heal_whose_gap_returns_is_new", day("2026-11-25", 1200, 1195, "missing", "warn"), lost(healed, 1), "fresh", false},
		{"unconfirmed_heal_of_an_unverifiable_day_waits", unverifiable("2026-11-25", 1200), lost(healed, 1), "", false},

		{"gap_never_alerted_is_new", day("2026-11-25", 1200, 1195, "missing", "warn"), nil, "fresh", false},
		{"same_numbers_are_not_news", day("2026-11-25", 1200, 1195, "missing", "fail"), map[string]history.Alert{"2026-11-25": alerted}, "same", false},
		{"store_count_changed", day("2026-11-25", 1200, 1197, "missing", "warn"), map[string]history.Alert{"2026-11-25": alerted}, "changed", false},
		{"elido_count_revised", day("2026-11-25", 1201, 1195, "missing", "warn"), map[string]history.Alert{"2026-11-25": alerted}, "changed", false},
		{"missing_turned_surplus", day("2026-11-25", 1200, 1300, "surplus", "fail"), map[string]history.Alert{"2026-11-25": alerted}, "changed", false},
		{"late_click_heals", day("2026-11-25", 1200, 1200, "match", "ok"), map[string]history.Alert{"2026-11-25": alerted}, "healed", false},
		{"healed_day_stays_quiet", day("2026-11-25", 1200, 1200, "match", "ok"), map[string]history.Alert{"2026-11-25": healed}, "", false},
		{"healed_day_reopens", day("2026-11-25", 1200, 1195, "missing", "warn"), map[string]history.Alert{"2026-11-25": healed}, "fresh", false},
		{"match_never_alerted", day("2026-11-25", 1200, 1200, "match", "ok"), nil, "", false},
		{"unverifiable_heals_nothing", unverifiable("2026-11-25", 1200), map[string]history.Alert{"2026-11-25": alerted}, "", false},
		{"provisional_gap_is_not_alerted", provisional("2026-11-25", 1200, 10), nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decideGaps(gapReport(tt.day), tt.prior, nil)
			// The same day re-checked beyond the window: only a heal is
			// told of it.
			q := decideGaps(gapReport(day("2026-11-28", 10, 10, "match", "ok")), tt.prior, []report.Day{tt.day})
			if wantOlder := tt.want == "healed"; (len(q.healed) == 1) != wantOlder || len(q.fresh)+len(q.same)+len(q.changed) > 0 || q.repeat != (wantOlder && tt.repeat) {
				t.Errorf("re-checked beyond the window: %d heals, %d others, repeat %v; want a heal only when the window's day heals",
					len(q.healed), len(q.fresh)+len(q.same)+len(q.changed), q.repeat)
			}
			if p.repeat != tt.repeat {
				t.Errorf("marked as a possible repeat: %v, want %v", p.repeat, tt.repeat)
			}
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

// planGaps makes every choice of the gap alert stage before anything is
// posted: each row is what the history says Slack was told and the run's
// report, and the plan: a new alert (with its CSV and the edits it
// makes), edits and an update, or nothing and why.
func TestPlanGaps(t *testing.T) {
	t.Parallel()
	const d = "2026-11-25"
	was := history.Alert{Date: d, Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		Transport: "bot", Channel: "C1", TS: "1.1", From: "2026-11-24", To: "2026-11-26", RunKey: "earlier"}
	hooked := was
	hooked.Transport, hooked.Channel, hooked.TS = "webhook", "", ""
	healed := was
	healed.Healed = true
	hookedLost := hooked // posted by webhook, its answer lost once
	hookedLost.Unconfirmed = 1
	hookedLostTwice := hooked
	hookedLostTwice.Unconfirmed = 2
	other := was
	other.Date = "2026-11-24"
	prior := func(as ...history.Alert) map[string]history.Alert {
		m := map[string]history.Alert{}
		for _, a := range as {
			m[a.Date] = a
		}
		return m
	}
	message := map[msgRef][]history.Alert{{"C1", "1.1"}: {other, was}}
	gap := gapReport(day(d, 1200, 1195, "missing", "warn"))
	rerun := was // this very run key posted it before (a rerun of the same run)
	rerun.RunKey = gap.RunKey
	shrunk := gapReport(day(d, 1200, 1198, "missing", "warn"))
	mended := gapReport(day(d, 1200, 1200, "match", "ok"))
	newAndMended := gapReport(day("2026-11-24", 800, 790, "missing", "warn"), day(d, 1200, 1200, "match", "ok"))
	webhook := gapSettings{transport: alert.TransportWebhook, history: true}
	bot := gapSettings{transport: alert.TransportBot, history: true}
	type want struct {
		Err      bool
		Alert    bool   // a new alert is posted
		Rows     int    // the days the alert records
		Healed   bool   // the alert says a day healed since
		Attach   bool   // its CSV in the thread
		Edits    []edit // earlier alerts edited (Channel, TS, Dates, recorded or not)
		News     []string
		Update   string // the kind of the update of News, when no edit shows them
		Skipped  string
		RepeatOf int64 // the post the new message names as the one it may repeat
		Marked   bool  // the new message is marked as a possible repeat
	}
	for _, tt := range []struct {
		name string
		rep  report.Report
		csv  []byte
		a    alertFacts
		st   gapSettings
		want want
	}{
		{"unread_history_posts_nothing", gap, csv, alertFacts{Err: errors.New("slack: read alerts: timeout")}, webhook, want{Err: true}},
		{"new_gap_without_history_alerts", gap, csv, alertFacts{}, gapSettings{transport: alert.TransportWebhook}, want{Alert: true, Rows: 1}},
		{"new_gap_alerts_and_records_it", gap, csv, alertFacts{Prior: prior()}, webhook, want{Alert: true, Rows: 1}},
		{"new_gap_with_a_bot_attaches_the_csv", gap, csv, alertFacts{Prior: prior(), Messages: map[msgRef][]history.Alert{}}, bot, want{Alert: true, Rows: 1, Attach: true}},
		{"no_csv_attaches_nothing", gap, nil, alertFacts{Prior: prior(), Messages: map[msgRef][]history.Alert{}}, bot, want{Alert: true, Rows: 1}},
		{"a_gap_never_told_after_an_unconfirmed_post_is_not_marked", gap, csv, alertFacts{Prior: prior(), RepeatOf: 7}, webhook, want{Alert: true, Rows: 1}},
		{"a_gap_told_once_unconfirmed_is_told_again_marked", gap, csv, alertFacts{Prior: prior(hookedLost), RepeatOf: 7}, webhook, want{Alert: true, Rows: 1, RepeatOf: 7, Marked: true}},
		{"a_gap_told_twice_unconfirmed_says_nothing", gap, csv, alertFacts{Prior: prior(hookedLostTwice)}, webhook, want{Skipped: "already alerted with the same numbers"}},
		{"the_heal_of_an_unconfirmed_alert_is_marked", mended, csv, alertFacts{Prior: prior(hookedLostTwice)}, webhook, want{News: []string{d}, Update: history.KindHealed, Marked: true}},
		{"the_heal_of_an_unconfirmed_alert_with_a_bot_is_a_new_message_marked", mended, csv, alertFacts{Prior: prior(hookedLost), Messages: map[msgRef][]history.Alert{}}, bot,
			want{News: []string{d}, Update: history.KindHealed, Marked: true}},
		{"same_numbers_say_nothing", gap, csv, alertFacts{Prior: prior(was)}, bot, want{Skipped: "already alerted with the same numbers"}},
		{"already_posted_for_this_run_key_says_nothing", gap, csv, alertFacts{Prior: prior(rerun)}, webhook, want{Skipped: "already alerted with the same numbers"}},
		{"an_unsettled_earlier_post_posts_nothing", gap, csv, alertFacts{Err: errors.New("slack: nothing posted until an earlier post is settled: timeout")}, bot, want{Err: true}},
		{"a_possible_repeat_is_carried_by_an_update", shrunk, csv, alertFacts{Prior: prior(hookedLost), RepeatOf: 7}, webhook, want{News: []string{d}, Update: history.KindUpdate, RepeatOf: 7, Marked: true}},
		{"an_update_of_a_confirmed_alert_is_not_marked", shrunk, csv, alertFacts{Prior: prior(hooked), RepeatOf: 7}, webhook, want{News: []string{d}, Update: history.KindUpdate}},
		{"changed_numbers_with_a_bot_edit_the_alert_and_record_it", shrunk, csv, alertFacts{Prior: prior(was), Messages: message}, bot,
			want{News: []string{d}, Update: history.KindUpdate, Edits: []edit{{Channel: "C1", TS: "1.1", Dates: []string{d}, Record: &history.Message{}}}}},
		{"no_gap_says_nothing", mended, csv, alertFacts{Prior: prior()}, bot, want{Skipped: "no settled gap"}},
		{"healed_day_stays_quiet", mended, csv, alertFacts{Prior: prior(healed)}, bot, want{Skipped: "no settled gap"}},
		{"always_alerts_without_a_gap", mended, csv, alertFacts{Prior: prior()}, gapSettings{transport: alert.TransportWebhook, history: true, always: true}, want{Alert: true}},
		{"always_alerts_the_same_numbers_again", gap, csv, alertFacts{Prior: prior(hooked)}, gapSettings{transport: alert.TransportWebhook, history: true, always: true}, want{Alert: true, Rows: 1}},
		{"changed_numbers_by_webhook_are_one_update", shrunk, csv, alertFacts{Prior: prior(hooked)}, webhook, want{News: []string{d}, Update: history.KindUpdate}},
		{"heal_by_webhook_is_one_healed_message", mended, csv, alertFacts{Prior: prior(hooked)}, webhook, want{News: []string{d}, Update: history.KindHealed}},
		{"heal_with_a_bot_edits_the_alert_and_records_it", mended, csv, alertFacts{Prior: prior(was), Messages: message}, bot,
			want{News: []string{d}, Update: history.KindHealed, Edits: []edit{{Channel: "C1", TS: "1.1", Dates: []string{d}, Record: &history.Message{}}}}},
		{"heal_of_a_webhook_alert_with_a_bot_is_a_new_message", mended, csv, alertFacts{Prior: prior(hooked), Messages: map[msgRef][]history.Alert{}}, bot,
			want{News: []string{d}, Update: history.KindHealed}},
		{"new_gap_and_heal_alert_and_edit_best_effort", newAndMended, csv, alertFacts{Prior: prior(was), Messages: message}, bot,
			want{Alert: true, Rows: 2, Healed: true, Attach: true, Edits: []edit{{Channel: "C1", TS: "1.1", Dates: []string{d}}}}},
		{"new_gap_and_heal_by_webhook_alert_alone", newAndMended, csv, alertFacts{Prior: prior(hooked)}, webhook, want{Alert: true, Rows: 2, Healed: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := planGaps(tt.rep, tt.csv, tt.a, tt.st)
			got := want{Err: s.Err != nil, Alert: s.Alert != nil, Attach: s.Attach != nil, News: changeDates(s.News), Skipped: s.Out.Skipped}
			marked := func(m alert.Message) bool { return strings.Contains(m.Text, "Possible repeat") }
			if s.Alert != nil {
				got.Rows = len(s.Alert.Intent.Alerts)
				got.RepeatOf, got.Marked = s.Alert.Intent.RepeatOf, marked(s.Alert.Message)
				if s.Alert.Intent.Kind != history.KindAlert || s.Alert.Intent.Scope != scopeOf(tt.rep) {
					t.Errorf("the alert's intent %+v", s.Alert.Intent)
				}
				got.Healed = strings.Contains(strings.ToLower(alert.RenderMarkdown(s.Alert.Message)), "healed")
			}
			if len(s.News) > 0 {
				u := s.update(s.News)
				got.Update, got.RepeatOf, got.Marked = u.Intent.Kind, u.Intent.RepeatOf, marked(u.Message)
			}
			for _, e := range s.Edits {
				g := edit{Channel: e.Channel, TS: e.TS, Dates: e.Dates}
				if e.Record != nil {
					g.Record = &history.Message{}
					if e.Record.Action != history.ActionUpdated || len(e.Rows) != len(e.Dates) {
						t.Errorf("edit %s/%s recorded as %+v with %d rows", e.Channel, e.TS, e.Record, len(e.Rows))
					}
				}
				got.Edits = append(got.Edits, g)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(edit{}, "Message")); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// A new alert posted for a new gap lists a gap Slack was already told of
// with the same numbers as still open, as alerted: not as a gap told for
// the first time, which would alert it twice.
func TestANewAlertListsDaysAlertedBeforeAsStillOpen(t *testing.T) {
	t.Parallel()
	was := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		Transport: "webhook", From: "2026-11-24", To: "2026-11-26", RunKey: "earlier"}
	rep := gapReport(day("2026-11-24", 800, 790, "missing", "warn"), day("2026-11-25", 1200, 1195, "missing", "warn"))
	s := planGaps(rep, nil, alertFacts{Prior: map[string]history.Alert{was.Date: was}}, gapSettings{transport: alert.TransportWebhook, history: true})
	if s.Alert == nil {
		t.Fatal("no alert for the new gap")
	}
	text := alert.RenderMarkdown(s.Alert.Message)
	for _, want := range []string{"**2026-11-24** missing **-10**", "**2026-11-25** still missing **-5**", "as alerted"} {
		if !strings.Contains(text, want) {
			t.Errorf("the alert does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "**2026-11-25** missing") {
		t.Errorf("the alert tells 2026-11-25 as a new gap:\n%s", text)
	}
}

// A day told twice without an answer (a webhook's two posts, both sent)
// is taken as told: a new alert for another gap shows it "still … as
// alerted", never as a gap a third time (seed 1001 of the simulation, 150
// nights). A post that was never sent does not count (resolvePending).
func TestANewAlertShowsADayTakenAsToldAsAlerted(t *testing.T) {
	t.Parallel()
	was := history.Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		Transport: "webhook", From: "2026-11-24", To: "2026-11-26", RunKey: "earlier", Unconfirmed: 2}
	rep := gapReport(day("2026-11-24", 800, 790, "missing", "warn"), day("2026-11-25", 1200, 1195, "missing", "warn"))
	s := planGaps(rep, nil, alertFacts{Prior: map[string]history.Alert{was.Date: was}}, gapSettings{transport: alert.TransportWebhook, history: true})
	if s.Alert == nil {
		t.Fatal("no alert for the new gap")
	}
	text := alert.RenderMarkdown(s.Alert.Message)
	if strings.Contains(text, "**2026-11-25** missing **-5**") || !strings.Contains(text, "**2026-11-25** still missing **-5**") {
		t.Errorf("the alert does not show 2026-11-25 as alerted:\n%s", text)
	}
}
