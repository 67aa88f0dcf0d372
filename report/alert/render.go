package alert

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// Slack's Block Kit limits. Text lengths are measured in bytes, which is
// never less than the characters (or UTF-16 units) Slack counts, so a
// message within these limits is within Slack's.
const (
	maxBlocks     = 50
	maxText       = 3000 // a section's text, a context element
	maxHeaderText = 150
	maxFallback   = 3000 // the top-level text: Slack allows more, notifications show less
)

// How much of each list a message shows before it says "and N more".
const (
	mostDays     = 10
	mostLinks    = 10
	mostFindings = 5
	mostChanges  = 10
)

// Message is one Slack message: Block Kit blocks and the plain-text
// fallback that notifications, screen readers and old clients show. Its
// JSON is the payload Slack receives.
type Message struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

// State is a day's status and counts, as alerted or as read now.
type State struct {
	Status   reconcile.Status
	Severity reconcile.Severity
	API      int64
	Local    int64
	Delta    int64
}

// ChangeKind is what became of an alerted day, the Kind of a Change.
type ChangeKind string

// The kinds of change.
const (
	ChangeHealed  ChangeKind = "healed"  // it matches now
	ChangeChanged ChangeKind = "changed" // still a gap, with other numbers
	ChangeOpen    ChangeKind = "open"    // still a gap as alerted
)

// Change is what became of a day Slack was told about earlier.
type Change struct {
	Date string
	Kind ChangeKind
	Was  State  // as alerted
	Now  *State // as read by this run; nil when this run did not read the day
}

// Update is an earlier alert's days, as a later run sees them: the content
// of a chat.update of that alert, or of a short message after it.
type Update struct {
	WorkspaceID string
	TZ          string
	From, To    string // the window of the earlier alert
	RunKey      string // the run that saw the change
	GeneratedAt time.Time
	Days        []Change
}

// Render builds the alert for rep: a header naming the workspace and
// window, the totals, the worst days and links, the findings, what became
// of days alerted earlier (since), the coverage, the command that
// re-checks the gaps and the run key. Long lists are cut to what fits, with
// the number left out, so the message always fits Slack's limits.
func Render(rep report.Report, since []Change) Message {
	return RenderWith(rep, since, Caveats{})
}

// Caveats are what an alert says of itself besides the report it shows.
type Caveats struct {
	// ReportNotStored is why the run's report could not be stored (secrets
	// removed); "" when it was. The alert then says so and links nothing:
	// it is all there is of the run.
	ReportNotStored string
	// ZoneWas is the zone (RECON_TZ) the window's days were last alerted
	// in, when it is not the report's: the same lost clicks may be told
	// again under the new zone's dates, and the alert says so.
	ZoneWas string
	// Alerted are the days Slack was already told of with these very
	// numbers: the alert, posted for other days, lists them as still
	// open, as alerted, not as gaps it tells for the first time.
	Alerted map[string]bool
}

