package report

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/golden"
	"github.com/clickrecon/clickrecon/reconcile"
)

// oneDay is a one-day window that matches.
func oneDay(t *testing.T) Report {
	t.Helper()
	w := reconcile.Window{From: date("2026-11-29"), To: date("2026-11-29"), Loc: time.UTC}
	res := reconcile.Compare(reconcile.Input{
		Window: w, Now: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC), Settle: 2 * time.Hour,
		Tolerance: reconcile.Tolerance{FailAbs: 10, FailPct: 5},
		API:       map[reconcile.Date]reconcile.Reading{date("2026-11-29"): reconcile.Known(5130)},
		Local:     map[reconcile.Date]reconcile.Reading{date("2026-11-29"): reconcile.Known(5130)},
	})
	return New(res, w, Meta{RunKey: RunKey("48213", w, "sqlite:clicks.db"), WorkspaceID: "48213", StoreID: StoreID("sqlite:clicks.db"),
		GeneratedAt: time.Date(2026, 11, 30, 3, 0, 12, 0, time.UTC), Requests: map[string]int{"summary": 1, "timeseries": 1},
		Drilldown: Drilldown{Mode: DrillNone}})
}

// year is a 365-day backfill in Europe/Warsaw: its first ten days are
// beyond Elido's retention, one day in October lost 60 of 516 clicks
// (an outage between 14:00 and 16:00), one in March counted 40 clicks
// twice, and the rest match within a click.
func year(t *testing.T) Report {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	w := reconcile.Window{From: date("2025-11-01"), To: date("2026-10-31"), Loc: loc}
	api, local := map[reconcile.Date]reconcile.Reading{}, map[reconcile.Date]reconcile.Reading{}
	for i, d := 0, w.From; !w.To.Before(d); i, d = i+1, d.AddDays(1) {
		n := int64(480 + (i*37)%90)
		switch {
		case i < 10:
			api[d] = reconcile.Unknown(errors.New("outside Elido's retention (730 days on this plan)"))
			local[d] = reconcile.Known(n)
		case d.String() == "2026-10-24":
			api[d], local[d] = reconcile.Known(516), reconcile.Known(456)
		case d.String() == "2026-03-14":
			api[d], local[d] = reconcile.Known(n), reconcile.Known(n+40)
		default:
			api[d], local[d] = reconcile.Known(n), reconcile.Known(n-int64(i%2))
		}
	}
	res := reconcile.Compare(reconcile.Input{
		Window: w, Now: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC), Settle: 2 * time.Hour,
		Tolerance: reconcile.Tolerance{Abs: 1, FailAbs: 10, FailPct: 5},
		API:       api, Local: local,
	})
	hour := func(h int) time.Time { return time.Date(2026, 10, 24, h, 0, 0, 0, loc) }
	res = reconcile.Explain(res, map[reconcile.Date]reconcile.DayDetail{
		date("2026-10-24"): {
			APILinks:       map[string]int64{"lnk_black_friday": 300, "lnk_docs": 216},
			LinksComplete:  true,
			LocalLinks:     map[string]int64{"lnk_black_friday": 252, "lnk_docs": 204},
			APIHours:       []reconcile.HourCount{{Start: hour(13), Clicks: 30}, {Start: hour(14), Clicks: 40}, {Start: hour(15), Clicks: 36}},
			LocalHours:     []reconcile.HourCount{{Start: hour(13), Clicks: 30}, {Start: hour(14), Clicks: 10}, {Start: hour(15), Clicks: 6}},
			APICountries:   map[string]int64{"PL": 400, "DE": 100, "": 16},
			LocalCountries: map[string]int64{"PL": 352, "DE": 90, "": 14},
		},
	}, loc)
	rep := New(res, w, Meta{RunKey: RunKey("48213", w, "postgres://recon@db/clicks events"), WorkspaceID: "48213",
		StoreID: StoreID("postgres://recon@db/clicks events"), GeneratedAt: time.Date(2026, 11, 1, 3, 0, 12, 0, time.UTC),
		Requests:  map[string]int{"summary": 12, "timeseries": 12, "breakdown/link": 1, "breakdown/country": 1, "clicks/recent": 2},
		Drilldown: Drilldown{Mode: DrillBreakdown, Requests: 3}})
	AddDiagnoses(&rep, []reconcile.DayDiagnosis{reconcile.Diagnose(outageDay(loc), loc)}, loc)
	return rep
}

// outageDay is 2026-10-24 of year, read click by click in its two hours
// that differ: the store recorded nothing from 14:15 to 15:48:20.
func outageDay(loc *time.Location) reconcile.DayEvidence {
	hour := func(h int) time.Time { return time.Date(2026, 10, 24, h, 0, 0, 0, loc) }
	two := 2
	ev := reconcile.DayEvidence{Date: date("2026-10-24"), LinksLost: &two}
	rest := int64(516 - 30 - 40 - 36)
	for h := range 24 {
		p := reconcile.HourPair{Start: hour(h)}
		switch h {
		case 13:
			p.API, p.Local = 30, 30
		case 14:
			p.API, p.Local = 40, 10
		case 15:
			p.API, p.Local = 36, 6
		default:
			n := rest / 21
			if h == 23 {
				n = rest - 20*(rest/21)
			}
			p.API, p.Local = n, n
		}
		ev.Hours = append(ev.Hours, p)
	}
	links := []string{"lnk_black_friday", "lnk_docs"}
	for _, h := range []struct {
		hour, n, lost int
		every         time.Duration
	}{{14, 40, 10, 90 * time.Second}, {15, 36, 30, 100 * time.Second}} {
		rh := reconcile.RawHour{From: hour(h.hour), To: hour(h.hour + 1)}
		for i := range h.n {
			c := reconcile.Click{TS: hour(h.hour).Add(time.Duration(i) * h.every).UTC(), LinkID: links[i%2], CountryCode: "PL"}
			rh.API = append(rh.API, c)
			if (h.hour == 14 && i < h.lost) || (h.hour == 15 && i >= h.lost) {
				rh.Local = append(rh.Local, c)
			}
		}
		ev.Raw = append(ev.Raw, rh)
	}
	return ev
}

// Every file of a 1-day, a 4-day (over the autumn DST change) and a
// 365-day report matches its golden file.
func TestGoldenEveryFormat(t *testing.T) {
	for _, tt := range []struct {
		name string
		rep  func(*testing.T) Report
	}{{"1day", oneDay}, {"4day_dst", sample}, {"365day", year}} {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Render(tt.rep(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				golden.Check(t, fmt.Sprintf("%s/%s.golden", tt.name, f.Name), f.Data)
			}
		})
	}
}
