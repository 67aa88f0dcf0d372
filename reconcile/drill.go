package reconcile

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// DayDetail is what the drill-down read for one day that differs. A nil
// map or slice means that part was not read.
type DayDetail struct {
	// APILinks is Elido's count per link. When LinksComplete is false it
	// holds only the links that were checked one by one (the fallback),
	// zeros included, and a link absent from it was not checked.
	APILinks      map[string]int64
	LinksComplete bool
	// LinksBySums says the day's links were proved by sums over a run of
	// days (one breakdown over the run, a series per link whose sum over
	// it differs), not read by the day's own breakdown: links whose clicks
	// moved between days and cancel on each day where they differ are not
	// in APILinks and LocalLinks.
	LinksBySums bool
	// UncheckedLinks is how many links the store knows that the fallback
	// had no request budget left for.
	UncheckedLinks int
	LocalLinks     map[string]int64

	APIHours   []HourCount // Elido's hourly buckets of the day
	LocalHours []HourCount // the store's, on the same hour starts

	APICountries   map[string]int64
	LocalCountries map[string]int64 // nil when the store has no country

	// APILinkSum and LocalLinkSum are the sums of each side's per-link
	// rows of the day, nil when they were not all read. Each must be its
	// own side's day total: Explain checks them, so that a side whose two
	// numbers disagree is what a report blames, never a link, and never
	// the other side.
	APILinkSum, LocalLinkSum *int64
	// LocalRecount is the store's day total read again after LocalLinkSum
	// differed from the first read; nil when it was not read again. Equal
	// to LocalLinkSum, it says the day changed while it was read, not
	// that the queries disagree.
	LocalRecount *int64
	// TotalQuery and LinkQuery name the store's day-total and per-link
	// queries, for the user to fix when they disagree.
	TotalQuery, LinkQuery string

	Notes []string // why a part was not read

	// Merged are links the store keeps as one counter (its link_id
	// column's collation calls them equal): they are in neither
	// APILinks nor LocalLinks, and are said together.
	Merged []MergedLinks
}

// MergedLinks are links of a day that the store cannot count apart: their
// ids, the store's less Elido's clicks of them together (known: false
// where some of them were not checked), and what the report says of them.
type MergedLinks struct {
	IDs   []string
	Delta int64
	Known bool
	Note  string
}

// LinkDiff is one link whose counts differ on a day.
type LinkDiff struct {
	Date       Date
	LinkID     string
	API, Local int64
	Delta      int64
	Status     Status
}

// HourDiff is one hour of a day whose counts differ.
type HourDiff struct {
	Start      time.Time
	API, Local int64
	Delta      int64
}

// CountryCount is one country's counts on a day that differs. Local and
// Delta are nil when the store has no country.
type CountryCount struct {
	Date        Date
	CountryCode string
	API         int64
	Local       *int64
	Delta       *int64
}

// More finding kinds, from the drill-down and from looking across days.
const (
	FindingUnexplained    = "unexplained_remainder"  // per-link rows do not add up to the day's delta
	FindingUnchecked      = "links_unchecked"        // the request budget ran out
	FindingGapWindow      = "gap_window"             // the gap sits in a few consecutive hours
	FindingGapSpread      = "gap_spread"             // the gap is spread over the day
	FindingBoundaryShift  = "day_boundary_shift"     // a deficit matched by a surplus next door
	FindingWindowBalances = "window_total_matches"   // days differ but the window adds up
	FindingSilentDay      = "silent_day"             // both sides 0 while other days were busy
	FindingDrilldownGap   = "drilldown_incomplete"   // a part of the drill-down could not be read
	FindingStoreQueries   = "store_queries_disagree" // the store's per-link rows do not add up to its day total
	FindingLinksMerged    = "links_merged"           // links the store keeps as one counter: unverifiable one by one
	FindingLinksBySums    = "links_by_sums"          // days whose link rows rest on sums over a run
)