// RenderWith is Render with the alert's caveats, each said plainly under
// the totals.
func RenderWith(rep report.Report, since []Change, cv Caveats) Message {
	gaps := alertable(rep.Days)
	sortGaps(gaps)
	ws := clipRunes(rep.WorkspaceID, 60)

	var title, lead string
	switch {
	case len(gaps) > 0:
		title = fmt.Sprintf("%s Click gaps in workspace %s: %s", gapEmoji(gaps), ws, span(rep.Window.From, rep.Window.To))
		lead = fmt.Sprintf("Click gaps in workspace %s, %s (%s): %s", ws, span(rep.Window.From, rep.Window.To), rep.Window.TZ, gapSummary(gaps))
	case rep.Status == report.StatusIncomplete:
		title = fmt.Sprintf("⚠️ Clicks not fully verified in workspace %s: %s", ws, span(rep.Window.From, rep.Window.To))
		lead = fmt.Sprintf("No click gaps found in workspace %s, %s (%s), but not every day could be verified", ws, span(rep.Window.From, rep.Window.To), rep.Window.TZ)
	default:
		title = fmt.Sprintf("✅ No click gaps in workspace %s: %s", ws, span(rep.Window.From, rep.Window.To))
		lead = fmt.Sprintf("No click gaps in workspace %s, %s (%s): the store recorded what Elido counted", ws, span(rep.Window.From, rep.Window.To), rep.Window.TZ)
	}

	blocks := []slack.Block{header(title), section(summary(rep))}
	var said []string
	if cv.ZoneWas != "" && cv.ZoneWas != rep.Window.TZ {
		z := fmt.Sprintf("The zone changed from %s to %s (RECON_TZ) since these days were last alerted: the days here may have been alerted under the old zone, with other dates and counts.",
			plain(clipRunes(cv.ZoneWas, 60)), plain(clipRunes(rep.Window.TZ, 60)))
		blocks = append(blocks, section(":globe_with_meridians: "+z))
		said = append(said, z)
	}
	if cv.ReportNotStored != "" {
		r := "The report could not be stored (" + plain(clipRunes(cv.ReportNotStored, 300)) + "): this message is all that is kept of the run."
		blocks = append(blocks, section(":warning: "+r))
		said = append(said, "The report could not be stored: this message is all that is kept of the run.")
	}
	if len(gaps) > 0 {
		lines := make([]string, len(gaps))
		for i, d := range gaps {
			lines[i] = fmt.Sprintf("• *%s* %s *%s* (Elido %s · store %s) · %s",
				plain(d.Date), plain(d.Status), words.Signed(*d.Delta), words.Num(*d.API), words.Num(*d.Local), plain(d.Severity))
			if cv.Alerted[d.Date] {
				lines[i] = fmt.Sprintf("• 🔴 *%s* still %s *%s* (Elido %s · store %s) · %s, as alerted",
					plain(d.Date), plain(d.Status), words.Signed(*d.Delta), words.Num(*d.API), words.Num(*d.Local), plain(d.Severity))
			}
			if why := report.DiagnosisLine(rep, d.Date); why != "" {
				lines[i] += "\n      ↳ _why:_ " + plain(clipRunes(why, 400))
			}
		}
		blocks = append(blocks, section(list("*Days with gaps*, worst first", lines, mostDays, "day", "days")))
	}
	if links := report.WorstLinks(rep.Links); len(links) > 0 {
		lines := make([]string, len(links))
		for i, l := range links {
			lines[i] = fmt.Sprintf("• %s on %s: *%s* (Elido %s · store %s) · %s",
				code(clipRunes(l.LinkID, 100)), plain(l.Date), words.Signed(l.Delta), words.Num(l.API), words.Num(l.Local), plain(l.Status))
		}
		blocks = append(blocks, section(list("*Links with gaps*, worst first", lines, mostLinks, "link", "links")))
	}
	if len(rep.Findings) > 0 {
		lines := make([]string, len(rep.Findings))
		for i, f := range rep.Findings {
			lines[i] = fmt.Sprintf("• *%s*: %s", plain(clipRunes(f.Kind, 60)), plain(clipRunes(f.Message, 400)))
		}
		blocks = append(blocks, section(list("*Findings*", lines, mostFindings, "finding", "findings")))
	}
	if len(since) > 0 {
		blocks = append(blocks, section(list("*Since the last alert*", changeLines(since), mostChanges, "day", "days")))
	}
	blocks = append(blocks,
		note(coverage(rep)),
		section("*Re-check*\n```"+recheck(rep)+"```"),
		note(fmt.Sprintf("Run %s · generated %s · %s", code(rep.RunKey), stamp(rep.GeneratedAt), whereReport(rep.Link, cv))),
	)
	text := lead + ". " + strings.Join(append(said, "Run "+rep.RunKey+"."), " ")
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks(blocks)}
}

// reportLink is the end of a message's last line: a link to the report
// when RECON_REPORT_URL serves it, else where to look.
func reportLink(link string) string {
	if link == "" {
		return "the full list is in the report"
	}
	return "the full list is in <" + linkURL(link) + "|the report>"
}

// whereReport is reportLink, unless the report could not be stored.
func whereReport(link string, cv Caveats) string {
	if cv.ReportNotStored != "" {
		return "the report could not be stored"
	}
	return reportLink(link)
}

