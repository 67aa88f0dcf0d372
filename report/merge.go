package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Merge combines the reports of a sharded backfill (--shard I/N) into one
// report over their whole window. The shards must be of one workspace and
// zone, of this schema version, and their windows must tile a range of
// days with no gap and no overlap; they may come in any order. A merged
// report is only as true as its shards' days, so each shard must pass
// CheckDays: a shard whose days were edited (a day removed, copied from
// another shard or listed twice) is refused, never merged.
func Merge(shards []Report, generatedAt time.Time) (Report, error) {
	if len(shards) == 0 {
		return Report{}, fmt.Errorf("no report to merge")
	}
	sorted := append([]Report(nil), shards...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Window.From < sorted[j].Window.From })
	first := sorted[0]
	var keys []string
	store := ""
	for i, s := range sorted {
		if err := checkShard(s, first); err != nil {
			return Report{}, err
		}
		// A shard whose store was not identified ("": it could not be
		// opened) is of the others' store.
		switch {
		case s.StoreID == "" || s.StoreID == store:
		case store == "":
			store = s.StoreID
		default:
			return Report{}, fmt.Errorf("reports of two stores (%s and %s) cannot be merged: the shards of one backfill read one store with one query", store, s.StoreID)
		}
		if i > 0 {
			if err := shardsMeet(sorted[i-1], s); err != nil {
				return Report{}, err
			}
		}
		keys = append(keys, s.RunKey)
	}
	last := sorted[len(sorted)-1]
	from, _ := reconcile.ParseDate(first.Window.From)
	to, _ := reconcile.ParseDate(last.Window.To)
	loc, err := time.LoadLocation(first.Window.TZ)
	if err != nil {
		return Report{}, fmt.Errorf("report %s: unknown time zone %q", first.RunKey, first.Window.TZ)
	}

	m := Report{
		SchemaVersion: SchemaVersion,
		Tool:          Tool,
		RunKey:        RunKey(first.WorkspaceID, reconcile.Window{From: from, To: to, Loc: loc}, "merge:"+strings.Join(keys, ",")),
		WorkspaceID:   first.WorkspaceID,
		StoreID:       store,
		Window:        Window{From: first.Window.From, To: last.Window.To, TZ: first.Window.TZ},
		GeneratedAt:   generatedAt.UTC().Truncate(time.Second),
		Days:          []Day{},
		Links:         []Link{},
		Countries:     []Country{},
		Findings:      []Finding{},
		Diagnoses:     []Diagnosis{},
		Requests:      map[string]int{},
	}
	addShards(&m, sorted)
	return m, nil
}

// checkShard reports whether shard s may be merged with first: its days
// pass CheckDays, clickrecon wrote it in this schema version, and it is of
// first's workspace and zone (Merge checks the store).
func checkShard(s, first Report) error {
	if err := s.CheckDays(); err != nil {
		return fmt.Errorf("shard %s (%s..%s): %w", s.RunKey, s.Window.From, s.Window.To, err)
	}
	switch {
	case s.Tool != "" && s.Tool != Tool:
		return fmt.Errorf("report %s was written by %q, not by clickrecon", s.RunKey, s.Tool)
	case s.SchemaVersion != SchemaVersion:
		return fmt.Errorf("report %s has schema_version %d; this clickrecon merges version %d", s.RunKey, s.SchemaVersion, SchemaVersion)
	case s.WorkspaceID != first.WorkspaceID:
		return fmt.Errorf("reports of two workspaces (%s and %s) cannot be merged", first.WorkspaceID, s.WorkspaceID)
	case s.Window.TZ != first.Window.TZ:
		return fmt.Errorf("reports in two time zones (%s and %s) cannot be merged: their days are not the same days", first.Window.TZ, s.Window.TZ)
	}
	return nil
}

// shardsMeet reports whether shard s begins the day after shard prev
// ends: no overlap and no gap between them.
func shardsMeet(prev, s Report) error {
	prevTo, err1 := reconcile.ParseDate(prev.Window.To)
	from, err2 := reconcile.ParseDate(s.Window.From)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("report %s or %s has a malformed window", prev.RunKey, s.RunKey)
	}
	switch next := prevTo.AddDays(1); {
	case from.Before(next):
		return fmt.Errorf("reports %s (%s..%s) and %s (%s..%s) overlap: merge the shards of one backfill only",
			prev.RunKey, prev.Window.From, prev.Window.To, s.RunKey, s.Window.From, s.Window.To)
	case from.After(next):
		return fmt.Errorf("no report covers %s..%s, between %s and %s: run that shard first",
			next, from.AddDays(-1), prev.RunKey, s.RunKey)
	}
	return nil
}

