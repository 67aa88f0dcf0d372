package report

import (
	"fmt"
	"math"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// chart is the geometry of the SVG chart of each day's delta (store −
// Elido), computed here so the template only places shapes. The page
// draws it twice, a wide and a narrow one, so that its text keeps its
// size on a phone instead of shrinking with the picture.
type chart struct {
	ID                                 string // the svg's id: chart (wide) or chart-narrow
	Group                              string // the class of a day's <g>: day (wide), nday (narrow)
	Width, Height, Left, Top, Bottom   float64
	ZeroY, PlotBottom                  float64
	Days                               []chartDay
	Ticks                              []chartTick
	Labels                             []chartLabel
	Callout                            *chartLabel      // names the worst gap over its bar
	CalloutStatus                      reconcile.Status // its day's status, missing or surplus: the label's colour
	CalloutLineX, CalloutY1, CalloutY2 float64
}

// chartDay is one day's shapes: a bar from the zero line to its delta, or
// a band over the plot for a day that could not be verified.
type chartDay struct {
	Day
	X, W, Y, H float64
	Class      string // bar-match, mark-missing, mark-surplus, mark-provisional, mark-unverifiable (a band)
	Sev        string // sev-warn or sev-fail on a gap
	Band       bool
}

type chartTick struct {
	Y     float64
	Value string
}

type chartLabel struct {
	X, Y   float64
	Anchor string
	Text   string
}

// newChart lays out the delta chart of days in a viewBox width wide.
func newChart(id string, days []Day, width float64) chart {
	c := chart{ID: id, Group: "day", Width: width, Height: 260, Left: 52, Top: 30, Bottom: 34}
	if width < 600 {
		c.Group, c.Height, c.Left = "nday", 220, 44
	}
	c.PlotBottom = c.Height - c.Bottom
	top, bottom := chartScale(days)
	plotH := c.PlotBottom - c.Top
	span := float64(top) + float64(bottom)
	c.ZeroY = round1(c.Top + plotH*float64(top)/span)
	y := func(v int64) float64 { return c.ZeroY - plotH*float64(v)/span }
	c.Ticks = chartTicks(c.ZeroY, top, bottom, y)
	if len(days) == 0 {
		return c
	}
	slot := (c.Width - c.Left - 8) / float64(len(days))
	for i, d := range days {
		c.Days = append(c.Days, c.bar(d, c.Left+slot*float64(i), slot, y))
	}
	c.Labels = dayLabels(days, c, slot)
	if worst := worstGap(days); worst >= 0 {
		c.callout(c.Days[worst])
	}
	return c
}

// chartScale returns how far the chart reaches above and below zero: the
// largest gain and loss among the days that were read, rounded up to a
// nice number.
func chartScale(days []Day) (top, bottom int64) {
	var up, down int64
	for _, d := range days {
		if v, ok := chartDelta(d); ok {
			up, down = max(up, v), max(down, -v)
		}
	}
	if up > 0 {
		top = niceCeil(up)
	}
	if down > 0 {
		bottom = niceCeil(down)
	}
	// A side with bars gets at least a quarter of the other, so its bars
	// and tick stay apart from the zero line's.
	if top > 0 && bottom > 0 {
		top, bottom = max(top, niceCeil(bottom/4)), max(bottom, niceCeil(top/4))
	}
	if top == 0 && bottom == 0 {
		top, bottom = 10, 10
	}
	return top, bottom
}

// chartTicks are the axis's ticks: zero at zeroY, the top and bottom of
// the scale, and the half of a side when it is even, at least 4, and the
// only or the larger side. y places a value on the plot.
func chartTicks(zeroY float64, top, bottom int64, y func(int64) float64) []chartTick {
	ticks := []chartTick{{Y: zeroY, Value: "0"}}
	for _, s := range []int64{top, -bottom} {
		if s == 0 {
			continue
		}
		ticks = append(ticks, chartTick{Y: round1(y(s)), Value: compactSigned(s)})
		if half := s / 2; s%2 == 0 && abs(s) >= 4 && (top == 0 || bottom == 0 || abs(s) == max(top, bottom)) {
			ticks = append(ticks, chartTick{Y: round1(y(half)), Value: compactSigned(half)})
		}
	}
	return ticks
}

// bar lays out day d in the slot that begins at x: a bar from the zero
// line to its delta (placed by y), or a band over the plot for a day that
// could not be verified. A gap's bar stays visible however small.
func (c chart) bar(d Day, x, slot float64, y func(int64) float64) chartDay {
	cd := chartDay{Day: d, Class: "bar-match"}
	switch d.Status {
	case reconcile.Missing, reconcile.Surplus, reconcile.Provisional:
		cd.Class = "mark-" + string(d.Status)
	case reconcile.Unverifiable:
		cd.Class, cd.Band = "mark-unverifiable", true
	}
	if d.IsGap() {
		cd.Sev = "sev-" + string(d.Severity)
	}
	w := slot * 0.8
	if cd.Class != "bar-match" { // a gap stays visible on a year
		w = max(w, 3)
	}
	w = max(w, 0.6)
	cd.X, cd.W = round1(x+slot/2-w/2), round1(w)
	if cd.Band {
		cd.Y, cd.H = c.Top, round1(c.PlotBottom-c.Top)
	} else if v, ok := chartDelta(d); ok {
		y1, y0 := y(v), c.ZeroY
		if y1 > y0 {
			y1, y0 = y0, y1
		}
		h := y0 - y1
		if v != 0 && cd.Class != "bar-match" && h < 2 { // a small gap stays visible
			h = 2
			if v > 0 {
				y1 = c.ZeroY - 2
			}
		}
		cd.Y, cd.H = round1(y1), round1(h)
	}
	return cd
}

// worstGap returns the index of the gap with the largest delta, the first
// on a tie, or -1 when days hold no gap with a delta.
func worstGap(days []Day) int {
	worst := -1
	for i, d := range days {
		if d.IsGap() && d.Delta != nil && (worst < 0 || abs(*d.Delta) > abs(*days[worst].Delta)) {
			worst = i
		}
	}
	return worst
}

// callout names the worst gap d over its bar, on the side of its bar
// away from the chart's edge.
func (c *chart) callout(d chartDay) {
	anchor, x := "start", d.X+d.W/2
	if x > c.Width/2 {
		anchor = "end"
	}
	c.Callout = &chartLabel{X: round1(x), Y: c.Top - 10, Anchor: anchor, Text: d.Date + " " + words.Signed(*d.Delta)}
	c.CalloutLineX, c.CalloutY1, c.CalloutY2 = round1(x), c.Top-7, c.Top
	c.CalloutStatus = d.Status
}

// chartDelta returns a day's delta as the chart draws it, bounded to what
// a count can be, and whether the day has one to draw.
func chartDelta(d Day) (int64, bool) {
	if d.Delta == nil || d.Status == reconcile.Unverifiable {
		return 0, false
	}
	return min(max(*d.Delta, -reconcile.MaxClicks), reconcile.MaxClicks), true
}

// dayLabels thins the x axis to what fits: every day on a short window,
// every few days on a longer one, the months on a long one.
func dayLabels(days []Day, c chart, slot float64) (out []chartLabel) {
	fit := int(math.Max(2, (c.Width-c.Left)/72))
	y := c.PlotBottom + 16
	label := func(i int, text string) chartLabel {
		x := c.Left + slot*float64(i) + slot/2
		return chartLabel{X: round1(min(max(x, c.Left+22), c.Width-26)), Y: y, Anchor: "middle", Text: text}
	}
	parsed := make([]time.Time, len(days))
	ok := true
	for i, d := range days {
		t, err := time.Parse("2006-01-02", d.Date)
		if err != nil {
			ok = false
			break
		}
		parsed[i] = t
	}
	defer func() { out = spaced(out) }()
	if !ok { // not dates (a hostile report): label the first and the last
		out = append(out, label(0, days[0].Date))
		if len(days) > 1 {
			out = append(out, label(len(days)-1, days[len(days)-1].Date))
		}
		return out
	}
	if len(days) <= 62 {
		every := (len(days) + fit - 1) / fit
		for i := 0; i < len(days); i += every {
			out = append(out, label(i, parsed[i].Format("Jan 2")))
		}
		return out
	}
	var starts []int // the first day of each month in the window
	for i, t := range parsed {
		if i == 0 || t.Month() != parsed[i-1].Month() {
			starts = append(starts, i)
		}
	}
	every := (len(starts) + fit - 1) / fit
	for k := 0; k < len(starts); k += every {
		i := starts[k]
		if i == 0 && parsed[0].Day() > 20 && len(starts) > 1 { // a stub month: no room for its name
			continue
		}
		text := parsed[i].Format("Jan")
		if parsed[i].Month() == time.January || len(out) == 0 {
			text = parsed[i].Format("Jan 2006")
		}
		out = append(out, label(i, text))
	}
	return out
}

// spaced drops a label that would touch the one before it.
func spaced(labels []chartLabel) []chartLabel {
	var out []chartLabel
	for _, l := range labels {
		if n := len(out); n > 0 && l.X-out[n-1].X < 64 {
			continue
		}
		out = append(out, l)
	}
	return out
}

// hourChart is the small chart of a differing day's hours: one slot per
// hour of the day (23 or 25 on a DST day), a bar for each hour whose
// counts differ.
type hourChart struct {
	Width, Height, ZeroY float64
	Bars                 []chartDay
	Labels               []chartLabel
	Hours                []hourRow
}

type hourRow struct {
	Name              string // 02:00 CET–03:00 CET
	API, Local, Delta int64
}

// newHourChart lays out d's hours; loc is the window's zone (nil: the
// offsets the hours carry).
func newHourChart(d Day, loc *time.Location) hourChart {
	h := hourChart{Width: 360, Height: 110}
	slots := int(math.Ceil(d.Hours))
	if slots < 1 || slots > 30 {
		slots = 24
	}
	left, plotTop, plotBottom := 8.0, 8.0, h.Height-22
	slot := (h.Width - 2*left) / float64(slots)
	var biggest int64 = 1
	for _, hr := range d.HoursWithGap {
		biggest = max(biggest, min(abs(hr.Delta), reconcile.MaxClicks))
	}
	var midnight time.Time
	day, dayErr := time.Parse("2006-01-02", d.Date)
	if loc != nil && dayErr == nil {
		midnight = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
	}
	// A loss hangs below the line, a surplus stands above it.
	h.ZeroY = plotTop + (plotBottom-plotTop)/2
	anyUp, anyDown := false, false
	for _, hr := range d.HoursWithGap {
		anyUp, anyDown = anyUp || hr.Delta > 0, anyDown || hr.Delta < 0
	}
	switch {
	case anyDown && !anyUp:
		h.ZeroY = plotTop
	case anyUp && !anyDown:
		h.ZeroY = plotBottom
	}
	room := max(h.ZeroY-plotTop, plotBottom-h.ZeroY)
	for i, hr := range d.HoursWithGap {
		start, err := time.Parse(time.RFC3339, hr.Start)
		idx := i
		if err == nil && !midnight.IsZero() {
			idx = int(start.Sub(midnight) / time.Hour)
		}
		if idx < 0 || idx >= slots {
			continue
		}
		bh := math.Max(2, room*float64(min(abs(hr.Delta), reconcile.MaxClicks))/float64(biggest))
		y := h.ZeroY // a loss hangs from the line
		if hr.Delta > 0 {
			y = h.ZeroY - bh
		}
		class := "mark-missing"
		if hr.Delta > 0 {
			class = "mark-surplus"
		}
		name := hourName(hr.Start, loc)
		h.Bars = append(h.Bars, chartDay{Day: Day{Date: name}, X: round1(left + slot*float64(idx) + slot*0.1), W: round1(slot * 0.8), Y: round1(y), H: round1(bh), Class: class})
		h.Hours = append(h.Hours, hourRow{Name: name, API: hr.API, Local: hr.Local, Delta: hr.Delta})
	}
	for i := 0; i < slots; i += 6 {
		text := fmt.Sprintf("+%dh", i)
		if !midnight.IsZero() {
			text = midnight.Add(time.Duration(i) * time.Hour).Format("15:04")
		}
		x := left + slot*float64(i)
		if x+hourLabelWidth > h.Width { // the 25th hour's: it would be cut to "23:0"
			break
		}
		h.Labels = append(h.Labels, chartLabel{X: round1(x), Y: h.Height - 6, Anchor: "start", Text: text})
	}
	return h
}

// hourLabelWidth is the room an hour label ("23:00", 10px text) needs.
const hourLabelWidth = 30

// hourName names an hour as every rendering does, with its zone's
// abbreviation at both ends, so the two 02:00 hours of an autumn DST day
// read apart: 02:00 CET–03:00 CET. start is RFC 3339; loc nil keeps its
// offset.
func hourName(start string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		return start
	}
	if loc != nil {
		t = t.In(loc)
	}
	return reconcile.HourSpan(t, t.Add(time.Hour), t.Location())
}

// compactSigned writes a tick value short enough for a narrow axis:
// +500, −1.2k, +3.4M.
func compactSigned(n int64) string {
	sign := "+"
	if n < 0 {
		sign = "−"
	}
	a := float64(abs(n))
	switch {
	case n == 0:
		return "0"
	case a < 10_000:
		return sign + words.Num(abs(n))
	case a < 1e6:
		return sign + trimZero(a/1e3) + "k"
	case a < 1e9:
		return sign + trimZero(a/1e6) + "M"
	case a < 1e12:
		return sign + trimZero(a/1e9) + "G"
	}
	return sign + trimZero(a/1e12) + "T"
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
