package trend

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// lossKinds are the kinds a day's bar is stacked by, bottom up: the
// causes of clicks the store lacks. Duplicates explain a surplus, drawn
// below the line.
var lossKinds = []string{reconcile.DiagOutage, reconcile.DiagSteadyLeak, reconcile.DiagBusy, reconcile.DiagUnexplained}

// chart is the geometry of one series' chart of the store's loss per
// day, computed here so the template only places shapes. The page draws
// it twice, a wide and a narrow one, as report.html does, so that its
// text keeps its size on a phone.
type chart struct {
	Class                         string // wide or narrow
	Width, Height, Left, Top, Bot float64
	ZeroY, PlotH                  float64
	Days                          []chartDay
	Ticks                         []chartTick
	Labels                        []chartTick // dates under the axis
}

// chartDay is one day's shapes: a stack of rectangles above the line for
// what it lost, by cause (what no diagnosis explains on its own), one
// below for its surplus, a band for a day not compared, a mark for a day
// that healed and one for a day repaired.
type chartDay struct {
	Day
	X, W   float64
	Rects  []chartRect
	Band   string // "", unverifiable, unchecked or provisional
	Healed bool
	HealX  float64
	HealY  float64
	// RepairMark is a triangle on the line of a day whose clicks a run's
	// repair put back: its SVG path.
	RepairMark string
	Title      string
}

type chartRect struct {
	X, Y, W, H float64
	Class      string
}

type chartTick struct {
	X, Y float64
	Text string
}

// newChart lays out the days of s in a viewBox width wide.
func newChart(s Series, width float64) chart {
	c := chart{Class: "wide", Width: width, Height: 240, Left: 56, Top: 14, Bot: 30}
	if width < 600 {
		c.Class, c.Height, c.Left = "narrow", 200, 46
	}
	up, down := chartScale(s.Days)
	plot := c.Height - c.Top - c.Bot
	c.PlotH = plot
	c.ZeroY = c.Top + plot*float64(up)/float64(up+down)
	scale := plot / float64(up+down)
	n := float64(len(s.Days))
	step := (c.Width - c.Left - 8) / max(n, 1)
	for i, d := range s.Days {
		c.Days = append(c.Days, c.day(d, c.Left+float64(i)*step+step*0.12, math.Max(step*0.76, 1), scale))
	}
	c.Ticks = c.ticks(up, down)
	c.Labels = c.labels(s.Days, step)
	return c
}

// chartScale returns how far the chart reaches above the line (the most
// a day lost, or had lost before it healed) and below it (the most
// surplus), in clicks: 1 above when no day differed.
func chartScale(days []Day) (up, down int64) {
	for _, d := range days {
		up = max(up, d.Missing, d.WasMissing)
		down = max(down, d.Surplus, d.WasSurplus)
	}
	if up == 0 && down == 0 {
		up = 1
	}
	return up, down
}

// day lays out day d in the bar at x, w wide, scale pixels a click: its
// loss stacked by cause above the line (what no cause explains on top),
// its surplus below, a band for a day not compared, and its marks.
func (c chart) day(d Day, x, w, scale float64) chartDay {
	cd := chartDay{Day: d, X: x, W: w}
	cd.Title = dayTitle(d)
	switch {
	case !d.Checked:
		cd.Band = "unchecked"
	case d.Status == reconcile.Unverifiable:
		cd.Band = "unverifiable"
	case d.Status == reconcile.Provisional:
		cd.Band = "provisional"
	}
	y := c.ZeroY
	rest := d.Missing
	for _, k := range lossKinds {
		v := min(d.Loss[k], rest)
		if v <= 0 {
			continue
		}
		rest -= v
		h := float64(v) * scale
		y -= h
		cd.Rects = append(cd.Rects, chartRect{X: cd.X, Y: y, W: cd.W, H: h, Class: "k-" + k})
	}
	if rest > 0 {
		h := float64(rest) * scale
		y -= h
		cd.Rects = append(cd.Rects, chartRect{X: cd.X, Y: y, W: cd.W, H: h, Class: "k-undiagnosed"})
	}
	if d.Surplus > 0 {
		cd.Rects = append(cd.Rects, chartRect{X: cd.X, Y: c.ZeroY, W: cd.W, H: float64(d.Surplus) * scale, Class: "k-surplus"})
	}
	if d.Healed != nil {
		cd.Healed, cd.HealX = true, cd.X+cd.W/2
		cd.HealY = c.ZeroY - float64(d.WasMissing)*scale
		if d.WasSurplus > 0 {
			cd.HealY = c.ZeroY + float64(d.WasSurplus)*scale
		}
	}
	if d.Restored > 0 {
		w := math.Min(cd.W, 10)
		cd.RepairMark = fmt.Sprintf("M%.1f %.1fl%.1f -8l%.1f 8z", cd.X+(cd.W-w)/2, c.ZeroY+8, w/2, w/2)
	}
	return cd
}

