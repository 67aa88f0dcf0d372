package report

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders report.md: what a person reads first.
func Markdown(r Report) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# Click reconciliation: %s to %s (%s)\n\n", r.Window.From, r.Window.To, r.Window.TZ)
	p("Workspace `%s` · status **%s** · run `%s` · generated %s\n", r.WorkspaceID, r.Status, r.RunKey,
		r.GeneratedAt.UTC().Format("2006-01-02 15:04:05Z"))
	if r.Interrupted != "" {
		p("\n> The run stopped before it finished: %s. The days below are what was read before it stopped.\n", r.Interrupted)
	}

	summary := "not read"
	if r.Totals.APISummary != nil {
		summary = Num(*r.Totals.APISummary)
	}
	p("\n| | clicks |\n|---|---:|\n")
	p("| Elido (daily buckets) | %s |\n", Num(r.Totals.API))
	p("| Elido (/summary) | %s |\n", summary)
	p("| Local store | %s |\n", Num(r.Totals.Local))
	p("| Delta (local − Elido) | %s |\n", Signed(r.Totals.Delta))
	c := r.Coverage
	p("\nDays: %d · match %d · missing %d · surplus %d · provisional %d · unverifiable %d. "+
		"Totals cover the days both sides could be read.\n", c.Days, c.Match, c.Missing, c.Surplus, c.Provisional, c.Unverifiable)

	if gaps := worstDays(r.Days); len(gaps) > 0 {
		p("\n## Gaps\n\n")
		for _, d := range gaps {
			p("- **%s**: %s clicks (%s, %s)\n", d.Date, Signed(*d.Delta), d.Status, d.Severity)
		}
	}

	p("\n## Days\n\n| date | hours | Elido | local | delta | status | severity |\n|---|---:|---:|---:|---:|---|---|\n")
	for _, d := range r.Days {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", d.Date, Hours(d.Hours), OptNum(d.API), OptNum(d.Local),
			OptSigned(d.Delta), d.Status, DaySeverity(d))
	}

	if len(r.Links) > 0 {
		p("\n## Links that differ most\n\n| date | link | Elido | local | delta | status |\n|---|---|---:|---:|---:|---|\n")
		for _, l := range worstLinks(r.Links, maxMarkdownLinks) {
			p("| %s | `%s` | %s | %s | %s | %s |\n", l.Date, mdEscape(l.LinkID), Num(l.API), Num(l.Local), Signed(l.Delta), l.Status)
		}
		if more := len(r.Links) - maxMarkdownLinks; more > 0 {
			p("\nAnd %d more links: see report.csv.\n", more)
		}
	}
	if r.Drilldown.Mode == "fallback" || r.Drilldown.UncheckedLinks > 0 {
		p("\nDrill-down: %s, %d requests, %d links unchecked.\n", r.Drilldown.Mode, r.Drilldown.Requests, r.Drilldown.UncheckedLinks)
	}
	if len(r.Findings) > 0 {
		p("\n## Findings\n\n")
		for _, f := range r.Findings {
			p("- **%s**: %s\n", f.Kind, f.Message)
		}
	}
	var reasons []Day
	for _, d := range r.Days {
		if d.Reason != "" {
			reasons = append(reasons, d)
		}
	}
	if len(reasons) > 0 {
		p("\n## Why days are unverifiable or provisional\n\n")
		for _, d := range reasons {
			p("- %s: %s\n", d.Date, d.Reason)
		}
	}
	return b.Bytes(), nil
}

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

// mdEscape keeps a link id from breaking a table row or its code span.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s)
}

// Num writes n with thousands grouped: 12,345.
func Num(n int64) string {
	s := fmt.Sprintf("%d", abs(n))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if n < 0 {
		return "-" + b.String()
	}
	return b.String()
}

// Signed writes n grouped, with a + when it is positive.
func Signed(n int64) string {
	if n > 0 {
		return "+" + Num(n)
	}
	return Num(n)
}

// OptNum writes a count that may not be known as – when it is not.
func OptNum(n *int64) string {
	if n == nil {
		return "–"
	}
	return Num(*n)
}

// OptSigned writes a delta that may not be known as – when it is not.
func OptSigned(n *int64) string {
	if n == nil {
		return "–"
	}
	return Signed(*n)
}

// Hours writes a day's length: 24, 23, 25, or 24.5 on Lord Howe Island.
func Hours(h float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", h), ".0")
}

// DaySeverity is the severity a person reads: – for a day that could not
// be verified, whose severity means nothing.
func DaySeverity(d Day) string {
	if d.Status == "unverifiable" {
		return "–"
	}
	return d.Severity
}
