package job

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/secret"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// Decision is what Slack hears at the end of a run, decided once (decide)
// from the run's Outcome and what the history remembers, then carried out
// by one stage (tell). Every run ends with one, also a run whose report
// could not be stored or whose history is down.
type Decision struct {
	// Gaps says the gap alert stage runs: it posts an alert, an update or
	// a heal, or nothing, by what was alerted before. GapsWhy says why it
	// does not run.
	Gaps    bool
	GapsWhy string
	// Send is what the gap alert stage posts, edits and records, when
	// Gaps (planGaps).
	Send gapSend
	// Caveats are what a gap alert says of itself: the report could not
	// be stored, RECON_TZ changed since the days were last alerted.
	Caveats alert.Caveats
	// LinkReport says a message may link the report: it is whole in its
	// place. A report that could not be stored (a rewrite that died
	// midway may have removed the old report.html) is linked by none.
	LinkReport bool
	// Notice is what the failure notice does (a notice, a reminder, a
	// recovery, nothing), for Causes; NoticeWhy says why nothing is
	// posted when the notice was not even weighed.
	Notice    alert.NoticeAction
	NoticeWhy string
	// NoticeRepeat says the notice's message is marked as a possible
	// repeat: it tells again what a post whose answer was lost may have
	// told, or follows a notice Slack never confirmed (decideNotice).
	NoticeRepeat bool
	Causes       []alert.Cause
	// NoticeTold says the gap alert posted told the notice's causes (the
	// report could not be stored, and nothing else): the notice is
	// recorded as told, not posted (toldByAlert).
	NoticeTold bool
	Memory     memory
	// Record says the run is recorded in the history; RecordWhy why not.
	Record    bool
	RecordWhy string
}

// memory is what the history remembers that the decision weighs: the
// open failure notice, and the zone the run's days were last alerted in.
type memory struct {
	// Remembered says the history was read for the last notice; false
	// (no history, or one that is down) means nothing remembers a notice,
	// and every run that cannot check posts one.
	Remembered bool
	Last       history.Notice // the open notice this run follows, when HadLast
	HadLast    bool
	// Open are the notice scopes with an open notice: a run that checks
	// everything again resolves them all, with one message.
	Open []string
	// Recovered is, when HadRecovered and no notice is open, a notice
	// resolved by a recovery whose answer was lost (Unconfirmed counts
	// such posts); Unanswered are the scopes of such notices.
	Recovered    history.Notice
	HadRecovered bool
	Unanswered   []string
	// Unsettled is why a notice post an earlier run left pending could not
	// be settled (Slack could not be read back): no notice is posted
	// until it is.
	Unsettled error
	// ReadErr is why the history, opened, could not be read for the
	// notice: a cause of its own.
	ReadErr error
	// ZoneWas is the zone the run's days were last alerted in, when it is
	// not the run's (RECON_TZ changed); "" otherwise.
	ZoneWas string
	// Alerted is what Slack was told of the window's days, read when the
	// gap alert stage runs and a history is open (recallAlerts).
	Alerted alertFacts
}

// policy is what the decision takes from the run's settings.
type policy struct {
	Slack    bool // a Slack destination is configured
	Always   bool // SLACK_NOTIFY=always
	DryRun   bool
	Unlocked bool // the run lock was not taken
	History  bool // a history is open to record the run in
	// Transport is how Slack is reached (alert.TransportWebhook or
	// alert.TransportBot).
	Transport string
	Secrets   []string
	Now       time.Time
	// Scope is the notice scope the run's notice is kept under
	// (noticeScopes).
	Scope string
}

