package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Markdown renders report.md: what a person reads first.
func Markdown(r Report) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	mdHead(p, r)
	mdTotals(p, r)
	mdGaps(p, r)
	mdDays(p, r)
	mdLinks(p, r)
	mdDiagnoses(p, r)
	mdFindings(p, r)
	mdUnverifiable(p, r)
	mdProvisional(p, r)
	return b.Bytes(), nil
}

// mdPrintf writes to report.md as it is being written.
type mdPrintf func(format string, args ...any)

// mdHead writes the title, the run's line and, when the run stopped
// early, why.
func mdHead(p mdPrintf, r Report) {
	p("# Click reconciliation: %s to %s (%s)\n\n", mdLine(r.Window.From), mdLine(r.Window.To), mdLine(r.Window.TZ))
	p("Workspace `%s` · status **%s** · run `%s` · generated %s\n", mdCode(r.WorkspaceID), mdLine(StatusText(r.Status)), mdCode(r.RunKey),
		r.GeneratedAt.UTC().Format("2006-01-02 15:04:05Z"))
	if r.Interrupted != "" {
		p("\n> The run stopped before it finished: %s. The days below are what was read before it stopped.\n", mdLine(r.Interrupted))
	}
}

// mdTotals writes the window's totals and how many days of each status
// it holds.
func mdTotals(p mdPrintf, r Report) {
	summary := "not read"
	if r.Totals.APISummary != nil {
		summary = words.Num(*r.Totals.APISummary)
	}
	api, local, delta := "-", "-", "-" // no day was read on both sides
	if !r.Totals.Unknown {
		api, local, delta = words.Num(r.Totals.API), words.Num(r.Totals.Local), words.Signed(r.Totals.Delta)
	}
	p("\n| | clicks |\n|---|---:|\n")
	p("| Elido (daily buckets) | %s |\n", api)
	p("| Elido (/summary) | %s |\n", summary)
	p("| Local store | %s |\n", local)
	p("| Delta (local − Elido) | %s |\n", delta)
	c := r.Coverage
	p("\nDays: %d · match %d · missing %d · surplus %d · provisional %d · unverifiable %d. "+
		"Totals cover the days both sides could be read.\n", c.Days, c.Match, c.Missing, c.Surplus, c.Provisional, c.Unverifiable)
}

// mdGaps writes the worst gaps and the commands that re-check the
// window.
func mdGaps(p mdPrintf, r Report) {
	if gaps := worstDays(r.Days); len(gaps) > 0 {
		p("\n## Gaps\n\n")
		for _, d := range gaps {
			share := ""
			if pct := deltaPct(d); pct != "" {
				share = ", " + pct
			}
			p("- **%s**: %s clicks (%s%s, %s)\n", mdLine(d.Date), words.Signed(*d.Delta), mdLine(string(d.Status)), share, mdLine(string(d.Severity)))
		}
	}
	if cmds := RecheckCommands(r); len(cmds) == 1 {
		p("\nRe-check: `%s`\n", mdCode(strings.Join(cmds[0], " ")))
	} else {
		p("\nRe-check:\n\n")
		for _, c := range cmds {
			p("- `%s`\n", mdCode(strings.Join(c, " ")))
		}
	}
}

// mdDays writes the table of days: past a screenful, the days that are
// not a match.
func mdDays(p mdPrintf, r Report) {
	days, folded := FoldMatches(r.Days, maxMarkdownDays)
	p("\n## Days\n\n| date | hours | Elido | local | delta | status | severity |\n|---|---:|---:|---:|---:|---|---|\n")
	for _, d := range days {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(d.Date), words.Hours(d.Hours), words.OptNum(d.API), words.OptNum(d.Local),
			words.OptSigned(d.Delta), mdEscape(string(d.Status)), mdEscape(DaySeverity(d)))
	}
	if folded > 0 {
		p("\nAnd %s within tolerance: see days.csv.\n", words.Plural(folded, "more day that matches", "more days that match"))
	}
}

// mdLinks writes the links that differ most and, when the drill-down fell
// back or left links unchecked, what it did.
func mdLinks(p mdPrintf, r Report) {
	if len(r.Links) > 0 {
		p("\n## Links that differ most\n\n| date | link | Elido | local | delta | status |\n|---|---|---:|---:|---:|---|\n")
		for _, l := range worstLinks(r.Links, maxMarkdownLinks) {
			p("| %s | `%s` | %s | %s | %s | %s |\n", mdEscape(l.Date), mdEscape(l.LinkID), words.Num(l.API), words.Num(l.Local), words.Signed(l.Delta), mdEscape(string(l.Status)))
		}
		if more := len(r.Links) - maxMarkdownLinks; more > 0 {
			p("\nAnd %d more links: see links.csv.\n", more)
		}
	}
	if r.Drilldown.Mode == "fallback" || r.Drilldown.UncheckedLinks > 0 || r.Drilldown.UncheckedUnknown {
		p("\nDrill-down: %s, %d requests, %s links unchecked.\n", r.Drilldown.Mode, r.Drilldown.Requests, r.Drilldown.Unchecked())
	}
}

