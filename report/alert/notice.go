package alert

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// Cause is one thing that kept a run from checking what it was asked to:
// a source that could not be read, a history that is down, days that
// could not be verified.
type Cause struct {
	// Key names the cause the same way every night it lasts
	// ("elido:http_401", "store:unavailable"): no date, no request id.
	// It is what a later run compares to stay quiet.
	Key  string
	What string // what could not be checked: "Elido's daily counts"
	Why  string // the reason, from the error, secrets already removed
	Do   string // what to do about it
}

// CauseReportUnstored is the key of the one cause that does not keep a
// run from checking: its report could not be stored. A notice of this
// cause alone says the report was not stored, not that the run could not
// check; a gap alert that says it leaves nothing for a notice to post.
const CauseReportUnstored = "report:unstored"

// Unchecked reports whether any of causes kept the run from checking
// (any cause but CauseReportUnstored).
func Unchecked(causes []Cause) bool {
	for _, c := range causes {
		if c.Key != CauseReportUnstored {
			return true
		}
	}
	return false
}

// NoticeAction is what a run tells Slack about checking, as the run's
// decision found it.
type NoticeAction string

// The notice actions.
const (
	NoticeQuiet     NoticeAction = "quiet"     // nothing: all is well, or Slack was told already
	NoticePost      NoticeAction = "post"      // a notice: the run could not check, for a cause not yet told
	NoticeRemind    NoticeAction = "remind"    // the same notice again: a week passed since the last
	NoticeRecovered NoticeAction = "recovered" // "checking again": a run checked everything after a notice
	// NoticeEveryRun is a notice nothing remembers (no history, or one
	// that is down): every run that cannot check posts it, and says so.
	NoticeEveryRun NoticeAction = "every_run"
)

// Always reports whether SLACK_NOTIFY=always: every run posts a message.
func (n *Notifier) Always() bool { return n != nil && n.notify == NotifyAlways }

// Alertable reports whether rep has a settled gap a Slack alert shows.
func Alertable(rep report.Report) bool { return len(alertable(rep.Days)) > 0 }

// How much of a notice's lists and texts it shows.
const (
	mostNoticeDays = 10
	maxWhy         = 600
)

// NoticeOf is how a notice stands to the ones before it.
type NoticeOf struct {
	// Action is NoticePost, NoticeRemind (a failure told before) or
	// NoticeEveryRun (nothing remembers the notice).
	Action NoticeAction
	First  time.Time // when a reminder's failure was first told
}