// Explain adds the drill-down to a comparison: the links and countries of
// each day that differs, the hours where its gap sits, and what only shows
// across days. details holds the days that were drilled into.
func Explain(res Result, details map[Date]DayDetail, loc *time.Location) Result {
	res.Days = append([]DayResult(nil), res.Days...)
	res = distrustStore(res, details)
	hourFindings := map[Date]Finding{}
	for i, d := range res.Days {
		det, ok := details[d.Date]
		if !ok || d.Delta == nil || d.Status == Unverifiable {
			continue
		}
		links := CompareLinks(d.Date, det.APILinks, det.LocalLinks, det.LinksComplete)
		res.Links = append(res.Links, links...)
		res.Findings = append(res.Findings, linkFindings(d, det, links)...)
		res.Days[i].HoursWithGap = CompareHours(det.APIHours, det.LocalHours)
		if f, ok := hourFinding(d, res.Days[i].HoursWithGap, len(det.APIHours), loc); ok {
			hourFindings[d.Date] = f
		}
		res.Countries = append(res.Countries, compareCountries(d.Date, det.APICountries, det.LocalCountries)...)
		for _, m := range det.Merged {
			res.Findings = append(res.Findings, Finding{Kind: FindingLinksMerged, Message: d.Date.String() + ": " + m.Note})
		}
		for _, n := range det.Notes {
			res.Findings = append(res.Findings, Finding{Kind: FindingDrilldownGap, Message: d.Date.String() + ": " + n})
		}
	}
	across, shifted := acrossDays(res, details, loc)
	// Where the gap sits in a day whose clicks moved across midnight says
	// nothing of a leak or an outage: the shift finding explains it.
	for _, d := range res.Days {
		if f, ok := hourFindings[d.Date]; ok && !shifted[d.Date] {
			res.Findings = append(res.Findings, f)
		}
	}
	res.Findings = append(res.Findings, across...)
	return res
}

// CompareLinks returns the links whose counts differ on day d, the
// largest |delta| first. When complete is false, only the links in api
// were checked and the others are left out rather than assumed to match.
func CompareLinks(d Date, api, local map[string]int64, complete bool) []LinkDiff {
	if api == nil {
		return nil
	}
	ids := map[string]bool{}
	for id := range api {
		ids[id] = true
	}
	if complete {
		for id := range local {
			ids[id] = true
		}
	}
	var out []LinkDiff
	for id := range ids {
		a, l := api[id], local[id]
		if a == l {
			continue
		}
		st := Surplus
		if l < a {
			st = Missing
		}
		out = append(out, LinkDiff{Date: d, LinkID: id, API: a, Local: l, Delta: l - a, Status: st})
	}
	sort.Slice(out, func(i, j int) bool {
		if ai, aj := abs64(out[i].Delta), abs64(out[j].Delta); ai != aj {
			return ai > aj
		}
		return out[i].LinkID < out[j].LinkID
	})
	return out
}

func linkFindings(d DayResult, det DayDetail, links []LinkDiff) []Finding {
	if det.APILinks == nil {
		return nil
	}
	var out []Finding
	var explained int64
	for _, l := range links {
		explained += l.Delta
	}
	for _, m := range det.Merged {
		if m.Known {
			explained += m.Delta
		}
	}
	if rest := *d.Delta - explained; rest != 0 {
		var why string
		switch {
		case !det.LinksComplete:
			why = "they are on links the store has never recorded, or on links left unchecked"
		case det.APILinkSum != nil && d.API != nil && *det.APILinkSum != *d.API:
			why = fmt.Sprintf("Elido's per-link counts add up to %d, its daily count is %d", *det.APILinkSum, *d.API)
		case det.APILinkSum != nil:
			why = "the store's per-link rows do not add up to its day total"
		default:
			why = "one side's per-link counts do not add up to its daily count"
		}
		out = append(out, Finding{Kind: FindingUnexplained, Message: fmt.Sprintf(
			"%s: %+d of the day's %+d clicks are not explained per link: %s", d.Date, rest, *d.Delta, why)})
	}
	if det.UncheckedLinks > 0 {
		out = append(out, Finding{Kind: FindingUnchecked, Message: fmt.Sprintf(
			"%s: %d links were not checked one by one (RECON_DRILLDOWN_MAX_REQUESTS ran out); nothing is known of them, they are not implied to match",
			d.Date, det.UncheckedLinks)})
	}
	return out
}

