package reconcile

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Status is the verdict on one day.
type Status string

// The day statuses of docs/contract.md. Only Missing and Surplus are gaps; a day
// that is Unverifiable is never reported as one.
const (
	Match        Status = "match"        // within tolerance
	Missing      Status = "missing"      // the store has fewer clicks than Elido
	Surplus      Status = "surplus"      // the store has more clicks than Elido
	Provisional  Status = "provisional"  // ended less than the settle time ago
	Unverifiable Status = "unverifiable" // a side could not be read or trusted
)

// Severity grades how far a day is from Elido's count.
type Severity string

// Severities, in increasing order.
const (
	OK   Severity = "ok"   // within tolerance
	Warn Severity = "warn" // beyond tolerance
	Fail Severity = "fail" // beyond the fail thresholds
)

// AtLeast reports whether s is as severe as min or more.
func (s Severity) AtLeast(min Severity) bool { return s.rank() >= min.rank() }

func (s Severity) rank() int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// ParseSeverity reads ok, warn or fail.
func ParseSeverity(s string) (Severity, error) {
	switch Severity(s) {
	case OK, Warn, Fail:
		return Severity(s), nil
	}
	return "", fmt.Errorf("%q is not a severity: use ok, warn or fail", s)
}

// Tolerance says how far the store may be from Elido before a day is a gap
// (Abs, Pct) and before the gap is graded fail (FailAbs, FailPct). A
// threshold is max(abs, pct% of Elido's count): small days are judged by
// the absolute number, busy days by the share. So a gap fails when it is
// both over FailPct% of the day and over FailAbs clicks: with the defaults
// (10 clicks, 5%), 60 lost of 516 fails, 2,000 of 1,000,000 does not.
type Tolerance struct {
	Abs     int64   // RECON_TOLERANCE_ABS: clicks
	Pct     float64 // RECON_TOLERANCE_PCT: percent of Elido's count
	FailAbs int64   // RECON_FAIL_ABS: clicks
	FailPct float64 // RECON_FAIL_PCT: percent of Elido's count
}

// Validate reports the first threshold that makes no sense, naming its
// variable.
func (t Tolerance) Validate() error {
	switch {
	case t.Abs < 0:
		return fmt.Errorf("RECON_TOLERANCE_ABS must not be negative, got %d", t.Abs)
	case t.FailAbs < 0:
		return fmt.Errorf("RECON_FAIL_ABS must not be negative, got %d", t.FailAbs)
	case !validPct(t.Pct):
		return fmt.Errorf("RECON_TOLERANCE_PCT must be a percentage from 0 to 100, got %v", t.Pct)
	case !validPct(t.FailPct):
		return fmt.Errorf("RECON_FAIL_PCT must be a percentage from 0 to 100, got %v", t.FailPct)
	}
	return nil
}

func validPct(p float64) bool { return !math.IsNaN(p) && p >= 0 && p <= 100 }

// threshold returns max(abs, pct% of api) in clicks.
func threshold(abs int64, pct float64, api int64) float64 {
	return math.Max(float64(abs), pct/100*float64(api))
}

// Grade returns the status and severity of a settled day with the given
// counts: Match/OK within tolerance, else Missing or Surplus graded Warn or
// Fail.
func (t Tolerance) Grade(api, local int64) (Status, Severity) {
	// In float64, so that counts far apart cannot wrap the difference.
	mag := math.Abs(float64(local) - float64(api))
	if mag <= threshold(t.Abs, t.Pct, api) {
		return Match, OK
	}
	status := Surplus
	if local < api {
		status = Missing
	}
	if mag > threshold(t.FailAbs, t.FailPct, api) {
		return status, Fail
	}
	return status, Warn
}

// Reading is one side's count for one day, or why it is not known.
type Reading struct {
	Clicks int64
	Err    error // nil when Clicks is known and trusted
}

// Known returns a Reading holding n.
func Known(n int64) Reading { return Reading{Clicks: n} }

// Unknown returns a Reading that could not be had, for the reason err.
func Unknown(err error) Reading { return Reading{Err: err} }

// SummaryCheck is Elido's /summary total for a range of days, to be
// checked against the sum of the range's daily buckets.
type SummaryCheck struct {
	From, To Date
	Clicks   int64
}

// Input is everything Compare needs: the window, the clock and both sides'
// daily readings. A day absent from API or Local counts as unread.
type Input struct {
	Window    Window
	Now       time.Time
	Settle    time.Duration // RECON_SETTLE
	Tolerance Tolerance
	API       map[Date]Reading // Elido's /timeseries
	Local     map[Date]Reading // the store
	Summaries []SummaryCheck   // Elido's /summary, one per fetched range
}

// DayResult is the verdict on one day. API, Local and Delta are nil where
// the value is not known, so a report never shows a guessed zero.
type DayResult struct {
	Date     Date
	Hours    float64
	API      *int64
	Local    *int64
	Delta    *int64
	Status   Status
	Severity Severity
	Settled  bool
	Reason   string // why the day is unverifiable or provisional

	HoursWithGap []HourDiff // from the drill-down: the hours that differ
}

