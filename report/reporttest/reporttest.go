// Package reporttest builds the reports tests of Slack's messages and of
// the run's gap alerts share: days, and a report over them the way
// report.New would build it.
package reporttest

import (
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

func ptr(v int64) *int64 { return &v }

// Day is a settled day with both counts known.
func Day(date string, api, local int64, status reconcile.Status, severity reconcile.Severity) report.Day {
	return report.Day{Date: date, Hours: 24, API: ptr(api), Local: ptr(local), Delta: ptr(local - api),
		Status: status, Severity: severity, Settled: true}
}

// Provisional is a day not yet settled.
func Provisional(date string, api, local int64) report.Day {
	d := Day(date, api, local, reconcile.Provisional, reconcile.OK)
	d.Settled = false
	return d
}

// Unverifiable is a settled day Elido could not be read for.
func Unverifiable(date string, local int64) report.Day {
	return report.Day{Date: date, Hours: 24, Local: ptr(local), Status: reconcile.Unverifiable, Severity: reconcile.OK, Settled: true,
		Reason: "Elido: GET timeseries: 503 Service Unavailable after 5 attempts"}
}

// New builds a report over days the way report.New would.
func New(days ...report.Day) report.Report {
	r := report.Report{
		SchemaVersion: 1,
		RunKey:        "20261124_20261126_5049a4dbee9a",
		WorkspaceID:   "48213",
		Window:        report.Window{From: days[0].Date, To: days[len(days)-1].Date, TZ: "Europe/Warsaw"},
		GeneratedAt:   time.Date(2026, 11, 27, 3, 0, 12, 0, time.UTC),
		Status:        report.StatusOK,
		Links:         []report.Link{},
		Findings:      []report.Finding{},
	}
	for _, d := range days {
		r.Days = append(r.Days, d)
		r.Coverage.Days++
		if d.API != nil && d.Local != nil && d.Status != reconcile.Unverifiable {
			r.Totals.API += *d.API
			r.Totals.Local += *d.Local
		}
		switch d.Status {
		case reconcile.Match:
			r.Coverage.Match++
		case reconcile.Missing:
			r.Coverage.Missing++
		case reconcile.Surplus:
			r.Coverage.Surplus++
		case reconcile.Provisional:
			r.Coverage.Provisional++
		case reconcile.Unverifiable:
			r.Coverage.Unverifiable++
		}
	}
	r.Totals.Delta = r.Totals.Local - r.Totals.API
	switch {
	case r.Coverage.Missing+r.Coverage.Surplus > 0:
		r.Status = report.StatusDiscrepancies
	case r.Coverage.Unverifiable > 0:
		r.Status = report.StatusIncomplete
	}
	return r
}

// OneDayGap is a night when a webhook receiver lost five clicks on one day of three.
func OneDayGap() report.Report {
	r := New(
		Day("2026-11-24", 1710, 1710, "match", "ok"),
		Day("2026-11-25", 1200, 1195, "missing", "warn"),
		Provisional("2026-11-26", 40, 40),
	)
	r.Links = []report.Link{
		{Date: "2026-11-25", LinkID: "lnk_spring_sale", API: 300, Local: 297, Delta: -3, Status: "missing"},
		{Date: "2026-11-25", LinkID: "lnk_newsletter", API: 120, Local: 118, Delta: -2, Status: "missing"},
	}
	return r
}
