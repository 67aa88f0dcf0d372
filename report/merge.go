package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Merge combines the reports of a sharded backfill (--shard I/N) into one
// report over their whole window. The shards must be of one workspace and
// zone, of this schema version, and their windows must tile a range of
// days with no gap and no overlap; they may come in any order.
func Merge(shards []Report, generatedAt time.Time) (Report, error) {
	if len(shards) == 0 {
		return Report{}, fmt.Errorf("no report to merge")
	}
	sorted := append([]Report(nil), shards...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Window.From < sorted[j].Window.From })
	first := sorted[0]
	var keys []string
	for i, s := range sorted {
		switch {
		case s.SchemaVersion != SchemaVersion:
			return Report{}, fmt.Errorf("report %s has schema_version %d; this clickrecon merges version %d", s.RunKey, s.SchemaVersion, SchemaVersion)
		case s.WorkspaceID != first.WorkspaceID:
			return Report{}, fmt.Errorf("reports of two workspaces (%s and %s) cannot be merged", first.WorkspaceID, s.WorkspaceID)
		case s.StoreID != first.StoreID:
			return Report{}, fmt.Errorf("reports of two stores (%s and %s) cannot be merged: the shards of one backfill read one store with one query", first.StoreID, s.StoreID)
		case s.Window.TZ != first.Window.TZ:
			return Report{}, fmt.Errorf("reports in two time zones (%s and %s) cannot be merged: their days are not the same days", first.Window.TZ, s.Window.TZ)
		}
		if i > 0 {
			prev := sorted[i-1]
			prevTo, err1 := reconcile.ParseDate(prev.Window.To)
			from, err2 := reconcile.ParseDate(s.Window.From)
			if err1 != nil || err2 != nil {
				return Report{}, fmt.Errorf("report %s or %s has a malformed window", prev.RunKey, s.RunKey)
			}
			switch next := prevTo.AddDays(1); {
			case from.Before(next):
				return Report{}, fmt.Errorf("reports %s (%s..%s) and %s (%s..%s) overlap: merge the shards of one backfill only",
					prev.RunKey, prev.Window.From, prev.Window.To, s.RunKey, s.Window.From, s.Window.To)
			case from.After(next):
				return Report{}, fmt.Errorf("no report covers %s..%s, between %s and %s: run that shard first",
					next, from.AddDays(-1), prev.RunKey, s.RunKey)
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
		RunKey:        RunKey(first.WorkspaceID, reconcile.Window{From: from, To: to, Loc: loc}, "merge:"+strings.Join(keys, ",")),
		WorkspaceID:   first.WorkspaceID,
		StoreID:       first.StoreID,
		Window:        Window{From: first.Window.From, To: last.Window.To, TZ: first.Window.TZ},
		GeneratedAt:   generatedAt.UTC().Truncate(time.Second),
		Days:          []Day{},
		Links:         []Link{},
		Countries:     []Country{},
		Findings:      []Finding{},
		Requests:      map[string]int{},
	}
	summary, summaryKnown := int64(0), true
	modes := map[string]bool{}
	var interrupted []string
	for _, s := range sorted {
		m.Days = append(m.Days, s.Days...)
		m.Links = append(m.Links, s.Links...)
		m.Countries = append(m.Countries, s.Countries...)
		m.Findings = append(m.Findings, s.Findings...)
		m.Totals.API += s.Totals.API
		m.Totals.Local += s.Totals.Local
		if s.Totals.APISummary == nil {
			summaryKnown = false
		} else {
			summary += *s.Totals.APISummary
		}
		for k, v := range s.Requests {
			m.Requests[k] += v
		}
		modes[s.Drilldown.Mode] = true
		m.Drilldown.Requests += s.Drilldown.Requests
		m.Drilldown.UncheckedLinks += s.Drilldown.UncheckedLinks
		if s.Interrupted != "" {
			interrupted = append(interrupted, fmt.Sprintf("shard %s..%s: %s", s.Window.From, s.Window.To, s.Interrupted))
		}
	}
	m.Totals.Delta = m.Totals.Local - m.Totals.API
	if summaryKnown {
		m.Totals.APISummary = &summary
	}
	m.Drilldown.Mode = first.Drilldown.Mode
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
	return m, nil
}

// Read reads a report.json, given its path or its folder's.
func Read(path string) (Report, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "report.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Report{}, fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("%s is not a clickrecon report.json: %w", path, err)
	}
	return r, nil
}