// linkURL makes a URL safe inside Slack's <url|text>: the characters
// mrkdwn reserves are escaped, and | and > cannot end the link early.
func linkURL(u string) string {
	return strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C", " ", "%20").Replace(u)
}

// RenderUpdate builds what an earlier alert becomes when its days change:
// all healed, or some updated, with the numbers as alerted and as now.
func RenderUpdate(u Update) Message {
	days := append([]Change(nil), u.Days...)
	sort.Slice(days, func(i, j int) bool { return days[i].Date < days[j].Date })
	ws := clipRunes(u.WorkspaceID, 60)
	healed := true
	for _, c := range days {
		healed = healed && c.Kind == ChangeHealed
	}
	title := fmt.Sprintf("🔄 Updated: click gaps in workspace %s: %s", ws, span(u.From, u.To))
	lead := "Click gaps updated"
	if healed {
		title = fmt.Sprintf("✅ Healed: click gaps in workspace %s: %s", ws, span(u.From, u.To))
		lead = "Click gaps healed"
	}
	var heals, changes []string
	for _, c := range days {
		switch c.Kind {
		case ChangeHealed:
			heals = append(heals, c.Date)
		case ChangeChanged:
			changes = append(changes, c.Date)
		}
	}
	var what []string
	if len(heals) > 0 {
		what = append(what, "healed "+strings.Join(heals, ", "))
	}
	if len(changes) > 0 {
		what = append(what, "changed "+strings.Join(changes, ", "))
	}
	text := fmt.Sprintf("%s in workspace %s, %s (%s): %s. Run %s.", lead, ws, span(u.From, u.To), u.TZ, strings.Join(what, "; "), u.RunKey)

	first, last := u.From, u.To
	if len(days) > 0 {
		first, last = days[0].Date, days[len(days)-1].Date
	}
	blocks := []slack.Block{
		header(title),
		section(list("*Days alerted earlier*", changeLines(days), mostChanges*2, "day", "days")),
		section("*Re-check*\n```" + command(first, last, u.TZ) + "```"),
		note(fmt.Sprintf("Updated by run %s at %s", code(u.RunKey), stamp(u.GeneratedAt))),
	}
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks(blocks)}
}

// Validate reports the first Slack limit m breaks: more than 50 blocks, a
// header over 150 characters, a text over 3000, an empty text or fallback.
func (m Message) Validate() error {
	if strings.TrimSpace(m.Text) == "" {
		return errors.New("the message has no fallback text")
	}
	if len(m.Blocks) == 0 || len(m.Blocks) > maxBlocks {
		return fmt.Errorf("the message has %d blocks, want 1 to %d", len(m.Blocks), maxBlocks)
	}
	if len(m.Text) > maxFallback {
		return fmt.Errorf("the fallback text has %d bytes, more than %d", len(m.Text), maxFallback)
	}
	for i, b := range m.Blocks {
		for _, t := range texts(b) {
			limit := maxText
			if b.BlockType() == slack.MBTHeader {
				limit = maxHeaderText
			}
			if t == "" || len(t) > limit {
				return fmt.Errorf("block %d (%s) has a text of %d bytes, want 1 to %d", i, b.BlockType(), len(t), limit)
			}
		}
	}
	return nil
}

// texts returns the text objects of a block Render makes.
func texts(b slack.Block) []string {
	switch b := b.(type) {
	case *slack.HeaderBlock:
		return []string{b.Text.Text}
	case *slack.SectionBlock:
		return []string{b.Text.Text}
	case *slack.ContextBlock:
		var ts []string
		for _, e := range b.ContextElements.Elements {
			if t, ok := e.(*slack.TextBlockObject); ok {
				ts = append(ts, t.Text)
			}
		}
		return ts
	}
	return nil
}

// minimal is the message sent if a rendered one ever broke a limit: the
// fallback text alone, so the alert still goes out.
func minimal(m Message) Message {
	return Message{Text: clipBytes(m.Text, maxFallback), Blocks: []slack.Block{section(clipBytes(m.Text, maxText))}}
}

