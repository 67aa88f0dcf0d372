package alert

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
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

// NoticeAction is what a run tells Slack about checking, the result of
// DecideNotice.
type NoticeAction string

// The notice actions.
const (
	NoticeQuiet     NoticeAction = "quiet"     // nothing: all is well, or Slack was told already
	NoticePost      NoticeAction = "post"      // a notice: the run could not check, for a cause not yet told
	NoticeRemind    NoticeAction = "remind"    // the same notice again: a week passed since the last
	NoticeRecovered NoticeAction = "recovered" // "checking again": a run checked everything after a notice
)

// RemindAfter is how long a failure that lasts stays quiet before its
// notice is posted again.
const RemindAfter = 7 * 24 * time.Hour

// NoticeInput is what DecideNotice weighs.
type NoticeInput struct {
	Causes []Cause // what kept this run from checking; none: it checked everything
	// Remembered says the history could be read for the last notice; when
	// false (no history, or a history that is down) nothing remembers a
	// notice and every run that could not check posts one.
	Remembered bool
	Last       history.Notice // the last notice, when HadLast
	HadLast    bool
	// Always is SLACK_NOTIFY=always with no gap to alert: the notice is
	// the run's message and is posted every run.
	Always bool
	Now    time.Time
}

// DecideNotice says whether a run posts a notice, a reminder, a recovery
// message or nothing. A cause already told stays quiet for RemindAfter; a
// new cause is told at once; the first run that checks everything after a
// notice says so, once.
func DecideNotice(in NoticeInput) NoticeAction {
	open := in.Remembered && in.HadLast && in.Last.Open()
	switch {
	case len(in.Causes) == 0 && open:
		return NoticeRecovered
	case len(in.Causes) == 0:
		return NoticeQuiet
	case !in.Remembered || in.Always || !open:
		return NoticePost
	case !within(Fingerprint(in.Causes), in.Last.Fingerprint):
		return NoticePost
	case in.Now.Sub(in.Last.LastPosted) >= RemindAfter:
		return NoticeRemind
	}
	return NoticeQuiet
}

// Fingerprint names a set of causes: their keys, sorted, joined by "+".
func Fingerprint(causes []Cause) string {
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

// Always reports whether SLACK_NOTIFY=always: every run posts a message.
func (n *Notifier) Always() bool { return n != nil && n.notify == NotifyAlways }

// Alertable reports whether rep has a settled gap a Slack alert shows.
func Alertable(rep report.Report) bool { return len(alertable(rep.Days)) > 0 }

// PostNotice posts m, a notice or a recovery message, as it is: it is not
// de-duplicated here (DecideNotice did that) and not recorded as an alert.
func (n *Notifier) PostNotice(ctx context.Context, m Message) error {
	if n == nil {
		return nil
	}
	if _, _, err := n.post(ctx, checked(m)); err != nil {
		return fmt.Errorf("post the Slack notice: %w", err)
	}
	return nil
}

// How much of a notice's lists and texts it shows.
const (
	mostNoticeDays = 10
	maxWhy         = 600
)

// NoticeOf is how a notice stands to the ones before it.
type NoticeOf struct {
	Action NoticeAction // NoticePost, or NoticeRemind: a failure told before
	First  time.Time    // when a reminder's failure was first told
	// Remembered says the history keeps the notice; false (the history
	// is down, or there is none) says nothing does, so every run posts it.
	Remembered bool
}

// RenderNotice builds the short message a run posts when it could not
// check what it was asked to: which days, each cause with its reason and
// what to do, the command that checks again, and the report.
func RenderNotice(rep report.Report, causes []Cause, of NoticeOf) Message {
	reminder, first, remembered := of.Action == NoticeRemind, of.First, of.Remembered
	ws := clipRunes(rep.WorkspaceID, 60)
	when := span(rep.Window.From, rep.Window.To)
	title := fmt.Sprintf("⚠️ clickrecon could not check workspace %s: %s", ws, when)
	if reminder {
		title = fmt.Sprintf("⏰ Still not checking workspace %s: %s", ws, when)
	}

	var days []string
	for _, d := range rep.Days {
		if d.Settled && reconcile.Status(d.Status) == reconcile.Unverifiable {
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

	text := fmt.Sprintf("clickrecon could not check workspace %s, %s (%s)", ws, when, rep.Window.TZ)
	if len(causes) > 0 {
		c := causes[0]
		text += fmt.Sprintf(": %s: %s. %s", c.What, oneLine.Replace(clipRunes(c.Why, 300)), c.Do)
	}
	text += ". Run " + rep.RunKey + "."
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks(blocks)}
}

// RenderRecovered builds the one message that says checking works again
// after a notice: the run that checked everything, and what was told.
func RenderRecovered(rep report.Report, last history.Notice) Message {
	ws := clipRunes(rep.WorkspaceID, 60)
	when := span(rep.Window.From, rep.Window.To)
	title := fmt.Sprintf("✅ Checking again: workspace %s", ws)
	body := fmt.Sprintf("Run %s checked every settled day of %s (%s) · status *%s*.", code(rep.RunKey), when, esc(rep.Window.TZ), esc(report.StatusText(rep.Status)))
	if last.Reason != "" {
		body += fmt.Sprintf("\nIt could not check from %s: %s", stamp(last.FirstPosted), plain(clipRunes(last.Reason, maxWhy)))
	}
	blocks := []slack.Block{
		header(title),
		section(body),
		note(fmt.Sprintf("Run %s · generated %s · %s", code(rep.RunKey), stamp(rep.GeneratedAt), reportLink(rep.Link))),
	}
	text := fmt.Sprintf("clickrecon checks workspace %s again: run %s checked %s (%s).", ws, rep.RunKey, when, rep.Window.TZ)
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