// RenderNotice builds the short message a run posts when it could not
// check what it was asked to: which days, each cause with its reason and
// what to do, the command that checks again, and the report.
func RenderNotice(rep report.Report, causes []Cause, of NoticeOf) Message {
	reminder, first, remembered := of.Action == NoticeRemind, of.First, of.Action != NoticeEveryRun
	ws := clipRunes(rep.WorkspaceID, 60)
	when := span(rep.Window.From, rep.Window.To)
	could, still := "could not check workspace", "Still not checking workspace"
	if !Unchecked(causes) {
		could, still = "could not store the report of workspace", "Still not storing the report of workspace"
	}
	title := fmt.Sprintf("⚠️ clickrecon %s %s: %s", could, ws, when)
	if reminder {
		title = fmt.Sprintf("⏰ %s %s: %s", still, ws, when)
	}

	var days []string
	for _, d := range rep.Days {
		if d.Settled && d.Status == reconcile.Unverifiable {
			days = append(days, plain(d.Date))
		}
	}
	var b strings.Builder
	switch {
	case len(days) > 0:
		fmt.Fprintf(&b, "*Not checked*: %d of %d %s of %s (%s)", len(days), rep.Coverage.Days, plural(rep.Coverage.Days, "day", "days"), when, esc(rep.Window.TZ))
		shown := days[:min(len(days), mostNoticeDays)]
		fmt.Fprintf(&b, ": %s", strings.Join(shown, ", "))
		if left := len(days) - len(shown); left > 0 {
			fmt.Fprintf(&b, " and %d more", left)
		}
	default:
		fmt.Fprintf(&b, "*Window* %s (%s) · status *%s*", when, esc(rep.Window.TZ), esc(report.StatusText(rep.Status)))
	}
	if reminder && !first.IsZero() {
		fmt.Fprintf(&b, "\nFirst told %s; nothing has changed since.", stamp(first))
	}
	blocks := []slack.Block{header(title), section(b.String())}

	var lines []string
	for _, c := range causes {
		lines = append(lines, fmt.Sprintf("• *%s*: %s\n    → %s", plain(c.What), plain(clipRunes(c.Why, maxWhy)), plain(c.Do)))
	}
	blocks = append(blocks, section(list("*Why*", lines, mostFindings, "cause", "causes")))
	if !remembered {
		blocks = append(blocks, note("Nothing remembers this notice (the run history is down or not set), so every run that cannot check posts it again."))
	} else {
		blocks = append(blocks, note("This notice is not repeated while the cause lasts (a reminder after a week at most); a run that checks everything again says so."))
	}
	blocks = append(blocks,
		section("*Check again*\n```"+command(rep.Window.From, rep.Window.To, rep.Window.TZ)+"```"),
		note(fmt.Sprintf("Run %s · generated %s · %s", code(rep.RunKey), stamp(rep.GeneratedAt), reportLink(rep.Link))),
	)

	text := fmt.Sprintf("clickrecon %s %s, %s (%s)", could, ws, when, rep.Window.TZ)
	if len(causes) > 0 {
		c := causes[0]
		text += fmt.Sprintf(": %s: %s. %s", c.What, oneLine.Replace(clipRunes(c.Why, 300)), c.Do)
	}
	text += ". Run " + rep.RunKey + "."
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks(blocks)}
}

// RenderRecovered builds the one message that says checking works again
// after a notice: the run that checked everything, and what was told
// (reason, the notice's, told first at firstPosted; "" when unknown).
// stored says the notice was only that the report could not be stored
// (Unchecked false): the message then says reports are stored again.
func RenderRecovered(rep report.Report, reason string, firstPosted time.Time, stored bool) Message {
	ws := clipRunes(rep.WorkspaceID, 60)
	when := span(rep.Window.From, rep.Window.To)
	title := fmt.Sprintf("✅ Checking again: workspace %s", ws)
	body := fmt.Sprintf("Run %s checked every settled day of %s (%s) · status *%s*.", code(rep.RunKey), when, esc(rep.Window.TZ), esc(report.StatusText(rep.Status)))
	since := "It could not check from %s: %s"
	text := fmt.Sprintf("clickrecon checks workspace %s again: run %s checked %s (%s).", ws, rep.RunKey, when, rep.Window.TZ)
	if stored {
		title = fmt.Sprintf("✅ Reports stored again: workspace %s", ws)
		body = fmt.Sprintf("Run %s stored its report of %s (%s) · status *%s*.", code(rep.RunKey), when, esc(rep.Window.TZ), esc(report.StatusText(rep.Status)))
		since = "Reports could not be stored from %s: %s"
		text = fmt.Sprintf("clickrecon stores the reports of workspace %s again: run %s stored %s (%s).", ws, rep.RunKey, when, rep.Window.TZ)
	}
	if reason != "" {
		body += "\n" + fmt.Sprintf(since, stamp(firstPosted), plain(clipRunes(reason, maxWhy)))
	}
	blocks := []slack.Block{
		header(title),
		section(body),
		note(fmt.Sprintf("Run %s · generated %s · %s", code(rep.RunKey), stamp(rep.GeneratedAt), reportLink(rep.Link))),
	}
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks(blocks)}
}

// NoticeReason is the reason a notice records: each cause's, on one line.
func NoticeReason(causes []Cause) string {
	var rs []string
	for _, c := range causes {
		rs = append(rs, c.What+": "+oneLine.Replace(c.Why))
	}
	return clipRunes(strings.Join(rs, "; "), 2000)
}
