package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strings"
	"unicode"

	"github.com/clickrecon/clickrecon/reconcile"
)

// maxHTMLLinks bounds the link table of report.html; report.csv and
// report.json hold every row.
const maxHTMLLinks = 200

// HTML renders report.html: one self-contained page (no script, no
// external asset) with a chart of Elido against the store per day, the
// gaps marked, and the day, link and finding tables.
func HTML(r Report) ([]byte, error) {
	r = xmlSafe(r)
	var buf bytes.Buffer
	links, more := worstLinks(r.Links, maxHTMLLinks), max(0, len(r.Links)-maxHTMLLinks)
	err := htmlTmpl.Execute(&buf, struct {
		Report
		Chart     chart
		Gaps      []Day
		TopLinks  []Link
		MoreLinks int
		// Every unverifiable day, with its reason: what kept it from
		// being checked.
		Unverifiable []Day
	}{r, newChart(r.Days), worstDays(r.Days), links, more, unverifiableDays(r.Days)})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unverifiableDays returns the days that could not be verified.
func unverifiableDays(days []Day) []Day {
	var out []Day
	for _, d := range days {
		if reconcile.Status(d.Status) == reconcile.Unverifiable {
			out = append(out, d)
		}
	}
	return out
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
	r.Days, r.Links, r.Findings = days, links, findings
	return r
}

// xmlText replaces what an XML 1.0 document cannot hold (control
// characters other than TAB, LF and CR; U+FFFE, U+FFFF; invalid UTF-8)
// with U+FFFD.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= unicode.MaxRune:
			return r
		}
		return unicode.ReplacementChar
	}, s)
}

// chart is the SVG bar chart's geometry, computed here so the template
// only places shapes.
type chart struct {
	Width, Height, Top, Bottom float64
	Max                        int64
	Days                       []chartDay
	Ticks                      []chartTick
}

type chartDay struct {
	Day
	X, BarWidth         float64
	APIY, APIH          float64
	LocalX, LocalY      float64
	LocalH              float64
	MarkX, MarkY, MarkW float64
	Mark                string // css class of the marker: missing, surplus, unverifiable, provisional; "" for none
	Label               bool   // whether to print the date under the bars
	LabelX, LabelY      float64
}

type chartTick struct {
	Y     float64
	Value string
}