// ticks are the axis's ticks: zero, and the top (up) and bottom (down)
// of the scale where the chart reaches there.
func (c chart) ticks(up, down int64) []chartTick {
	ticks := []chartTick{{Y: c.ZeroY, Text: "0"}}
	if up > 0 {
		ticks = append(ticks, chartTick{Y: c.Top, Text: words.Num(up)})
	}
	if down > 0 {
		ticks = append(ticks, chartTick{Y: c.Height - c.Bot, Text: "−" + words.Num(down)})
	}
	return ticks
}

// labels are the dates under the axis, the days step apart: a date under
// the first day of each month, or of each week on a short range; the
// narrow chart, every other.
func (c chart) labels(days []Day, step float64) []chartTick {
	every := 1
	if c.Class == "narrow" {
		every = 2
	}
	var labels []chartTick
	k := 0
	for i, d := range days {
		// The first day is named unless a month starts within its week.
		first := d.Date[8:] == "01" || i == 0 && !slices.ContainsFunc(days[1:min(7, len(days))], func(d Day) bool { return d.Date[8:] == "01" })
		if len(days) <= 45 {
			first = i%7 == 0
		}
		if !first {
			continue
		}
		if k%every == 0 {
			labels = append(labels, chartTick{X: c.Left + float64(i)*step, Y: c.Height - 10, Text: d.Date[5:]})
		}
		k++
	}
	return labels
}

// dayTitle is what a day's bar says on hover.
func dayTitle(d Day) string {
	if !d.Checked {
		return d.Date + ": no run checked it"
	}
	t := d.Date + ": " + string(d.Status)
	switch {
	case d.Missing > 0:
		t += ", " + words.Num(d.Missing) + " clicks missing"
	case d.Surplus > 0:
		t += ", " + words.Num(d.Surplus) + " clicks surplus"
	}
	for _, k := range append(slices.Clone(lossKinds), reconcile.DiagDuplicates) {
		if n := d.Loss[k]; n > 0 {
			t += "; " + k + " " + words.Num(n)
		}
	}
	if d.Healed != nil {
		t += "; healed (was " + words.Num(d.WasMissing+d.WasSurplus) + ")"
	}
	if d.Restored > 0 {
		t += "; " + words.Num(d.Restored) + " restored by repair"
	}
	return t
}

// pageSeries is one series as the page shows it.
type pageSeries struct {
	Series
	Wide, Narrow chart
	Worst        []Period // the weeks that lost the most, worst first
}

// worstWeeks returns up to n weeks of s that lost clicks, the most first.
func worstWeeks(s Series, n int) []Period {
	var ws []Period
	for _, w := range s.Weeks {
		if w.Missing > 0 || w.Surplus > 0 {
			ws = append(ws, w)
		}
	}
	slices.SortStableFunc(ws, func(a, b Period) int {
		if a.Missing != b.Missing {
			return int(b.Missing - a.Missing)
		}
		return int(b.Surplus - a.Surplus)
	})
	return ws[:min(n, len(ws))]
}

// PageData is what the trend page shows: where the reports are, the
// range, and each series.
type PageData struct {
	// Base names what the trend was read from: the reports' folder or
	// bucket, or the run history.
	Base      string
	From, To  string
	Workspace string
	Series    []Series
	// Back is the index the page links back to: "/" unless given (a
	// fleet workspace's, "/<name>/").
	Back string
}

//go:embed page.html.tmpl
var pageText string

var page = template.Must(template.New("trend").Funcs(template.FuncMap{
	"f":     func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"num":   words.Num,
	"count": func(n int) string { return strconv.Itoa(n) },
	"pct":   pct,
	"md":    func(date string) string { return date[5:] },
	"hours": hours,
	"kinds": func() []string { return append(slices.Clone(lossKinds), reconcile.DiagDuplicates) },
	"loss":  func(p Period, k string) string { return words.Num(p.Loss[k]) },
}).Parse(pageText))

// WritePage writes the trend page: for each series its totals, a chart of
// the store's loss per day coloured by cause with the healed days marked,
// its worst weeks, the causes ranked and the times to find and to heal.
// It is self-contained: inline styles and SVG, no script, nothing loaded
// from elsewhere.
func WritePage(w io.Writer, d PageData) error {
	var ps []pageSeries
	for _, s := range d.Series {
		ps = append(ps, pageSeries{Series: s, Wide: newChart(s, 1200), Narrow: newChart(s, 380), Worst: worstWeeks(s, 5)})
	}
	return page.Execute(w, struct {
		PageData
		Shown []pageSeries
	}{d, ps})
}
