package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/golden"
	"github.com/clickrecon/clickrecon/report/history"
)

var (
	keyRevoked = Cause{Key: "elido:http_401", What: "Elido's daily counts",
		Why: `elido: GET timeseries 2026-11-24..2026-11-26: HTTP 401 unauthorized: "API key revoked": the API key is missing, revoked or expired: check ELIDO_API_KEY`,
		Do:  "fix ELIDO_API_KEY (or its Secret); the next run checks these days again"}
	storeDown = Cause{Key: "store:unavailable", What: "the store's daily counts",
		Why: "open store postgres://recon@db:5432/clicks: dial tcp 10.0.0.7:5432: connect: connection refused",
		Do:  "check that the store is up and reachable at STORE_DSN; the CronJob retries, and the next run checks these days again"}
)

func TestDecideNotice(t *testing.T) {
	t.Parallel()
	night := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	told := func(fp string, at time.Time) history.Notice {
		return history.Notice{Fingerprint: fp, FirstPosted: at, LastPosted: at}
	}
	resolved := told("elido:http_401", night)
	resolved.Resolved = night.Add(24 * time.Hour)
	tests := []struct {
		name string
		in   NoticeInput
		want NoticeAction
	}{
		{"all_checked_nothing_told", NoticeInput{Remembered: true, Now: night}, NoticeQuiet},
		{"all_checked_after_a_recovery", NoticeInput{Remembered: true, HadLast: true, Last: resolved, Now: night.AddDate(0, 0, 3)}, NoticeQuiet},
		{"first_failure_is_posted", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, Now: night}, NoticePost},
		{"same_cause_next_night_is_quiet", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticeQuiet},
		{"same_cause_six_days_on_is_quiet", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(RemindAfter - time.Minute)}, NoticeQuiet},
		{"same_cause_a_week_on_is_reminded", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(RemindAfter)}, NoticeRemind},
		{"a_new_cause_is_posted", NoticeInput{Causes: []Cause{keyRevoked, storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticePost},
		{"one_of_two_causes_left_is_quiet", NoticeInput{Causes: []Cause{storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401+store:unavailable", night), Now: night.Add(24 * time.Hour)}, NoticeQuiet},
		{"another_cause_is_posted", NoticeInput{Causes: []Cause{storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticePost},
		{"failure_after_a_recovery_is_posted", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: resolved, Now: night.AddDate(0, 0, 3)}, NoticePost},
		{"checking_again_is_told_once", NoticeInput{Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticeRecovered},
		{"nothing_remembers_so_every_run_posts", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: false, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticePost},
		{"nothing_remembers_no_recovery", NoticeInput{Remembered: false, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticeQuiet},
		{"always_posts_every_run", NoticeInput{Causes: []Cause{keyRevoked}, Remembered: true, HadLast: true, Always: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, NoticePost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecideNotice(tt.in); got != tt.want {
				t.Errorf("DecideNotice = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFingerprintIgnoresOrderAndRepeats(t *testing.T) {
	t.Parallel()
	a := Fingerprint([]Cause{storeDown, keyRevoked, storeDown})
	if b := Fingerprint([]Cause{keyRevoked, storeDown}); a != b || a != "elido:http_401+store:unavailable" {
		t.Errorf("fingerprints %q and %q, want both elido:http_401+store:unavailable", a, b)
	}
}

func TestRenderNoticeGolden(t *testing.T) {
	t.Parallel()
	rep := newReport(unverifiable("2026-11-24", 800), unverifiable("2026-11-25", 810), unverifiable("2026-11-26", 790))
	rep.Status = "incomplete"
	first := time.Date(2026, 11, 20, 3, 0, 9, 0, time.UTC)
	tests := []struct {
		name string
		msg  Message
	}{
		{"notice_key_revoked", RenderNotice(rep, []Cause{keyRevoked}, NoticeOf{Action: NoticePost, Remembered: true})},
		{"notice_reminder_linked", RenderNotice(linked(rep), []Cause{keyRevoked, storeDown}, NoticeOf{Action: NoticeRemind, First: first, Remembered: true})},
		{"notice_history_down", RenderNotice(rep, []Cause{{Key: "history:unavailable", What: "the run history",
			Why: "open history postgres://recon@db/history: connection refused", Do: "check HISTORY_DSN"}}, NoticeOf{Action: NoticePost})},
		{"recovered", RenderRecovered(newReport(day("2026-11-24", 800, 800, "match", "ok")),
			history.Notice{Reason: NoticeReason([]Cause{keyRevoked}), FirstPosted: first, LastPosted: first})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLimits(t, messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".json.golden", messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".md.golden", []byte(RenderMarkdown(tt.msg)))
		})
	}
	// The reason and what to do are in the text a notification shows.
	text := RenderNotice(rep, []Cause{keyRevoked}, NoticeOf{Action: NoticePost, Remembered: true}).Text
	for _, s := range []string{"401", "check ELIDO_API_KEY", "2026-11-24 to 2026-11-26"} {
		if !strings.Contains(text, s) {
			t.Errorf("the notice's text lacks %q: %s", s, text)
		}
	}
}

// A reason that carries markup, a mention or a huge body stays inert and
// within Slack's limits.
func TestRenderNoticeKeepsReasonsInert(t *testing.T) {
	t.Parallel()
	rep := newReport(unverifiable("2026-11-24", 800))
	c := Cause{Key: "elido:http_500", What: "Elido's daily counts", Why: "<!here> `boom`\n" + strings.Repeat("x", 5000), Do: "wait"}
	m := RenderNotice(rep, []Cause{c, c, c, c, c, c, c}, NoticeOf{Action: NoticePost, Remembered: true})
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	b := messageJSON(t, m)
	checkLimits(t, b)
	if strings.Contains(string(b), "<!here>") {
		t.Error("the reason's mention reached the message")
	}
}