// mdDiagnoses writes the table of diagnoses, then each one's message.
func mdDiagnoses(p mdPrintf, r Report) {
	if len(r.Diagnoses) == 0 {
		return
	}
	p("\n## Why the clicks were lost\n\n| date | kind | from | to | clicks | share | links | evidence |\n|---|---|---|---|---:|---:|---:|---|\n")
	for _, d := range r.Diagnoses {
		links := "-"
		if d.Links != nil {
			links = strconv.Itoa(*d.Links)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(d.Date), mdEscape(d.Kind), mdEscape(d.From), mdEscape(d.To),
			words.Num(d.Clicks), sharePct(d.Share), links, mdEscape(d.Evidence))
	}
	p("\n")
	for _, d := range r.Diagnoses {
		p("- **%s %s**: %s\n", mdLine(d.Date), mdLine(d.Kind), mdLine(d.Message))
	}
}

// mdFindings writes the findings beyond single days.
func mdFindings(p mdPrintf, r Report) {
	if len(r.Findings) == 0 {
		return
	}
	p("\n## Findings\n\n")
	for _, f := range r.Findings {
		p("- **%s**: %s\n", mdLine(f.Kind), mdLine(f.Message))
	}
}

// mdUnverifiable writes why days could not be verified, a line for each
// run of days with the same reason.
func mdUnverifiable(p mdPrintf, r Report) {
	runs := ReasonRuns(r.Days)
	if len(runs) == 0 {
		return
	}
	p("\n## Why days could not be verified\n\n")
	for _, run := range runs {
		if run.Days == 1 {
			p("- %s: %s\n", mdLine(run.From), mdLine(run.Reason))
		} else {
			p("- %s to %s (%d days): %s\n", mdLine(run.From), mdLine(run.To), run.Days, mdLine(run.Reason))
		}
	}
}

// mdProvisional writes why each provisional day with a reason is not
// settled yet.
func mdProvisional(p mdPrintf, r Report) {
	var provisional []Day
	for _, d := range r.Days {
		if d.Status == reconcile.Provisional && d.Reason != "" {
			provisional = append(provisional, d)
		}
	}
	if len(provisional) > 0 {
		p("\n## Provisional days\n\n")
		for _, d := range provisional {
			p("- %s: %s\n", mdLine(d.Date), mdLine(d.Reason))
		}
	}
}

// maxMarkdownDays is how many day rows report.md lists before it lists
// only the days that are not a match.
const maxMarkdownDays = 20

// maxMarkdownLinks bounds the link table of report.md.
const maxMarkdownLinks = 20

// worstLinks returns at most n link rows, the largest |delta| first.
func worstLinks(links []Link, n int) []Link {
	sorted := WorstLinks(links)
	if len(sorted) > n {
		sorted = sorted[:n]
	}
	return sorted
}

// mdLine keeps text from a report (a reason quoting an API error, a
// finding) on its line: every line break (CRLF, CR, LF) becomes a space,
// so it can neither end a list item nor start a heading.
func mdLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}

// mdCode keeps text inside the code span it is put in: on one line, with
// no backtick to close the span early.
func mdCode(s string) string { return strings.ReplaceAll(mdLine(s), "`", "'") }

// mdEscape keeps text (a link id) inside its table cell and code span: on
// one line, no backtick, every pipe escaped. Backslashes right before a
// pipe are doubled, so an id's own backslash cannot escape the escape
// (GFM splits cells before it reads code spans).
func mdEscape(s string) string {
	s = mdCode(s)
	var b strings.Builder
	slashes := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			slashes++
			b.WriteByte(c)
		case '|':
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteString(`\|`)
			slashes = 0
		default:
			slashes = 0
			b.WriteByte(c)
		}
	}
	return b.String()
}

// DaySeverity is the severity a person reads: - for a day that could not
// be verified, whose severity means nothing.
func DaySeverity(d Day) string {
	if d.Status == reconcile.Unverifiable {
		return "-"
	}
	return string(d.Severity)
}

// countryName writes a country code as text shows it: - when the country
// is not known.
func countryName(code string) string {
	if code == "" {
		return "-"
	}
	return code
}

// FoldMatches returns days whole when there are at most most of them;
// past that, the days that are not a match, and how many matching days it
// left out: past a screenful, a listing shows the days that need a look.
func FoldMatches(days []Day, most int) (shown []Day, folded int) {
	if len(days) <= most {
		return days, 0
	}
	for _, d := range days {
		if d.Status == reconcile.Match {
			folded++
			continue
		}
		shown = append(shown, d)
	}
	return shown, folded
}