func header(text string) slack.Block {
	return slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, clipBytes(text, maxHeaderText), true, false))
}

func section(mrkdwn string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, clipBytes(mrkdwn, maxText), false, false), nil, nil)
}

func note(mrkdwn string) slack.Block {
	return slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, clipBytes(mrkdwn, maxText), false, false))
}

// capBlocks keeps a message within the block limit. Render makes far fewer
// blocks than that; this is the guarantee, not the plan.
func capBlocks(blocks []slack.Block) []slack.Block {
	if len(blocks) <= maxBlocks {
		return blocks
	}
	return append(blocks[:maxBlocks-1:maxBlocks-1], note("_More in the report._"))
}

// alertable returns the days a message reports as gaps: settled, missing
// or surplus, at warn or fail severity, with both counts known.
func alertable(days []report.Day) []report.Day {
	var gaps []report.Day
	for _, d := range days {
		if IsGap(d) {
			gaps = append(gaps, d)
		}
	}
	return gaps
}

// IsGap reports whether d is a gap an alert shows: settled, missing or
// surplus, at warn or fail severity, with both counts known.
func IsGap(d report.Day) bool {
	return d.Settled && d.IsGap() && d.Severity.AtLeast(reconcile.Warn) &&
		d.API != nil && d.Local != nil && d.Delta != nil
}

// sortGaps orders gaps largest |delta| first, then by date.
func sortGaps(gaps []report.Day) {
	sort.SliceStable(gaps, func(i, j int) bool {
		di, dj := *gaps[i].Delta, *gaps[j].Delta
		if a, b := max(di, -di), max(dj, -dj); a != b {
			return a > b
		}
		return gaps[i].Date < gaps[j].Date
	})
}

func gapEmoji(gaps []report.Day) string {
	for _, d := range gaps {
		if d.Severity == reconcile.Fail {
			return "🔴"
		}
	}
	return "🟠"
}

func gapSummary(gaps []report.Day) string {
	var missing, surplus int64
	for _, d := range gaps {
		if *d.Delta < 0 {
			missing -= *d.Delta
		} else {
			surplus += *d.Delta
		}
	}
	noun := "days differ"
	if len(gaps) == 1 {
		noun = "day differs"
	}
	s := fmt.Sprintf("%d %s", len(gaps), noun)
	if missing > 0 {
		s += fmt.Sprintf(", %s clicks missing from the store", words.Num(missing))
	}
	if surplus > 0 {
		s += fmt.Sprintf(", %s clicks too many", words.Num(surplus))
	}
	return s + ", worst " + gaps[0].Date
}

func summary(rep report.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Window* %s (%s) · status *%s*\n", span(rep.Window.From, rep.Window.To), esc(rep.Window.TZ), esc(report.StatusText(rep.Status)))
	c := rep.Coverage
	verified := c.Match + c.Missing + c.Surplus
	if rep.Totals.Unknown || verified+c.Provisional == 0 {
		b.WriteString("*Elido* - · *store* - · *delta* - (no day could be read)")
	} else {
		over := words.Plural(verified, "verified day", "verified days")
		if c.Provisional > 0 {
			over += " and " + words.Plural(c.Provisional, "provisional day", "provisional days")
		}
		fmt.Fprintf(&b, "*Elido* %s · *store* %s · *delta* %s clicks (store − Elido, over %s)",
			words.Num(rep.Totals.API), words.Num(rep.Totals.Local), words.Signed(rep.Totals.Delta), over)
	}
	if s := rep.Totals.APISummary; s != nil && *s != rep.Totals.API {
		fmt.Fprintf(&b, " · Elido /summary %s", words.Num(*s))
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(&b, "\n:warning: The run stopped before it finished: %s", plain(clipRunes(rep.Interrupted, 300)))
	}
	return b.String()
}

func coverage(rep report.Report) string {
	c := rep.Coverage
	return fmt.Sprintf("Coverage: %d %s · %d verified (%d match, %d missing, %d surplus) · %d provisional · %d unverifiable. "+
		"Provisional and unverifiable days are never alerted as gaps.",
		c.Days, plural(c.Days, "day", "days"), c.Match+c.Missing+c.Surplus, c.Match, c.Missing, c.Surplus, c.Provisional, c.Unverifiable)
}