func newChart(days []Day) chart {
	c := chart{Width: 960, Height: 320, Top: 24, Bottom: 40}
	for _, d := range days {
		for _, v := range []*int64{d.API, d.Local} {
			if v != nil && *v > c.Max && *v <= reconcile.MaxClicks { // a misread does not set the scale
				c.Max = *v
			}
		}
	}
	scaleMax := niceCeil(c.Max)
	plotH := c.Height - c.Top - c.Bottom
	// A count outside 0..scaleMax (negative: a misread) is drawn at the
	// edge, so no bar has a negative height or leaves the plot.
	y := func(v int64) float64 {
		return c.Top + plotH - plotH*float64(min(max(v, 0), scaleMax))/float64(scaleMax)
	}
	for i := range int64(5) {
		v := scaleMax/4*i + scaleMax%4*i/4 // scaleMax*i/4 without overflow
		c.Ticks = append(c.Ticks, chartTick{Y: round1(y(v)), Value: Num(v)})
	}
	if len(days) == 0 {
		return c
	}
	left := 56.0
	slot := (c.Width - left - 8) / float64(len(days))
	bar := math.Max(slot*0.38, 0.5)
	labelEvery := int(math.Ceil(float64(len(days)) / 16))
	for i, d := range days {
		x := left + slot*float64(i)
		cd := chartDay{Day: d, X: round1(x + slot*0.1), BarWidth: round1(bar), LocalX: round1(x + slot*0.1 + bar),
			MarkX: round1(x), MarkY: c.Top - 14, MarkW: round1(slot),
			Label: i%labelEvery == 0, LabelX: round1(x + slot/2), LabelY: c.Height - c.Bottom + 16}
		if d.API != nil {
			cd.APIY, cd.APIH = round1(y(*d.API)), round1(c.Top+plotH-y(*d.API))
		}
		if d.Local != nil {
			cd.LocalY, cd.LocalH = round1(y(*d.Local)), round1(c.Top+plotH-y(*d.Local))
		}
		switch d.Status {
		case "missing", "surplus", "unverifiable", "provisional":
			cd.Mark = d.Status
		}
		c.Days = append(c.Days, cd)
	}
	return c
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

var htmlTmpl = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"num":      Num,
	"signed":   Signed,
	"optnum":   OptNum,
	"optsign":  OptSigned,
	"hours":    Hours,
	"severity": DaySeverity,
	"f":        func(v float64) string { return fmt.Sprintf("%g", v) },
	"deref":    func(p *int64) int64 { return *p },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>Click reconciliation {{.Window.From}} to {{.Window.To}} ({{.Window.TZ}})</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 2rem auto; max-width: 1000px; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.meta { color: #5b6475; } code { font-size: .92em; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { padding: .3rem .6rem; border-bottom: 1px solid #e3e6ec; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.status { font-weight: 600; }
.st-match { color: #2f7d32; } .st-missing { color: #c62828; } .st-surplus { color: #b26a00; }
.st-provisional { color: #5b6475; } .st-unverifiable { color: #6a1b9a; }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: .6rem; background: #eef0f4; }
svg .api { fill: #7d8fb3; } svg .local { fill: #4caf7a; }
svg .mark-missing { fill: #c62828; } svg .mark-surplus { fill: #e69500; }
svg .mark-unverifiable { fill: #8e5bb5; } svg .mark-provisional { fill: #9aa3b2; }
svg text { font-size: 11px; fill: #5b6475; } svg .grid { stroke: #e3e6ec; }
.legend span { margin-right: 1rem; } .sw { display: inline-block; width: .8rem; height: .8rem; vertical-align: -1px; margin-right: .3rem; }
blockquote { border-left: 4px solid #c62828; margin: 1rem 0; padding: .3rem 1rem; background: #fdecea; }
</style>
</head>
<body>
<h1>Click reconciliation: {{.Window.From}} to {{.Window.To}} ({{.Window.TZ}})</h1>
<p class="meta">Workspace <code>{{.WorkspaceID}}</code> · status <span class="badge status">{{.Status}}</span> · run <code>{{.RunKey}}</code> · generated {{.GeneratedAt.Format "2006-01-02 15:04:05Z07:00"}}</p>
{{- if .Interrupted}}
<blockquote>The run stopped before it finished: {{.Interrupted}}. The days below are what was read before it stopped.</blockquote>
{{- end}}
<table id="totals">
<tr><th>Elido (daily buckets)</th><td class="n">{{num .Totals.API}}</td></tr>
<tr><th>Elido (/summary)</th><td class="n">{{if .Totals.APISummary}}{{num (deref .Totals.APISummary)}}{{else}}not read{{end}}</td></tr>
<tr><th>Local store</th><td class="n">{{num .Totals.Local}}</td></tr>
<tr><th>Delta (local − Elido)</th><td class="n">{{signed .Totals.Delta}}</td></tr>
</table>
<p>Days: {{.Coverage.Days}} · match {{.Coverage.Match}} · missing {{.Coverage.Missing}} · surplus {{.Coverage.Surplus}} · provisional {{.Coverage.Provisional}} · unverifiable {{.Coverage.Unverifiable}}. Totals cover the days both sides could be read.</p>

<h2>Elido against the store, per day</h2>
<p class="legend"><span><i class="sw" style="background:#7d8fb3"></i>Elido</span><span><i class="sw" style="background:#4caf7a"></i>store</span><span><i class="sw" style="background:#c62828"></i>missing</span><span><i class="sw" style="background:#e69500"></i>surplus</span><span><i class="sw" style="background:#8e5bb5"></i>unverifiable</span></p>
<svg id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{f .Chart.Width}} {{f .Chart.Height}}" width="100%" role="img" aria-label="Clicks per day: Elido against the store">
{{- range .Chart.Ticks}}
<line class="grid" x1="56" x2="{{f $.Chart.Width}}" y1="{{f .Y}}" y2="{{f .Y}}"/><text x="50" y="{{f .Y}}" text-anchor="end" dy="4">{{.Value}}</text>
{{- end}}
{{- range .Chart.Days}}
<g class="day" data-date="{{.Date}}" data-status="{{.Status}}"><title>{{.Date}}: Elido {{optnum .API}}, store {{optnum .Local}}, delta {{optsign .Delta}} ({{.Status}})</title>
{{- if .API}}<rect class="api" x="{{f .X}}" y="{{f .APIY}}" width="{{f .BarWidth}}" height="{{f .APIH}}"/>{{end}}
{{- if .Local}}<rect class="local" x="{{f .LocalX}}" y="{{f .LocalY}}" width="{{f .BarWidth}}" height="{{f .LocalH}}"/>{{end}}
{{- if .Mark}}<rect class="mark-{{.Mark}}" x="{{f .MarkX}}" y="{{f .MarkY}}" width="{{f .MarkW}}" height="6"/>{{end}}
{{- if .Label}}<text x="{{f .LabelX}}" y="{{f .LabelY}}" text-anchor="middle">{{.Date}}</text>{{end}}</g>
{{- end}}
</svg>
{{- if .Gaps}}

<h2>Gaps</h2>
<ul>
{{- range .Gaps}}
<li><strong>{{.Date}}</strong>: <span class="st-{{.Status}}">{{signed (deref .Delta)}}</span> clicks ({{.Status}}, {{.Severity}})</li>
{{- end}}
</ul>
{{- end}}

<h2>Days</h2>
<table id="days">
<tr><th>date</th><th class="n">hours</th><th class="n">Elido</th><th class="n">store</th><th class="n">delta</th><th>status</th><th>severity</th></tr>
{{- range .Days}}
<tr><td>{{.Date}}</td><td class="n">{{hours .Hours}}</td><td class="n">{{optnum .API}}</td><td class="n">{{optnum .Local}}</td><td class="n">{{optsign .Delta}}</td><td class="status st-{{.Status}}">{{.Status}}</td><td>{{severity .}}</td></tr>
{{- end}}
</table>
{{- if .Unverifiable}}

<h2>Why days could not be verified</h2>
<ul id="unverifiable">
{{- range .Unverifiable}}
<li><strong>{{.Date}}</strong>: {{.Reason}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .TopLinks}}

<h2>Links that differ</h2>
<table id="links">
<tr><th>date</th><th>link</th><th class="n">Elido</th><th class="n">store</th><th class="n">delta</th><th>status</th></tr>
{{- range .TopLinks}}
<tr><td>{{.Date}}</td><td><code>{{.LinkID}}</code></td><td class="n">{{num .API}}</td><td class="n">{{num .Local}}</td><td class="n">{{signed .Delta}}</td><td class="status st-{{.Status}}">{{.Status}}</td></tr>
{{- end}}
</table>
{{- if .MoreLinks}}
<p>And {{.MoreLinks}} more links: see report.csv.</p>
{{- end}}
{{- end}}
{{- if .Findings}}

<h2>Findings</h2>
<ul id="findings">
{{- range .Findings}}
<li><strong>{{.Kind}}</strong>: {{.Message}}</li>
{{- end}}
</ul>
{{- end}}
</body>
</html>
`))