// IsGap reports whether the day is a gap: settled, and missing or surplus.
func (d DayResult) IsGap() bool { return d.Status.IsGap() }

// IsGap reports whether s is the verdict of a gap (when settled): missing
// or surplus. Every report, message and exit code asks this, never the
// status's text.
func (s Status) IsGap() bool { return s == Missing || s == Surplus }

// Totals sums the days whose two sides are both known and trusted
// (matched, gaps and provisional days); unverifiable days are left out so
// that a day that could not be read never shows up as a delta.
type Totals struct {
	API, Local, Delta int64
	APISummary        *int64 // Elido's /summary over the window; nil if any range was not read
}

// Finding is an observation beyond a single day's verdict.
type Finding struct {
	Kind    string
	Message string
}

// Finding kinds.
const (
	FindingSummaryMismatch = "summary_mismatch" // /summary ≠ sum of /timeseries
	FindingUnverifiable    = "unverifiable"     // days that could not be read
)

// Result is the outcome of Compare.
type Result struct {
	Days      []DayResult
	Totals    Totals
	Findings  []Finding
	Links     []LinkDiff     // from the drill-down (Explain)
	Countries []CountryCount // from the drill-down (Explain)
}

// Coverage counts the days of each status.
func (r Result) Coverage() map[Status]int {
	c := map[Status]int{}
	for _, d := range r.Days {
		c[d.Status]++
	}
	return c
}

// Gaps returns the gaps: the settled days that are missing or surplus.
func (r Result) Gaps() []DayResult {
	var gaps []DayResult
	for _, d := range r.Days {
		if d.IsGap() {
			gaps = append(gaps, d)
		}
	}
	return gaps
}

// Compare grades every day of the window. A day is Unverifiable when
// either side is unknown or out of range (see MaxClicks), or when Elido's
// /summary for its range disagrees with the range's daily buckets: a
// misread or unsettled source is never reported as a gap. No count, delta
// or total wraps around.
func Compare(in Input) Result {
	var res Result
	distrusted, summaryTotal, findings := checkSummaries(in)
	res.Findings = findings
	res.Totals.APISummary = summaryTotal
	for _, d := range in.Window.Days() {
		res.Days = append(res.Days, compareDay(in, d, distrusted, &res.Totals))
	}
	res.Totals.Delta = res.Totals.Local - res.Totals.API // both in 0..MaxClicks: no overflow
	if f, ok := unverifiableFinding(res.Days); ok {
		res.Findings = append(res.Findings, f)
	}
	return res
}

// checkSummaries checks each of Elido's /summary totals against the daily
// buckets of its range. It returns the days it distrusts with why (a
// summary out of range, or one that disagrees with its buckets), the
// window's summary total (nil unless every summary is in range and they
// cover the window) and a finding for each disagreement.
func checkSummaries(in Input) (distrusted map[Date]string, total *int64, findings []Finding) {
	distrusted = map[Date]string{}
	var summaryTotal int64
	summaryKnown := len(in.Summaries) > 0
	for _, s := range in.Summaries {
		span := rangeString(s.From, s.To)
		if !CountInRange(s.Clicks) {
			summaryKnown = false
			for d := s.From; !d.After(s.To); d = d.AddDays(1) {
				distrusted[d] = outOfRange("Elido's /summary for "+span+":", s.Clicks)
			}
			continue
		}
		var ok bool
		if summaryTotal, ok = AddClicks(summaryTotal, s.Clicks); !ok || !CountInRange(summaryTotal) {
			summaryKnown = false
		}
		sum, complete := int64(0), true
		for d := s.From; !d.After(s.To); d = d.AddDays(1) {
			r, ok := in.API[d]
			if !ok || r.Err != nil || !CountInRange(r.Clicks) {
				// A day out of range is unverifiable on its own account.
				complete = false
				break
			}
			if sum, ok = AddClicks(sum, r.Clicks); !ok {
				complete = false
				break
			}
		}
		if !complete || sum == s.Clicks {
			continue
		}
		findings = append(findings, Finding{
			Kind: FindingSummaryMismatch,
			Message: fmt.Sprintf("Elido's /summary for %s says %d clicks but its daily /timeseries adds up to %d (%+d): "+
				"Elido's own data is still settling or inconsistent, so these days are unverifiable, not gaps; a later run re-checks them",
				span, s.Clicks, sum, s.Clicks-sum), // both in range: no overflow
		})
		for d := s.From; !d.After(s.To); d = d.AddDays(1) {
			distrusted[d] = fmt.Sprintf("Elido's /summary for %s disagrees with its /timeseries", span)
		}
	}
	if summaryKnown && !summariesCover(in.Summaries, in.Window) {
		summaryKnown = false
	}
	if summaryKnown {
		total = &summaryTotal
	}
	return distrusted, total, findings
}

