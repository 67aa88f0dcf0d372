package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// maxHTMLLinks bounds the link table of report.html; links.csv and
// report.json hold every row.
const maxHTMLLinks = 200

// maxHTMLGapDetails bounds the gap days report.html details (countries,
// hours, links); days.csv and report.json hold every day.
const maxHTMLGapDetails = 31

// HTML renders report.html: one self-contained page (no script, no
// external asset) that answers in its first screen which days differ, by
// how much, and what to run next; then a chart of each day's delta, each
// differing day's countries, hours and links, why days could not be
// verified, and every day folded below. It reads from 1 to 400 days and
// at 400 px wide.
func HTML(r Report) ([]byte, error) {
	r = xmlSafe(r)
	loc, err := time.LoadLocation(r.Window.TZ)
	if err != nil {
		loc = nil
	}
	gaps := worstDays(r.Days)
	var details []gapDetail
	for _, d := range gaps[:min(len(gaps), maxHTMLGapDetails)] {
		details = append(details, newGapDetail(r, d, loc))
	}
	links, more := worstLinks(r.Links, maxHTMLLinks), max(0, len(r.Links)-maxHTMLLinks)
	var buf bytes.Buffer
	err = htmlTmpl.Execute(&buf, page{
		Report: r, Headline: headline(r, gaps), Rechecks: RecheckCommands(r),
		Wide: newChart("chart", r.Days, 960), Narrow: newChart("chart-narrow", r.Days, 380),
		Gaps: gaps, Details: details, MoreDetails: len(gaps) - len(details),
		Unverifiable: ReasonRuns(r.Days), TopLinks: links, MoreLinks: more,
	})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// page is what the template of report.html reads.
type page struct {
	Report
	Headline     lead
	Rechecks     [][]string // each command's words, a flag with its value as one
	Wide, Narrow chart
	Gaps         []Day
	Details      []gapDetail
	MoreDetails  int
	Unverifiable []ReasonRun
	TopLinks     []Link
	MoreLinks    int
}

// gapDetail is what the page shows of one differing day.
type gapDetail struct {
	Day
	Countries     []Country
	MoreCountries int
	Links         []Link
	MoreLinks     int
	Hours         hourChart
	// Diagnoses and the timeline of the day, when it was diagnosed.
	Diagnoses                    []Diagnosis
	TimelineWide, TimelineNarrow *timelineChart
}

func newGapDetail(r Report, d Day, loc *time.Location) gapDetail {
	g := gapDetail{Day: d, Hours: newHourChart(d, loc), Diagnoses: DayDiagnoses(r, d.Date)}
	for _, t := range r.Timelines {
		if t.Date == d.Date && len(g.Diagnoses) > 0 {
			tloc := loc
			if tloc == nil {
				tloc = time.UTC
			}
			g.TimelineWide, g.TimelineNarrow = newTimeline(t, tloc, 960), newTimeline(t, tloc, 380)
		}
	}
	for _, c := range r.Countries {
		if c.Date == d.Date {
			g.Countries = append(g.Countries, c)
		}
	}
	sort.SliceStable(g.Countries, func(i, j int) bool {
		return countryWeight(g.Countries[i]) > countryWeight(g.Countries[j])
	})
	if len(g.Countries) > 10 {
		g.MoreCountries, g.Countries = len(g.Countries)-10, g.Countries[:10]
	}
	for _, l := range WorstLinks(r.Links) {
		if l.Date == d.Date {
			g.Links = append(g.Links, l)
		}
	}
	if len(g.Links) > 5 {
		g.MoreLinks, g.Links = len(g.Links)-5, g.Links[:5]
	}
	return g
}

// countryWeight orders a day's countries: the largest |delta| first, or
// the most clicks when the store has no country.
func countryWeight(c Country) int64 {
	if c.Delta != nil {
		return abs(*c.Delta)
	}
	return c.API
}

// ReasonRun is a run of consecutive unverifiable days with one reason.
type ReasonRun struct {
	From, To string
	Days     int
	Reason   string
}

// ReasonRuns lists why days could not be verified, consecutive days with
// the same reason as one line, so a year of one outage stays one line.
func ReasonRuns(days []Day) []ReasonRun {
	var runs []ReasonRun
	for i, d := range days {
		if d.Status != reconcile.Unverifiable {
			continue
		}
		reason := d.Reason
		if reason == "" {
			reason = "no reason recorded"
		}
		if n := len(runs); n > 0 && runs[n-1].Reason == reason && i > 0 && days[i-1].Status == reconcile.Unverifiable {
			runs[n-1].To, runs[n-1].Days = d.Date, runs[n-1].Days+1
			continue
		}
		runs = append(runs, ReasonRun{From: d.Date, To: d.Date, Days: 1, Reason: reason})
	}
	return runs
}

// lead is the page's first sentence, its date kept on one line.
type lead struct{ Before, Date, After string }

// headline is the page's first sentence: which days, how bad.
func headline(r Report, gaps []Day) lead {
	c := r.Coverage
	read := c.Match + c.Missing + c.Surplus + c.Provisional
	switch {
	case len(gaps) > 0:
		w := gaps[0]
		verb := "differ"
		if len(gaps) == 1 {
			verb = "differs"
		}
		after := fmt.Sprintf(": %s clicks", words.Signed(*w.Delta))
		if p := deltaPct(w); p != "" {
			after += " (" + p + " of Elido's count)"
		}
		return lead{fmt.Sprintf("%s %s. The worst is ", words.Plural(len(gaps), "day", "days"), verb), w.Date, after + fmt.Sprintf(", %s, %s.", w.Status, w.Severity)}
	case read == 0 && c.Days > 0:
		return lead{Before: unreadSide(r.Days) + fmt.Sprintf(": none of the %s was verified.", words.Plural(c.Days, "day", "days"))}
	case c.Unverifiable > 0:
		return lead{Before: fmt.Sprintf("No gap among the days read, but %s could not be verified.", words.Plural(c.Unverifiable, "day", "days"))}
	}
	return lead{Before: fmt.Sprintf("Every day matches: %s, %s clicks on both sides.", words.Plural(c.Days, "day", "days"), words.Num(r.Totals.API))}
}

// unreadSide names the side that could not be read when no day was
// verified: the store, Elido or both. "Nothing could be read" would blame
// Elido for a store mistake.
func unreadSide(days []Day) string {
	api, local := false, false
	for _, d := range days {
		api, local = api || d.API != nil, local || d.Local != nil
	}
	switch {
	case api && !local:
		return "The store could not be read (Elido was)"
	case local && !api:
		return "Elido could not be read (the store was)"
	}
	return "Neither Elido nor the store could be read"
}

// maxRechecks bounds the re-check commands of a report; more runs of
// days than that are re-checked by one command over all of them.
const maxRechecks = 5

// RecheckCommands are the commands that re-check what a report could not
// settle: its gap days, else its unverifiable days, else the whole window;
// one per run of consecutive such days (--date for a single day), so that
// five scattered days are five short re-checks, not one over the months
// between them. report.html, report.md and the Slack alert all show these.
// Each command is its words, a flag and its value together, so that a page
// can keep them on one line.
func RecheckCommands(r Report) [][]string {
	for _, pick := range []func(Day) bool{Day.IsGap, func(d Day) bool { return d.Status == reconcile.Unverifiable }} {
		var runs [][2]string
		for i, d := range r.Days {
			switch {
			case !pick(d):
			case i > 0 && pick(r.Days[i-1]) && len(runs) > 0:
				runs[len(runs)-1][1] = d.Date
			default:
				runs = append(runs, [2]string{d.Date, d.Date})
			}
		}
		if len(runs) == 0 {
			continue
		}
		if len(runs) > maxRechecks {
			runs = [][2]string{{runs[0][0], runs[len(runs)-1][1]}}
		}
		var out [][]string
		for _, run := range runs {
			out = append(out, RecheckRange(run[0], run[1], r.Window.TZ))
		}
		return out
	}
	return [][]string{RecheckRange(r.Window.From, r.Window.To, r.Window.TZ)}
}

// RecheckRange is the command, in words as RecheckCommands gives them,
// that re-checks the days from to to in zone tz: --date for one day. A
// zone a shell would not take as one word is quoted.
func RecheckRange(from, to, tz string) []string {
	if !shellSafe.MatchString(tz) {
		tz = "'" + strings.ReplaceAll(tz, "'", `'\''`) + "'"
	}
	if from == to {
		return []string{"clickrecon run", "--date " + from, "--tz " + tz}
	}
	return []string{"clickrecon run", "--from " + from, "--to " + to, "--tz " + tz}
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_/+.:-]+$`)

// deltaPct writes a day's delta as a share of Elido's count: −11.6%; ""
// when it has none.
func deltaPct(d Day) string {
	if d.Delta == nil || d.API == nil || *d.API <= 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(*d.Delta)/float64(*d.API))
}

// xmlSafe returns r with every text the page shows made fit for XML 1.0
// (see xmlText): html/template escapes markup, not control characters or
// invalid UTF-8, which would make report.html malformed.
func xmlSafe(r Report) Report {
	r.WorkspaceID, r.RunKey, r.Status, r.Interrupted = xmlText(r.WorkspaceID), xmlText(r.RunKey), xmlText(r.Status), xmlText(r.Interrupted)
	r.Window = Window{From: xmlText(r.Window.From), To: xmlText(r.Window.To), TZ: xmlText(r.Window.TZ)}
	days := make([]Day, len(r.Days))
	for i, d := range r.Days {
		d.Date, d.Status, d.Severity, d.Reason = xmlText(d.Date), xmlText(d.Status), xmlText(d.Severity), xmlText(d.Reason)
		hours := make([]Hour, len(d.HoursWithGap))
		for k, h := range d.HoursWithGap {
			h.Start = xmlText(h.Start)
			hours[k] = h
		}
		d.HoursWithGap = hours
		days[i] = d
	}
	links := make([]Link, len(r.Links))
	for i, l := range r.Links {
		l.Date, l.LinkID, l.Status = xmlText(l.Date), xmlText(l.LinkID), xmlText(l.Status)
		links[i] = l
	}
	findings := make([]Finding, len(r.Findings))
	for i, f := range r.Findings {
		findings[i] = Finding{Kind: xmlText(f.Kind), Message: xmlText(f.Message)}
	}
	countries := make([]Country, len(r.Countries))
	for i, c := range r.Countries {
		c.Date, c.CountryCode = xmlText(c.Date), xmlText(c.CountryCode)
		countries[i] = c
	}
	r.Days, r.Links, r.Countries, r.Findings = days, links, countries, findings
	return r
}

// xmlText replaces what an XML 1.0 document cannot hold (control
// characters other than TAB, LF and CR; U+FFFE, U+FFFF; invalid UTF-8)
// with U+FFFD.
func xmlText[S ~string](s S) S {
	return S(strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= unicode.MaxRune:
			return r
		}
		return unicode.ReplacementChar
	}, string(s)))
}

// niceCeil rounds n up to a round number for the chart's scale: 10, or
// 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten; math.MaxInt64
// when the round number above n does not fit an int64. It never overflows
// and loops at most 19 times, whatever n.
func niceCeil(n int64) int64 {
	if n <= 10 {
		return 10
	}
	p := int64(10) // the power of ten with p <= n < 10p, at least 10
	for p <= n/10 {
		p *= 10
	}
	step := p / 10
	for _, m := range []int64{10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100} {
		if m > math.MaxInt64/step {
			break
		}
		if m*step >= n {
			return m * step
		}
	}
	return math.MaxInt64
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

//go:embed report.html.tmpl
var htmlSource string

var htmlTmpl = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"num":      words.Num,
	"signed":   words.Signed,
	"optnum":   words.OptNum,
	"optsign":  words.OptSigned,
	"hours":    words.Hours,
	"severity": DaySeverity,
	"pct":      deltaPct,
	"country":  countryName,
	"plural":   words.Plural,
	"status":   StatusText,
	"f":        func(v float64) string { return fmt.Sprintf("%g", v) },
	"deref":    func(p *int64) int64 { return *p },
	"share":    sharePct,
}).Parse(htmlSource))