// addShards adds the sorted shards' days, links, countries, findings,
// diagnoses, requests and drill-down to m, then sets what follows from
// them: totals (with /summary's when every shard has it in range),
// drill-down mode, why the run stopped, coverage and status.
func addShards(m *Report, sorted []Report) {
	summary, summaryKnown, ok := int64(0), true, false
	modes := map[string]bool{}
	var interrupted []string
	for _, s := range sorted {
		m.Days = append(m.Days, s.Days...)
		m.Links = append(m.Links, s.Links...)
		m.Countries = append(m.Countries, s.Countries...)
		m.Findings = append(m.Findings, s.Findings...)
		m.Diagnoses = append(m.Diagnoses, s.Diagnoses...)
		if s.Totals.APISummary == nil {
			summaryKnown = false
		} else if summary, ok = reconcile.AddClicks(summary, *s.Totals.APISummary); !ok || !reconcile.CountInRange(*s.Totals.APISummary) || !reconcile.CountInRange(summary) {
			summaryKnown = false
		}
		for k, v := range s.Requests {
			m.Requests[k] += v
		}
		modes[s.Drilldown.Mode] = true
		m.Drilldown.Requests += s.Drilldown.Requests
		m.Drilldown.UncheckedLinks += s.Drilldown.UncheckedLinks
		m.Drilldown.UncheckedUnknown = m.Drilldown.UncheckedUnknown || s.Drilldown.UncheckedUnknown
		m.Drilldown.UndrilledDays += s.Drilldown.UndrilledDays
		m.Drilldown.RestRequests += s.Drilldown.RestRequests
		m.Drilldown.RestSeconds += s.Drilldown.RestSeconds
		if s.Interrupted != "" {
			interrupted = append(interrupted, fmt.Sprintf("shard %s..%s: %s", s.Window.From, s.Window.To, s.Interrupted))
		}
	}
	m.Totals = totalsOf(m.Days)
	if summaryKnown {
		m.Totals.APISummary = &summary
	}
	m.Drilldown.Mode = sorted[0].Drilldown.Mode
	if len(modes) > 1 {
		var names []string
		for k := range modes {
			names = append(names, k)
		}
		sort.Strings(names)
		m.Drilldown.Mode = strings.Join(names, "+")
	}
	m.Interrupted = strings.Join(interrupted, "; ")
	m.Coverage = coverageOf(m.Days)
	m.Status = status(m.Coverage, m.Interrupted)
}

// CheckDays reports whether r's days are the days of its window, each
// once and in order, whether each day's delta is its local count less its
// API count, and whether r's totals are the sum of its days. A report that
// fails it was edited or cut after clickrecon wrote it: its numbers
// cannot be trusted, and the error names the first day that is wrong.
func (r Report) CheckDays() error {
	from, err1 := reconcile.ParseDate(r.Window.From)
	to, err2 := reconcile.ParseDate(r.Window.To)
	if err1 != nil || err2 != nil || to.Before(from) {
		return fmt.Errorf("malformed window %q..%q", r.Window.From, r.Window.To)
	}
	want := from
	for i, d := range r.Days {
		date, err := reconcile.ParseDate(d.Date)
		switch {
		case err != nil:
			return fmt.Errorf("day %d has a malformed date %q", i+1, d.Date)
		case date.Before(from) || date.After(to):
			return fmt.Errorf("day %s is outside its window %s..%s", d.Date, r.Window.From, r.Window.To)
		case date.Before(want):
			return fmt.Errorf("day %s is listed twice (or out of order)", d.Date)
		case date.After(want):
			return fmt.Errorf("day %s is missing: the report has no row for it", want)
		}
		if err := checkDelta(d); err != nil {
			return fmt.Errorf("day %s: %w", d.Date, err)
		}
		want = want.AddDays(1)
	}
	if !want.After(to) {
		return fmt.Errorf("day %s is missing: the report has no row for it", want)
	}
	sum := totalsOf(slices.Clone(r.Days))
	if sum.API != r.Totals.API || sum.Local != r.Totals.Local || sum.Delta != r.Totals.Delta {
		return fmt.Errorf("totals api %d, local %d, delta %d are not the sum of its days (api %d, local %d, delta %d)",
			r.Totals.API, r.Totals.Local, r.Totals.Delta, sum.API, sum.Local, sum.Delta)
	}
	return nil
}

// checkDelta reports whether a day's delta is its local count less its
// API count, when it has one.
func checkDelta(d Day) error {
	if d.Delta == nil {
		return nil
	}
	if d.API == nil || d.Local == nil {
		return fmt.Errorf("a delta of %d without both counts", *d.Delta)
	}
	if !reconcile.CountInRange(*d.API) || !reconcile.CountInRange(*d.Local) || *d.Local-*d.API != *d.Delta {
		return fmt.Errorf("delta %d is not local %d less api %d", *d.Delta, *d.Local, *d.API)
	}
	return nil
}

// totalsOf sums the days both sides of which were read and trusted, as
// reconcile.Compare does, without ever wrapping around: a day whose counts
// are out of range, or would take a total out of range, becomes
// unverifiable (a report from a clickrecon that let such counts through).
func totalsOf(days []Day) Totals {
	t := Totals{Unknown: true}
	for i, d := range days {
		if d.Status == reconcile.Unverifiable {
			continue
		}
		var api, local int64
		ok := d.API != nil && d.Local != nil && reconcile.CountInRange(*d.API) && reconcile.CountInRange(*d.Local)
		if ok {
			var okAPI, okLocal bool
			api, okAPI = reconcile.AddClicks(t.API, *d.API)
			local, okLocal = reconcile.AddClicks(t.Local, *d.Local)
			ok = okAPI && okLocal && reconcile.CountInRange(api) && reconcile.CountInRange(local)
		}
		if !ok {
			days[i].Status, days[i].Severity, days[i].Delta = reconcile.Unverifiable, reconcile.OK, nil
			days[i].Reason = joinReason(d.Reason, fmt.Sprintf("a count is missing or out of range (a count of clicks is from 0 to %d): a misread, not a gap", reconcile.MaxClicks))
			continue
		}
		t.API, t.Local, t.Unknown = api, local, false
	}
	t.Delta = t.Local - t.API // both in 0..MaxClicks: no overflow
	return t
}

func joinReason(was, more string) string {
	if was == "" {
		return more
	}
	return was + "; " + more
}