// compareDay grades day d and, when both its sides are known and
// trusted, adds them to totals.
func compareDay(in Input, d Date, distrusted map[Date]string, totals *Totals) DayResult {
	start, end := d.Bounds(in.Window.Loc)
	day := DayResult{
		Date:     d,
		Hours:    end.Sub(start).Hours(),
		Severity: OK,
		Settled:  !in.Now.Before(end.Add(in.Settle)),
	}
	if api, ok := in.API[d]; ok && api.Err == nil {
		day.API = ptr(api.Clicks)
	}
	if local, ok := in.Local[d]; ok && local.Err == nil {
		day.Local = ptr(local.Clicks)
	}
	reasons := untrusted(in, day, distrusted)
	if day.API != nil && day.Local != nil {
		if delta, ok := SubClicks(*day.Local, *day.API); ok && CountInRange(*day.API) && CountInRange(*day.Local) {
			day.Delta = ptr(delta)
		}
	}
	var totalAPI, totalLocal int64
	if len(reasons) == 0 {
		okAPI, okLocal := false, false
		totalAPI, okAPI = AddClicks(totals.API, *day.API)
		totalLocal, okLocal = AddClicks(totals.Local, *day.Local)
		if !okAPI || !okLocal || !CountInRange(totalAPI) || !CountInRange(totalLocal) {
			// Only a window of more than a thousand days of
			// implausibly large counts gets here.
			reasons = append(reasons, fmt.Sprintf("the window's total with this day is out of range (over %d clicks): a misread, not a gap", MaxClicks))
		}
	}
	switch {
	case len(reasons) > 0:
		day.Status = Unverifiable
		day.Reason = joinReasons(reasons)
	default:
		day.Status, day.Severity = in.Tolerance.Grade(*day.API, *day.Local)
		totals.API, totals.Local = totalAPI, totalLocal
		if !day.Settled {
			day.Status = Provisional
			day.Reason = fmt.Sprintf("ended %s ago, less than RECON_SETTLE=%s: Elido may still add late clicks",
				shortDuration(in.Now.Sub(end)), shortDuration(in.Settle))
		}
	}
	return day
}

// untrusted returns why day's counts cannot be graded, in the order a
// reason lists them: a side not read or failed, a count out of range,
// Elido's /summary distrusting the day. None when both can.
func untrusted(in Input, day DayResult, distrusted map[Date]string) []string {
	var reasons []string
	api, apiOK := in.API[day.Date]
	local, localOK := in.Local[day.Date]
	switch {
	case !apiOK:
		reasons = append(reasons, "Elido's count was not read")
	case api.Err != nil:
		reasons = append(reasons, sourced("Elido", api.Err))
	}
	switch {
	case !localOK:
		reasons = append(reasons, "the store's count was not read")
	case local.Err != nil:
		reasons = append(reasons, sourced("store", local.Err))
	}
	if day.API != nil && !CountInRange(*day.API) {
		reasons = append(reasons, outOfRange("Elido's", *day.API))
	}
	if day.Local != nil && !CountInRange(*day.Local) {
		reasons = append(reasons, outOfRange("the store's", *day.Local))
	}
	if why, ok := distrusted[day.Date]; ok {
		reasons = append(reasons, why)
	}
	return reasons
}

// unverifiableFinding counts the days of days that could not be verified,
// if any.
func unverifiableFinding(days []DayResult) (Finding, bool) {
	var unverifiable []Date
	for _, d := range days {
		if d.Status == Unverifiable {
			unverifiable = append(unverifiable, d.Date)
		}
	}
	if len(unverifiable) == 0 {
		return Finding{}, false
	}
	return Finding{
		Kind: FindingUnverifiable,
		Message: fmt.Sprintf("%d of %d days could not be verified (%s); they are not reported as gaps (each day's reason says why)",
			len(unverifiable), len(days), dateList(unverifiable)),
	}, true
}

// summariesCover reports whether the summaries' ranges cover every day of w.
func summariesCover(ss []SummaryCheck, w Window) bool {
	covered := map[Date]bool{}
	for _, s := range ss {
		for d := s.From; !d.After(s.To); d = d.AddDays(1) {
			covered[d] = true
		}
	}
	for _, d := range w.Days() {
		if !covered[d] {
			return false
		}
	}
	return true
}

func ptr(n int64) *int64 { return &n }

func rangeString(from, to Date) string {
	if from == to {
		return from.String()
	}
	return from.String() + ".." + to.String()
}

func joinReasons(rs []string) string {
	s := rs[0]
	for _, r := range rs[1:] {
		s += "; " + r
	}
	return s
}

// dateList writes dates compactly, folding consecutive days into ranges.
func dateList(ds []Date) string {
	sorted := append([]Date(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	var out string
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j].AddDays(1) {
			j++
		}
		if out != "" {
			out += ", "
		}
		out += rangeString(sorted[i], sorted[j])
		i = j + 1
	}
	return out
}

// shortDuration writes d to the minute (to the second under a minute) as
// 2h, 1h30m or 45s rather than 2h0m0s.
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sourced names the side an error came from, once: "Elido: GET timeseries
// …", not "Elido: elido: GET timeseries …" when the error already starts
// with the side's name.
func sourced(side string, err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, strings.ToLower(side)+": "); ok {
		msg = rest
	}
	return side + ": " + msg
}
