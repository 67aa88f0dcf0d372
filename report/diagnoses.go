package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Diagnosis is one of report.json's "diagnoses": a hypothesis of why a
// settled gap day lost (or repeated) clicks, with the evidence it rests
// on. IntervalS and Threshold are set for busy_intervals only.
type Diagnosis struct {
	Date      string  `json:"date"`
	Kind      string  `json:"kind"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Clicks    int64   `json:"clicks"`
	Share     float64 `json:"share"`
	Links     *int    `json:"links"`
	Evidence  string  `json:"evidence"` // the finest evidence it rests on (see finest)
	Message   string  `json:"message"`
	IntervalS int     `json:"interval_s,omitempty"`
	Threshold *int64  `json:"threshold,omitempty"`
	// ContinuesFrom and ContinuesInto, for an outage that midnight cuts
	// in two, name the day it continues from or into: the parts are one
	// outage, and each message judges Elido's retry window on the whole.
	ContinuesFrom string `json:"continues_from,omitempty"`
	ContinuesInto string `json:"continues_into,omitempty"`
}

// Timeline is what report.html draws of a diagnosed day: both sides'
// clicks per minute where raw clicks were read, else per hour, with the
// outages' windows and the duplicated rows' instants. It is not part of
// report.json.
type Timeline struct {
	Date       string
	Bins       []reconcile.TimeBin
	Outages    [][2]time.Time
	Duplicates []time.Time
}

// FindingDiagnosis is the kind of the finding that says why a gap day got
// no diagnosis, or why it rests on coarser evidence than raw clicks.
const FindingDiagnosis = "diagnosis"

// AddDiagnoses puts the run's diagnoses in r: their rows, the timeline of
// each diagnosed day, and a finding for each gap day whose evidence was
// too thin or coarser than raw clicks, saying so.
func AddDiagnoses(r *Report, days []reconcile.DayDiagnosis, loc *time.Location) {
	sort.SliceStable(days, func(i, j int) bool { return days[i].Date.Before(days[j].Date) })
	for _, dd := range days {
		if dd.Note != "" {
			r.Findings = append(r.Findings, Finding{Kind: FindingDiagnosis, Message: dd.Date.String() + ": " + dd.Note})
		}
		if len(dd.Diagnoses) == 0 {
			continue
		}
		tl := Timeline{Date: dd.Date.String(), Bins: dd.Timeline, Duplicates: dd.Duplicates}
		for _, d := range dd.Diagnoses {
			row := Diagnosis{Date: d.Date.String(), Kind: d.Kind, From: d.From.In(loc).Format(time.RFC3339),
				To: d.To.In(loc).Format(time.RFC3339), Clicks: d.Clicks, Share: d.Share, Links: d.Links,
				Evidence: finest(d.Evidence), Message: d.Message}
			if d.Kind == reconcile.DiagBusy {
				t := d.Threshold
				row.IntervalS, row.Threshold = d.IntervalS, &t
			}
			if d.ContinuesFrom != nil {
				row.ContinuesFrom = d.ContinuesFrom.String()
			}
			if d.ContinuesInto != nil {
				row.ContinuesInto = d.ContinuesInto.String()
			}
			if d.Kind == reconcile.DiagOutage {
				tl.Outages = append(tl.Outages, [2]time.Time{d.From, d.To})
			}
			r.Diagnoses = append(r.Diagnoses, row)
		}
		r.Timelines = append(r.Timelines, tl)
	}
}

// diagnosesCSV renders diagnoses.csv: one row per diagnosis, with the
// header date,kind,from,to,clicks,share,links,evidence,interval_s,
// threshold,message. Unknown links and the busy-interval columns of other
// kinds are empty cells; evidence is its names joined by "+".
func diagnosesCSV(r Report) ([]byte, error) {
	rows := [][]string{{"date", "kind", "from", "to", "clicks", "share", "links", "evidence", "interval_s", "threshold", "message"}}
	for _, d := range r.Diagnoses {
		links, interval := "", ""
		if d.Links != nil {
			links = strconv.Itoa(*d.Links)
		}
		if d.IntervalS > 0 {
			interval = strconv.Itoa(d.IntervalS)
		}
		rows = append(rows, []string{csvSafe(d.Date), csvSafe(d.Kind), csvSafe(d.From), csvSafe(d.To), itoa(d.Clicks),
			strconv.FormatFloat(d.Share, 'f', -1, 64), links, csvSafe(d.Evidence), interval, optInt(d.Threshold), csvSafe(d.Message)})
	}
	return writeCSV(rows)
}

// DayDiagnoses returns the diagnoses of date, in report order.
func DayDiagnoses(r Report, date string) []Diagnosis {
	var out []Diagnosis
	for _, d := range r.Diagnoses {
		if d.Date == date {
			out = append(out, d)
		}
	}
	return out
}

// DiagnosisLine says a day's diagnoses in one line, for Slack and the
// terminal: each kind with its clicks and share, then the hint that fits
// the largest: "outage 02:07–02:31 CEST, 60 clicks (100%) · …: Elido
// retries a failed delivery for ~20 minutes only; …". "" when the day has
// none.
func DiagnosisLine(r Report, date string) string {
	ds := DayDiagnoses(r, date)
	if len(ds) == 0 {
		return ""
	}
	loc, err := time.LoadLocation(r.Window.TZ)
	if err != nil {
		loc = time.UTC
	}
	parts := make([]string, len(ds))
	biggest := ds[0]
	for i, d := range ds {
		what := strings.ReplaceAll(d.Kind, "_", " ")
		switch d.Kind {
		case reconcile.DiagOutage:
			what += " " + clockSpan(d.From, d.To, loc)
			switch {
			case d.ContinuesFrom != "" && d.ContinuesInto != "":
				what += " (continues from " + d.ContinuesFrom + " into " + d.ContinuesInto + ")"
			case d.ContinuesFrom != "":
				what += " (continues from " + d.ContinuesFrom + ")"
			case d.ContinuesInto != "":
				what += " (continues into " + d.ContinuesInto + ")"
			}
		case reconcile.DiagBusy:
			what += fmt.Sprintf(" (over %d per %s)", derefInt(d.Threshold), intervalWords(d.IntervalS))
		}
		noun := "clicks"
		if d.Clicks == 1 {
			noun = "click"
		}
		parts[i] = fmt.Sprintf("%s, %s %s (%s)", what, words.Num(d.Clicks), noun, sharePct(d.Share))
		if d.Kind != reconcile.DiagUnexplained && (biggest.Kind == reconcile.DiagUnexplained || d.Share > biggest.Share) {
			biggest = d
		}
	}
	line := strings.Join(parts, " · ")
	if h := hint(biggest.Kind); h != "" {
		line += ": " + h
	}
	return line
}

// hint is what to do about a kind of loss.
func hint(kind string) string {
	switch kind {
	case reconcile.DiagOutage:
		return "Elido retries a failed delivery for ~20 minutes only; keep the receiver up, or re-read clicks/recent for the window"
	case reconcile.DiagBusy:
		return "follow next_cursor to the last page of every poll"
	case reconcile.DiagDuplicates:
		return "make X-Webhook-Delivery the idempotency key of the handler"
	case reconcile.DiagSteadyLeak:
		return "find where the handler drops events (timeouts, swallowed errors)"
	}
	return ""
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func intervalWords(s int) string {
	if s >= 3600 {
		return "hour"
	}
	return fmt.Sprintf("%d min", s/60)
}

// sharePct writes a share as a whole percentage, "<1%" for a small one.
func sharePct(s float64) string {
	p := math.Round(s * 100)
	if p == 0 && s > 0 {
		return "<1%"
	}
	return fmt.Sprintf("%g%%", p)
}

// clockSpan writes two RFC 3339 instants as wall-clock times in loc:
// "02:07:13–02:31:40 CEST", with seconds only where either has them.
func clockSpan(from, to string, loc *time.Location) string {
	f, err1 := time.Parse(time.RFC3339, from)
	t, err2 := time.Parse(time.RFC3339, to)
	if err1 != nil || err2 != nil {
		return from + "–" + to
	}
	f, t = f.In(loc), t.In(loc)
	layout := "15:04"
	if f.Second() != 0 || t.Second() != 0 {
		layout = "15:04:05"
	}
	if f.Format("MST") != t.Format("MST") {
		return f.Format(layout+" MST") + "–" + t.Format(layout+" MST")
	}
	return f.Format(layout) + "–" + t.Format(layout+" MST")
}

// timelineChart is the geometry of a diagnosed day's timeline: each bin
// a bar of the clicks both sides have, topped by what the store lost (up
// to Elido's count) or holds beyond it, in clicks per minute so a minute
// read raw and an hour read as a count compare; the outages shaded, the
// duplicates marked above the plot.
type timelineChart struct {
	Class                    string // tl wide, tl narrow
	Width, Height, Left, Top float64
	PlotBottom               float64
	Bars                     []chartDay
	Shades                   []chartDay
	Marks                    []chartLabel
	Labels                   []chartLabel
	Max                      string // the y scale's top, "12/min"
	PerMinute                bool
	Title                    string
}

// newTimeline lays out t in a viewBox width wide.
func newTimeline(t Timeline, loc *time.Location, width float64) *timelineChart {
	if len(t.Bins) == 0 {
		return nil
	}
	c := &timelineChart{Class: "tl wide", Width: width, Height: 176, Left: 22, Top: 22}
	if width < 600 {
		c.Class, c.Height, c.Left = "tl narrow", 156, 16
	}
	c.PlotBottom = c.Height - 22
	start := t.Bins[0].Start
	last := t.Bins[len(t.Bins)-1]
	end := last.Start.Add(time.Duration(last.Seconds) * time.Second)
	total := end.Sub(start).Seconds()
	plotW := c.Width - c.Left - 6
	x := func(at time.Time) float64 { return c.Left + plotW*at.Sub(start).Seconds()/total }
	rate := func(n int64, s int) float64 { return float64(n) * 60 / float64(s) }
	var top float64 = 1
	for _, b := range t.Bins {
		top = max(top, rate(b.API, b.Seconds), rate(b.Local, b.Seconds))
		if b.Seconds == 60 {
			c.PerMinute = true
		}
	}
	top = float64(niceCeil(int64(math.Ceil(top))))
	c.Max = fmt.Sprintf("%g/min", top)
	plotH := c.PlotBottom - c.Top
	y := func(v float64) float64 { return round1(c.PlotBottom - plotH*v/top) }
	for _, b := range t.Bins {
		x0, x1 := x(b.Start), x(b.Start.Add(time.Duration(b.Seconds)*time.Second))
		w := round1(max(x1-x0, 0.4))
		api, local := rate(b.API, b.Seconds), rate(b.Local, b.Seconds)
		kept := min(api, local)
		if kept > 0 {
			c.Bars = append(c.Bars, chartDay{X: round1(x0), W: w, Y: y(kept), H: round1(c.PlotBottom - y(kept)), Class: "tl-kept"})
		}
		switch {
		case api > local:
			c.Bars = append(c.Bars, chartDay{X: round1(x0), W: w, Y: y(api), H: round1(y(kept) - y(api)), Class: "tl-lost"})
		case local > api:
			c.Bars = append(c.Bars, chartDay{X: round1(x0), W: w, Y: y(local), H: round1(y(kept) - y(local)), Class: "tl-extra"})
		}
	}
	for _, o := range t.Outages {
		x0, x1 := x(o[0]), x(o[1])
		c.Shades = append(c.Shades, chartDay{X: round1(x0), W: round1(max(x1-x0, 2)), Y: c.Top, H: round1(plotH), Class: "tl-outage"})
	}
	seen := map[float64]bool{}
	for _, d := range t.Duplicates {
		px := round1(x(d))
		if !seen[px] {
			seen[px] = true
			c.Marks = append(c.Marks, chartLabel{X: px, Y: c.Top - 3, Anchor: "middle", Text: "▼"})
		}
	}
	every := 6 * time.Hour
	if width < 600 {
		every = 8 * time.Hour
	}
	for at := start; !at.After(end); at = at.Add(every) {
		anchor := "middle"
		switch {
		case at.Equal(start):
			anchor = "start"
		case end.Sub(at) < every/2:
			continue
		}
		c.Labels = append(c.Labels, chartLabel{X: round1(x(at)), Y: c.Height - 6, Anchor: anchor, Text: at.In(loc).Format("15:04")})
	}
	c.Title = "Elido's and the store's clicks per " + map[bool]string{true: "minute (raw clicks) or hour", false: "hour"}[c.PerMinute] + " on " + t.Date
	return c
}

// finest names the finest of the evidence a diagnosis rests on, as
// report.json's one word: Elido's raw clicks (read with the store's rows),
// else the store's rows, else the hourly counts.
func finest(evidence []string) string {
	for _, e := range []string{reconcile.EvidenceRaw, reconcile.EvidenceRows, reconcile.EvidenceHourly} {
		if slices.Contains(evidence, e) {
			return e
		}
	}
	return ""
}