// decide says what Slack hears of out, given what the history remembers
// (mem): whether the gap alert stage runs and what it sends (planGaps),
// the failure notice's action and its causes, and whether the run is
// recorded. It does no I/O: everything it weighs was read before.
func decide(out Outcome, mem memory, p policy) Decision {
	causes := failures(out, p.Secrets)
	instead := noticeInstead(out, p, causes)
	d := Decision{Causes: causes, Memory: mem, LinkReport: out.Err(PartReport) == nil}
	if mem.ReadErr != nil {
		// The history answered once and not now: say so, and post as if
		// nothing remembered.
		d.Causes = append(d.Causes, alert.Cause{Key: "history:unavailable", What: "the run history",
			Why: secret.Redact(mem.ReadErr.Error(), "[redacted]", p.Secrets...), Do: "check that the database at HISTORY_DSN is up"})
	}
	if err := out.Err(PartReport); err != nil {
		d.Caveats.ReportNotStored = secret.Redact(err.Error(), "[redacted]", p.Secrets...)
	}
	d.Caveats.ZoneWas = mem.ZoneWas

	d.Gaps, d.GapsWhy = gapsGo(out, p, instead)
	if d.Gaps {
		rep := out.Report
		if !d.LinkReport {
			rep.Link = ""
		}
		_, csv, err := report.SlackCSV(rep)
		d.Send = planGaps(rep, csv, mem.Alerted, gapSettings{transport: p.Transport, always: p.Always, history: p.History, caveats: d.Caveats})
		if err != nil {
			d.Send.Err = err
		}
	}
	d.Record, d.RecordWhy = recordGo(out, p)
	switch {
	case !p.Slack:
		d.Notice, d.NoticeWhy = alert.NoticeQuiet, "Slack is not configured"
	case p.DryRun:
		d.Notice, d.NoticeWhy = alert.NoticeQuiet, "--dry-run"
	case out.Interrupted != nil && !errors.Is(out.Interrupted, context.DeadlineExceeded):
		// No post once the pod is told to stop; a run stopped by its
		// deadline still says so.
		d.Notice, d.NoticeWhy = alert.NoticeQuiet, "the run was stopped"
	case mem.Unsettled != nil:
		d.Notice, d.NoticeWhy = alert.NoticeQuiet, "an earlier notice's post is not settled: Slack could not be read back"
	default:
		d.Notice, d.NoticeRepeat = decideNotice(noticeInput{Causes: d.Causes, Always: instead, Now: p.Now,
			Remembered: mem.Remembered, Last: mem.Last, HadLast: mem.HadLast, Recovered: mem.Recovered, HadRecovered: mem.HadRecovered})
	}
	if d.Gaps {
		d = toldByAlert(d, d.Send.kind())
		if d.NoticeTold {
			// The alert tells the notice's cause: its post records the
			// notice as told, as Slack answers it.
			d.Send.Alert.Intent.Notice = &history.NoticeChange{Scopes: []string{p.Scope}, Fingerprint: fingerprint(d.Causes),
				Reason: alert.NoticeReason(d.Causes), At: p.Now}
		}
	}
	return d
}

// toldByAlert returns dec given the new message of kind posted ("" for
// none) the gap alert stage posts; the notice is carried out only once
// that post succeeded. An alert says of itself that the report
// could not be stored: when that is the notice's one cause, the night has
// one message, the alert, and the notice is recorded as told (so that the
// next night stays quiet and the night reports are stored again says so)
// but not posted. A notice with a cause that kept the run from checking
// is posted as decided.
func toldByAlert(dec Decision, posted string) Decision {
	if posted != history.KindAlert || dec.Caveats.ReportNotStored == "" || len(dec.Causes) == 0 || alert.Unchecked(dec.Causes) {
		return dec
	}
	switch dec.Notice {
	case alert.NoticePost, alert.NoticeRemind, alert.NoticeEveryRun:
		dec.NoticeTold = true
	}
	return dec
}

// noticeInstead says the notice is the run's message: under
// SLACK_NOTIFY=always a run that could not check, with no gap to show,
// posts its notice as its message (an alert of zeros would hide the
// reason). causes are out's failures (failures).
func noticeInstead(out Outcome, p policy, causes []alert.Cause) bool {
	return p.Always && !alert.Alertable(out.Report) && len(causes) > 0
}

// gapsRun says whether the gap alert stage runs for out, and why not
// (gapsGo): the end of a run reads what it weighs only when it does.
func gapsRun(out Outcome, p policy) (bool, string) {
	return gapsGo(out, p, noticeInstead(out, p, failures(out, p.Secrets)))
}

// kind is the kind of the new message s posts for sure (an alert), ""
// when it posts none or only an update whose need depends on Slack's
// answers.
func (s gapSend) kind() string {
	if s.Err == nil && s.Alert != nil {
		return history.KindAlert
	}
	return ""
}

