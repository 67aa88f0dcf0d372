package alert

import (
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// plan is what a report means for Slack, given what was alerted before.
type plan struct {
	fresh   []report.Day // settled gaps not alerted (or healed since)
	same    []report.Day // alerted with these very numbers
	changed []Change     // alerted with other numbers
	healed  []Change     // alerted, and matching now
	prior   map[string]history.Alert
}

// decide sorts rep's settled days by what prior (history's alerts, by
// date; nil without history) says Slack was told.
func decide(rep report.Report, prior map[string]history.Alert) plan {
	p := plan{prior: prior}
	for _, d := range rep.Days {
		a, had := prior[d.Date]
		open := had && !a.Healed
		switch {
		case isGap(d) && !open:
			p.fresh = append(p.fresh, d)
		case isGap(d) && a.Status == d.Status && a.API == *d.API && a.Local == *d.Local:
			p.same = append(p.same, d)
		case isGap(d):
			p.changed = append(p.changed, Change{Date: d.Date, Kind: ChangeChanged, Was: alerted(a), Now: current(d)})
		case open && d.Settled && reconcile.Status(d.Status) == reconcile.Match && d.API != nil && d.Local != nil:
			p.healed = append(p.healed, Change{Date: d.Date, Kind: ChangeHealed, Was: alerted(a), Now: current(d)})
		}
	}
	return p
}

func alerted(a history.Alert) State {
	return State{Status: a.Status, Severity: a.Severity, API: a.API, Local: a.Local, Delta: a.Delta}
}

func current(d report.Day) *State {
	s := State{Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local}
	s.Delta = s.Local - s.API
	return &s
}

func updateKind(cs []Change) string {
	for _, c := range cs {
		if c.Kind != ChangeHealed {
			return history.KindUpdate
		}
	}
	return history.KindHealed
}

// gapDays returns the report days of changes.
func gapDays(rep report.Report, cs []Change) []report.Day {
	want := map[string]bool{}
	for _, c := range cs {
		want[c.Date] = true
	}
	var days []report.Day
	for _, d := range rep.Days {
		if want[d.Date] {
			days = append(days, d)
		}
	}
	return days
}

func dates(days []report.Day) []string {
	var ds []string
	for _, d := range days {
		ds = append(ds, d.Date)
	}
	return ds
}

func changeDates(cs []Change) []string {
	var ds []string
	for _, c := range cs {
		ds = append(ds, c.Date)
	}
	return ds
}