// CompareHours pairs Elido's and the store's hourly buckets and returns
// the hours that differ. Either side may be nil (not read): then there is
// nothing to compare.
func CompareHours(api, local []HourCount) []HourDiff {
	if api == nil || local == nil {
		return nil
	}
	byStart := map[int64]int64{}
	for _, h := range local {
		byStart[h.Start.UnixNano()] += h.Clicks
	}
	var out []HourDiff
	seen := map[int64]bool{}
	for _, h := range api {
		k := h.Start.UnixNano()
		seen[k] = true
		if l := byStart[k]; l != h.Clicks {
			out = append(out, HourDiff{Start: h.Start, API: h.Clicks, Local: l, Delta: l - h.Clicks})
		}
	}
	for _, h := range local {
		if !seen[h.Start.UnixNano()] && h.Clicks != 0 {
			out = append(out, HourDiff{Start: h.Start, Local: h.Clicks, Delta: h.Clicks})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// hourFinding says where in the day a gap sits: in a short run of
// consecutive hours holding most of it (an outage), or spread over the day
// (a steady leak).
func hourFinding(d DayResult, hours []HourDiff, dayHours int, loc *time.Location) (Finding, bool) {
	if len(hours) == 0 || d.Delta == nil || *d.Delta == 0 {
		return Finding{}, false
	}
	total := abs64(*d.Delta)
	// The run of consecutive hours holding the most of the gap.
	bestStart, bestEnd, bestSum := 0, 0, int64(0)
	for i := 0; i < len(hours); {
		j, sum := i, abs64(hours[i].Delta)
		for j+1 < len(hours) && hours[j+1].Start.Sub(hours[j].Start) <= time.Hour {
			j++
			sum += abs64(hours[j].Delta)
		}
		if sum > bestSum {
			bestStart, bestEnd, bestSum = i, j, sum
		}
		i = j + 1
	}
	runHours := bestEnd - bestStart + 1
	if runHours <= 6 && float64(bestSum) >= 0.8*float64(total) {
		from := hours[bestStart].Start.In(loc)
		to := hours[bestEnd].Start.Add(time.Hour).In(loc)
		return Finding{Kind: FindingGapWindow, Message: fmt.Sprintf(
			"%s: the gap is %s (%s): %+d of the day's %+d clicks; the other hours match%s",
			d.Date, HourSpan(from, to, loc), loc, sumDelta(hours[bestStart:bestEnd+1]), *d.Delta,
			unlessOthers(len(hours), runHours))}, true
	}
	if dayHours > 0 && len(hours)*2 >= dayHours {
		return Finding{Kind: FindingGapSpread, Message: fmt.Sprintf(
			"%s: the gap is spread over the day: %d of %d hours differ, the largest by %+d; a steady leak (a handler dropping or repeating a share of events) rather than an outage",
			d.Date, len(hours), dayHours, largest(hours))}, true
	}
	var parts []string
	for _, h := range hours {
		parts = append(parts, fmt.Sprintf("%s %+d", h.Start.In(loc).Format(hourClock), h.Delta))
	}
	return Finding{Kind: FindingGapWindow, Message: fmt.Sprintf("%s: the gap is in %d hours (%s): %s",
		d.Date, len(hours), loc, strings.Join(parts, ", "))}, true
}

func unlessOthers(all, run int) string {
	if all == run {
		return ""
	}
	return fmt.Sprintf(" (%d other hours differ a little)", all-run)
}

func sumDelta(hs []HourDiff) int64 {
	var s int64
	for _, h := range hs {
		s += h.Delta
	}
	return s
}

func largest(hs []HourDiff) int64 {
	var m int64
	for _, h := range hs {
		if abs64(h.Delta) > abs64(m) {
			m = h.Delta
		}
	}
	return m
}

func compareCountries(d Date, api, local map[string]int64) []CountryCount {
	if api == nil {
		return nil
	}
	codes := map[string]bool{}
	for c := range api {
		codes[c] = true
	}
	for c := range local {
		codes[c] = true
	}
	var out []CountryCount
	for c := range codes {
		row := CountryCount{Date: d, CountryCode: c, API: api[c]}
		if local != nil {
			row.Local, row.Delta = ptr(local[c]), ptr(local[c]-api[c])
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := int64(0), int64(0)
		if out[i].Delta != nil {
			di, dj = abs64(*out[i].Delta), abs64(*out[j].Delta)
		}
		if di != dj {
			return di > dj
		}
		if out[i].API != out[j].API {
			return out[i].API > out[j].API
		}
		return out[i].CountryCode < out[j].CountryCode
	})
	return out
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func mean(xs []int64) float64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return float64(s) / float64(len(xs))
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// hourClock names a wall-clock hour. On a DST day an hour can happen twice,
// so it carries the zone's abbreviation (02:00 CEST, 02:00 CET); on every
// day, so that every rendering names hours the same way.
const hourClock = "15:04 MST"

// HourSpan names the span of hours from..to in loc the one way reports,
// findings and repair messages do: "02:00 CEST–03:00 CEST".
func HourSpan(from, to time.Time, loc *time.Location) string {
	return from.In(loc).Format(hourClock) + "–" + to.In(loc).Format(hourClock)
}