// gapsGo says whether the gap alert stage runs, and why not: never on a
// dry run or after an interruption (no half-finished post), nor when the
// history that de-duplicates alerts could not be read, nothing read, the store not
// identified (its alerts cannot be matched with certainty) or the run
// lock not held; nor when the notice is the run's message.
func gapsGo(out Outcome, p policy, noticeInstead bool) (bool, string) {
	switch {
	case !p.Slack:
		return false, "Slack is not configured"
	case p.DryRun:
		return false, "--dry-run"
	case out.Unread:
		return false, "the run stopped before it read anything"
	case out.Interrupted != nil:
		return false, "the run was stopped"
	case out.Err(PartHistoryDown) != nil || out.Err(PartHistory) != nil:
		return false, "the history could not be read: an alert could repeat"
	case out.Err(PartIdentity) != nil:
		return false, "the store could not be identified: its alerts cannot be matched"
	case p.Unlocked || out.Err(PartLock) != nil:
		return false, "the run lock is not held"
	case noticeInstead:
		return false, "the notice is the run's message (SLACK_NOTIFY=always)"
	}
	return true, ""
}

// recordGo says whether the run is recorded in the history: never on a
// dry run, after an interruption, without the run lock, or when nothing
// was read.
func recordGo(out Outcome, p policy) (bool, string) {
	switch {
	case !p.History:
		return false, "no history"
	case out.Unread:
		return false, "the run stopped before it read anything"
	case p.DryRun:
		return false, "--dry-run"
	case out.Interrupted != nil:
		return false, "the run was stopped"
	case p.Unlocked || out.Err(PartLock) != nil:
		return false, "the run lock is not held"
	}
	return true, ""
}

// remindAfter is how long a failure that lasts stays quiet before its
// notice is posted again.
const remindAfter = 7 * 24 * time.Hour

// noticeInput is what decideNotice weighs.
type noticeInput struct {
	Causes []alert.Cause // what kept this run from checking; none: it checked everything
	// Remembered says the history could be read for the last notice; when
	// false (no history, or a history that is down) nothing remembers a
	// notice and every run that could not check posts one.
	Remembered bool
	Last       history.Notice // the last notice, when HadLast
	HadLast    bool
	// Recovered is a notice resolved by a recovery whose answer was lost,
	// when HadRecovered (memory.Recovered).
	Recovered    history.Notice
	HadRecovered bool
	// Always is SLACK_NOTIFY=always with no gap to alert: the notice is
	// the run's message and is posted every run.
	Always bool
	Now    time.Time
}

// decideNotice says whether a run posts a notice, a reminder, a recovery
// message or nothing, and whether that message is marked as a possible
// repeat. A cause already told stays quiet for remindAfter; a new cause is
// told at once; the first run that checks everything after a notice says
// so, once. What was told is what Slack accepted or what a post whose
// answer was lost may have shown (history.Notice.Unconfirmed); a post
// Slack refused told nothing. A notice or a recovery told once without an
// answer is told once more, marked as a possible repeat (a webhook cannot
// read back whether it arrived), and one told twice so is taken as told;
// a recovery of a notice Slack never confirmed is marked too, and so is a
// notice of the same causes after a recovery whose answer was lost (that
// recovery may never have reached the channel). It does no I/O.
func decideNotice(in noticeInput) (action alert.NoticeAction, repeat bool) {
	open := in.Remembered && in.HadLast && in.Last.Open()
	switch {
	case len(in.Causes) == 0 && open:
		return alert.NoticeRecovered, in.Last.Unconfirmed > 0
	case len(in.Causes) == 0 && in.Remembered && in.HadRecovered && in.Recovered.Unconfirmed == 1:
		return alert.NoticeRecovered, true
	case len(in.Causes) == 0:
		return alert.NoticeQuiet, false
	case !in.Remembered:
		return alert.NoticeEveryRun, false
	case in.Always:
		return alert.NoticePost, false
	case !open:
		// After a recovery whose answer was lost, the same causes may be
		// what the channel still shows: marked.
		again := in.HadRecovered && in.Recovered.Unconfirmed > 0 && within(fingerprint(in.Causes), in.Recovered.Fingerprint)
		return alert.NoticePost, again
	case !within(fingerprint(in.Causes), in.Last.Fingerprint):
		return alert.NoticePost, false
	case in.Last.Unconfirmed == 1:
		return alert.NoticePost, true
	case in.Now.Sub(in.Last.LastPosted) >= remindAfter:
		return alert.NoticeRemind, false
	}
	return alert.NoticeQuiet, false
}

// fingerprint names a set of causes: their keys, sorted, joined by "+".
func fingerprint(causes []alert.Cause) string {
	var keys []string
	for _, c := range causes {
		keys = append(keys, c.Key)
	}
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), "+")
}

// within reports whether every cause of fingerprint fp was told in told.
func within(fp, told string) bool {
	have := strings.Split(told, "+")
	for _, k := range strings.Split(fp, "+") {
		if !slices.Contains(have, k) {
			return false
		}
	}
	return true
}
