package job

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/store"
)

// decide is the one place a run's end is chosen: each row is a run's
// outcome and what the history remembers, and what Slack hears of it.
func TestDecide(t *testing.T) {
	t.Parallel()
	night := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	api, local := int64(10), int64(9)
	gap := report.Report{Days: []report.Day{{Date: "2026-11-18", Status: "missing", Severity: "warn", Settled: true, API: &api, Local: &local}}}
	calm := report.Report{Days: []report.Day{{Date: "2026-11-18", Status: "match", Settled: true, API: &api, Local: &api}}}
	on := policy{Slack: true, History: true, Now: night}
	told := memory{Remembered: true, HadLast: true, Open: []string{"st_1"},
		Last: history.Notice{Fingerprint: "report:unstored", FirstPosted: night.Add(-24 * time.Hour), LastPosted: night.Add(-24 * time.Hour)}}
	unstored := errors.New("write report: mkdir /reports: not a directory")
	type want struct {
		Gaps    bool
		Notice  alert.NoticeAction
		Record  bool
		Caveats alert.Caveats
		Keys    []string
	}
	tests := []struct {
		name string
		out  Outcome
		mem  memory
		p    policy
		want want
	}{
		{"all_well_alerts_the_gap", Outcome{Report: gap}, memory{Remembered: true}, on,
			want{Gaps: true, Notice: alert.NoticeQuiet, Record: true}},
		{"report_not_stored_still_alerts_and_notices", Outcome{Report: gap}.Failed(PartReport, unstored), memory{Remembered: true}, on,
			want{Gaps: true, Notice: alert.NoticePost, Record: true, Caveats: alert.Caveats{ReportNotStored: unstored.Error()}, Keys: []string{"report:unstored"}}},
		{"report_not_stored_told_before_is_quiet", Outcome{Report: calm}.Failed(PartReport, unstored), told, on,
			want{Gaps: true, Notice: alert.NoticeQuiet, Record: true, Caveats: alert.Caveats{ReportNotStored: unstored.Error()}, Keys: []string{"report:unstored"}}},
		{"report_stored_again_recovers", Outcome{Report: calm}, told, on,
			want{Gaps: true, Notice: alert.NoticeRecovered, Record: true}},
		{"history_down_holds_the_alert_back", Outcome{Report: gap}.Failed(PartHistoryDown, errors.New("dial tcp: refused")), memory{}, policy{Slack: true, Now: night},
			want{Notice: alert.NoticeEveryRun, Keys: []string{"history:unavailable"}}},
		{"history_unread_for_the_notice_is_a_cause", Outcome{Report: calm}, memory{ReadErr: errors.New("read notice: timeout")}, on,
			want{Gaps: true, Notice: alert.NoticeEveryRun, Record: true, Keys: []string{"history:unavailable"}}},
		{"zone_change_is_a_caveat", Outcome{Report: gap}, memory{Remembered: true, ZoneWas: "Europe/Warsaw"}, on,
			want{Gaps: true, Notice: alert.NoticeQuiet, Record: true, Caveats: alert.Caveats{ZoneWas: "Europe/Warsaw"}}},
		{"dry_run_says_nothing_records_nothing", Outcome{Report: gap}, memory{}, policy{Slack: true, History: true, DryRun: true, Now: night},
			want{Notice: alert.NoticeQuiet}},
		{"unlocked_posts_the_notice_only", Outcome{Report: gap}.Failed(PartElido, errors.New("elido: 503")), memory{Remembered: true},
			policy{Slack: true, History: true, Unlocked: true, Now: night},
			want{Notice: alert.NoticePost, Keys: []string{"elido:unreadable"}}},
		{"deadline_is_told", Outcome{Report: gap, Interrupted: Interruption{Deadline: true, Timeout: time.Minute}}, memory{Remembered: true}, on,
			want{Notice: alert.NoticePost, Keys: []string{"run:interrupted"}}},
		{"sigterm_is_silent", Outcome{Report: gap, Interrupted: Interruption{}}, memory{Remembered: true}, on,
			want{Notice: alert.NoticeQuiet, Keys: []string{"run:interrupted"}}},
		{"always_without_a_gap_posts_the_notice_instead", Outcome{Report: calm}.Failed(PartStore, errors.New("store down")), memory{Remembered: true},
			policy{Slack: true, History: true, Always: true, Now: night},
			want{Notice: alert.NoticePost, Record: true, Keys: []string{"store:unavailable"}}},
		{"probe_failure_is_a_notice_alone", Outcome{Report: report.Report{Days: []report.Day{}}, Unread: true}.Failed(PartStore, fmt.Errorf("STORE_DSN: %w", store.ErrBadQuery)),
			memory{Remembered: true}, on,
			want{Notice: alert.NoticePost, Keys: []string{"store:bad_query"}}},
		{"probe_failure_under_always_is_a_notice_alone", Outcome{Report: report.Report{Days: []report.Day{}}, Unread: true}.Failed(PartStore, fmt.Errorf("STORE_DSN: %w", store.ErrRefused)),
			memory{Remembered: true}, policy{Slack: true, History: true, Always: true, Now: night},
			want{Notice: alert.NoticePost, Keys: []string{"store:refused"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(tt.out, tt.mem, tt.p)
			var keys []string
			for _, c := range d.Causes {
				keys = append(keys, c.Key)
			}
			got := want{Gaps: d.Gaps, Notice: d.Notice, Record: d.Record, Caveats: d.Caveats, Keys: keys}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if !d.Gaps && d.GapsWhy == "" {
				t.Error("no gap alert, and no reason given")
			}
		})
	}
}

// A notice is kept under what failed: the store's identity when known,
// else the unidentified store of the query, never the DSN's spelling,
// which is only followed for the notices earlier versions kept under it.
func TestNoticeScopes(t *testing.T) {
	t.Parallel()
	own, chain := noticeScopes("", "events", "st_legacy")
	if diff := cmp.Diff([]string{"unidentified store, query events", "st_legacy"}, chain); diff != "" || own != chain[0] {
		t.Errorf("unidentified: own %q, chain (-want +got):\n%s", own, diff)
	}
	own, chain = noticeScopes("st_identity", "events", "st_legacy")
	if diff := cmp.Diff([]string{"st_identity", "unidentified store, query events", "st_legacy"}, chain); diff != "" || own != "st_identity" {
		t.Errorf("identified: own %q, chain (-want +got):\n%s", own, diff)
	}
}

var (
	keyRevoked = alert.Cause{Key: "elido:http_401", What: "Elido's daily counts",
		Why: `elido: GET timeseries 2026-11-24..2026-11-26: HTTP 401 unauthorized: "API key revoked": the API key is missing, revoked or expired: check ELIDO_API_KEY`,
		Do:  "fix ELIDO_API_KEY (or its Secret); the next run checks these days again"}
	storeDown = alert.Cause{Key: "store:unavailable", What: "the store's daily counts",
		Why: "open store postgres://recon@db:5432/clicks: dial tcp 10.0.0.7:5432: connect: connection refused",
		Do:  "check that the store is up and reachable at STORE_DSN; the CronJob retries, and the next run checks these days again"}
)

// decideNotice has a row for each outcome of each kind of notice message:
// accepted (Unconfirmed 0), answer lost once (1) or twice (2); a refused
// post leaves the history as it was, so its row is the one before it.
func TestDecideNotice(t *testing.T) {
	t.Parallel()
	night := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	told := func(fp string, at time.Time) history.Notice {
		return history.Notice{Fingerprint: fp, FirstPosted: at, LastPosted: at}
	}
	lost := func(n history.Notice, times int) history.Notice {
		n.Unconfirmed = times
		return n
	}
	resolved := told("elido:http_401", night)
	resolved.Resolved = night.Add(24 * time.Hour)
	type want struct {
		Action alert.NoticeAction
		Repeat bool
	}
	tests := []struct {
		name string
		in   noticeInput
		want want
	}{
		{"all_checked_nothing_told", noticeInput{Remembered: true, Now: night}, want{alert.NoticeQuiet, false}},
		{"all_checked_after_a_recovery", noticeInput{Remembered: true, HadLast: true, Last: resolved, Now: night.AddDate(0, 0, 3)}, want{alert.NoticeQuiet, false}},
		{"first_failure_is_posted", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, Now: night}, want{alert.NoticePost, false}},
		{"same_cause_next_night_is_quiet", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticeQuiet, false}},
		{"same_cause_six_days_on_is_quiet", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(remindAfter - time.Minute)}, want{alert.NoticeQuiet, false}},
		{"same_cause_a_week_on_is_reminded", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(remindAfter)}, want{alert.NoticeRemind, false}},
		{"a_new_cause_is_posted", noticeInput{Causes: []alert.Cause{keyRevoked, storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticePost, false}},
		{"one_of_two_causes_left_is_quiet", noticeInput{Causes: []alert.Cause{storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401+store:unavailable", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticeQuiet, false}},
		{"another_cause_is_posted", noticeInput{Causes: []alert.Cause{storeDown}, Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticePost, false}},
		{"failure_after_a_recovery_is_posted", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: resolved, Now: night.AddDate(0, 0, 3)}, want{alert.NoticePost, false}},
		{"checking_again_is_told_once", noticeInput{Remembered: true, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticeRecovered, false}},
		{"nothing_remembers_so_every_run_posts", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: false, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticeEveryRun, false}},
		{"nothing_remembers_no_recovery", noticeInput{Remembered: false, HadLast: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticeQuiet, false}},
		{"always_posts_every_run", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true, Always: true,
			Last: told("elido:http_401", night), Now: night.Add(24 * time.Hour)}, want{alert.NoticePost, false}},

		// A notice whose answer was lost once is told once more, marked;
		// twice, it is taken as told.
		{"notice_answer_lost_once_is_told_again_marked", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: lost(told("elido:http_401", night), 1), Now: night.Add(24 * time.Hour)}, want{alert.NoticePost, true}},
		{"notice_answer_lost_twice_is_taken_as_told", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadLast: true,
			Last: lost(told("elido:http_401", night), 2), Now: night.Add(24 * time.Hour)}, want{alert.NoticeQuiet, false}},
		{"recovery_of_an_unconfirmed_notice_is_marked", noticeInput{Remembered: true, HadLast: true,
			Last: lost(told("elido:http_401", night), 2), Now: night.Add(24 * time.Hour)}, want{alert.NoticeRecovered, true}},
		// A recovery whose answer was lost once is told once more,
		// marked; twice, it is taken as told; accepted, it is not
		// repeated.
		{"recovery_answer_lost_once_is_told_again_marked", noticeInput{Remembered: true, HadRecovered: true,
			Recovered: lost(resolved, 1), Now: night.AddDate(0, 0, 2)}, want{alert.NoticeRecovered, true}},
		{"recovery_answer_lost_twice_is_taken_as_told", noticeInput{Remembered: true, HadRecovered: true,
			Recovered: lost(resolved, 2), Now: night.AddDate(0, 0, 2)}, want{alert.NoticeQuiet, false}},
		// The failure back after a recovery whose answer was lost: its
		// notice is posted, marked, since the recovery may never have
		// reached the channel, which then shows the first notice still
		// (the fleet simulation, seed 1000 on SQLite, workspace north).
		{"recovery_answer_lost_then_the_failure_again_is_posted_marked", noticeInput{Causes: []alert.Cause{keyRevoked}, Remembered: true, HadRecovered: true,
			Recovered: lost(resolved, 1), Now: night.AddDate(0, 0, 2)}, want{alert.NoticePost, true}},
		{"recovery_answer_lost_then_another_failure_is_posted", noticeInput{Causes: []alert.Cause{storeDown}, Remembered: true, HadRecovered: true,
			Recovered: lost(resolved, 1), Now: night.AddDate(0, 0, 2)}, want{alert.NoticePost, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got want
			got.Action, got.Repeat = decideNotice(tt.in)
			if got != tt.want {
				t.Errorf("decideNotice = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFingerprintIgnoresOrderAndRepeats(t *testing.T) {
	t.Parallel()
	a := fingerprint([]alert.Cause{storeDown, keyRevoked, storeDown})
	if b := fingerprint([]alert.Cause{keyRevoked, storeDown}); a != b || a != "elido:http_401+store:unavailable" {
		t.Errorf("fingerprints %q and %q, want both elido:http_401+store:unavailable", a, b)
	}
}

// An alert that says the report could not be stored is the night's one
// message: the notice of that cause alone is recorded as told, not
// posted; any other cause, or no alert posted, leaves the notice as
// decided.
func TestToldByAlert(t *testing.T) {
	t.Parallel()
	unstored := alert.Cause{Key: alert.CauseReportUnstored}
	elidoDown := alert.Cause{Key: "elido:http_5xx"}
	cv := alert.Caveats{ReportNotStored: "mkdir: not a directory"}
	for _, tt := range []struct {
		name   string
		dec    Decision
		posted string
		want   bool
	}{
		{"alert_tells_the_report", Decision{Notice: alert.NoticePost, Causes: []alert.Cause{unstored}, Caveats: cv}, history.KindAlert, true},
		{"alert_tells_the_reminder", Decision{Notice: alert.NoticeRemind, Causes: []alert.Cause{unstored}, Caveats: cv}, history.KindAlert, true},
		{"alert_tells_it_without_history", Decision{Notice: alert.NoticeEveryRun, Causes: []alert.Cause{unstored}, Caveats: cv}, history.KindAlert, true},
		{"an_update_does_not_say_it", Decision{Notice: alert.NoticePost, Causes: []alert.Cause{unstored}, Caveats: cv}, history.KindUpdate, false},
		{"nothing_posted", Decision{Notice: alert.NoticePost, Causes: []alert.Cause{unstored}, Caveats: cv}, "", false},
		{"another_cause_is_still_told", Decision{Notice: alert.NoticePost, Causes: []alert.Cause{unstored, elidoDown}, Caveats: cv}, history.KindAlert, false},
		{"quiet_stays_quiet", Decision{Notice: alert.NoticeQuiet, Causes: []alert.Cause{unstored}, Caveats: cv}, history.KindAlert, false},
	} {
		if got := toldByAlert(tt.dec, tt.posted); got.NoticeTold != tt.want || got.Notice != tt.dec.Notice {
			t.Errorf("%s: NoticeTold %v (notice %s), want %v (%s)", tt.name, got.NoticeTold, got.Notice, tt.want, tt.dec.Notice)
		}
	}
}

// The decision holds the whole plan: the gap alert it posts, that the
// notice of a report not stored is told by it, and that no message links
// a report that is not whole in its place.
func TestDecideHoldsThePlan(t *testing.T) {
	t.Parallel()
	night := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	api, local := int64(10), int64(9)
	gap := report.Report{RunKey: "r", Link: "https://reports.example/r/report.html",
		Days: []report.Day{{Date: "2026-11-18", Status: "missing", Severity: "warn", Settled: true, API: &api, Local: &local, Delta: new(int64)}}}
	on := policy{Slack: true, History: true, Transport: alert.TransportWebhook, Now: night}
	d := decide(Outcome{Report: gap}.Failed(PartReport, errors.New("write report: 403")), memory{Remembered: true, Alerted: alertFacts{Prior: map[string]history.Alert{}}}, on)
	if d.Send.Alert == nil || !d.NoticeTold || d.LinkReport {
		t.Errorf("report not stored: alert %v, notice told %v, link %v; want an alert that tells the notice, no link", d.Send.Alert != nil, d.NoticeTold, d.LinkReport)
	}
	if d.Send.Alert != nil && strings.Contains(alert.RenderMarkdown(d.Send.Alert.Message), "reports.example") {
		t.Error("the alert links a report that was not stored")
	}
	d = decide(Outcome{Report: gap}, memory{Remembered: true, Alerted: alertFacts{Prior: map[string]history.Alert{}}}, on)
	if d.Send.Alert == nil || d.NoticeTold || !d.LinkReport {
		t.Errorf("report stored: alert %v, notice told %v, link %v; want an alert, the report linked", d.Send.Alert != nil, d.NoticeTold, d.LinkReport)
	}
	d = decide(Outcome{Report: gap}, memory{Remembered: true, Alerted: alertFacts{Err: errors.New("slack: read alerts: timeout")}}, on)
	if d.Send.Err == nil || d.Send.Alert != nil {
		t.Errorf("unread alerts: err %v, alert %v; want the stage to fail before posting", d.Send.Err, d.Send.Alert != nil)
	}
}