func changeLines(cs []Change) []string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		c.Date, c.Was.Status = plain(c.Date), plain(c.Was.Status)
		if c.Now != nil {
			now := *c.Now
			now.Status, now.Severity = plain(now.Status), plain(now.Severity)
			c.Now = &now
		}
		was := fmt.Sprintf("alerted as %s %s", c.Was.Status, words.Signed(c.Was.Delta))
		switch {
		case c.Kind == ChangeHealed && c.Now != nil:
			lines[i] = fmt.Sprintf("• ✅ *%s* healed: %s now (Elido %s · store %s); %s",
				c.Date, c.Now.Status, words.Num(c.Now.API), words.Num(c.Now.Local), was)
		case c.Kind == ChangeHealed:
			lines[i] = fmt.Sprintf("• ✅ *%s* healed; %s", c.Date, was)
		case c.Kind == ChangeChanged && c.Now != nil:
			lines[i] = fmt.Sprintf("• 🔄 *%s* %s *%s* now (Elido %s · store %s) · %s; %s",
				c.Date, c.Now.Status, words.Signed(c.Now.Delta), words.Num(c.Now.API), words.Num(c.Now.Local), c.Now.Severity, was)
		default:
			lines[i] = fmt.Sprintf("• 🔴 *%s* still %s *%s* (Elido %s · store %s), as alerted",
				c.Date, c.Was.Status, words.Signed(c.Was.Delta), words.Num(c.Was.API), words.Num(c.Was.Local))
		}
	}
	return lines
}

// recheck is the re-check report.RecheckCommands gives, one command a
// line.
func recheck(rep report.Report) string {
	var lines []string
	for _, c := range report.RecheckCommands(rep) {
		lines = append(lines, strings.Join(c, " "))
	}
	return esc(strings.Join(lines, "\n"))
}

// command re-checks the days from to to (report.RecheckRange).
func command(from, to, tz string) string {
	return esc(strings.Join(report.RecheckRange(from, to, tz), " "))
}

// list renders title and as many lines as fit one text object (at most
// most), then how many were left out.
func list(title string, lines []string, most int, one, many string) string {
	reserve := len(more(len(lines), one, many)) + 1
	var b strings.Builder
	b.WriteString(title)
	shown := 0
	for _, l := range lines {
		if shown == most || b.Len()+1+len(l)+reserve > maxText {
			break
		}
		b.WriteString("\n")
		b.WriteString(l)
		shown++
	}
	if left := len(lines) - shown; left > 0 {
		b.WriteString("\n")
		b.WriteString(more(left, one, many))
	}
	return b.String()
}

func more(n int, one, many string) string {
	return fmt.Sprintf("_…and %s more %s; see the report_", words.Num(int64(n)), plural(n, one, many))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func span(from, to string) string {
	if from == to {
		return from
	}
	return from + " to " + to
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// esc escapes the three characters Slack's mrkdwn reserves, so text from a
// report (a link id, a finding, a status read back) can neither format
// nor mention (<!here>).
func esc[S ~string](s S) S {
	return S(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(string(s)))
}

// oneLine replaces what would let text leave its place in a message: a
// line break (it would start a line of its own) and a backtick (it would
// open or close a code span or block).
var oneLine = strings.NewReplacer("`", "'", "\r\n", " ", "\n", " ", "\r", " ")

// plain makes text from a report (a finding, an error, a date) inert in
// mrkdwn: on its line, with no code span, mention or link.
func plain[S ~string](s S) S { return S(esc(oneLine.Replace(string(s)))) }

// code puts s in a code span that it cannot close early.
func code(s string) string { return "`" + plain(s) + "`" }

// clipRunes shortens s to at most n characters, marking the cut with "…".
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipBytes shortens s to at most n bytes without splitting a character,
// marking the cut with "…". A byte that is not UTF-8 is first made the
// U+FFFD the JSON encoding would send in its place (three bytes), so
// that the limit holds for the text Slack receives.
func clipBytes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
