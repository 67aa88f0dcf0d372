package sim

import (
	"context"
	"encoding/json"
	"fmt"
	gomaps "maps"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// The trend over the simulated nights (clickrecon trend, and serve's
// page, read what checkTrend reads): after the last night, every day of
// the nights' windows, and every week, must say what the nights' own
// reports say. The reference here is the documented rule, written without
// the trend's code: a day's verdict is its latest report's that compared
// it (match, missing, surplus), else its latest not yet settled, else its
// latest unverifiable; its missing and surplus clicks are that report's;
// the clicks restored are summed over every report that repaired it; its
// gap was found when the first report (by when it was made) showed it,
// and healed, if its verdict is a match, when the first report after its
// last gap showed it matching. The history's trend must agree with the reports' on every day whose verdict
// both took from the same run.

// refDay is the reference's verdict of one day.
type refDay struct {
	rank     int
	at       time.Time
	runKey   string
	status   reconcile.Status
	api      *int64
	local    *int64
	missing  int64
	surplus  int64
	checks   int
	restored int64
	loss     map[string]int64
	// seen is every report's verdict of the day, for when its gap was
	// first found and when it was seen healed.
	seen []refSeen
}

type refSeen struct {
	at     time.Time
	runKey string
	status reconcile.Status
}

// foundHealed is when the day's gap was first found (the first report,
// by when it was made, to show it missing or surplus) and, when its
// verdict is a match, when it was first seen matching after its last gap.
func (r *refDay) foundHealed() (found, healed string) {
	ss := slices.Clone(r.seen)
	slices.SortFunc(ss, func(a, b refSeen) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.runKey, b.runKey)
	})
	last := -1
	for i, s := range ss {
		if s.status == reconcile.Missing || s.status == reconcile.Surplus {
			if found == "" {
				found = s.at.UTC().Format(time.RFC3339)
			}
			last = i
		}
	}
	if r.status != reconcile.Match || last < 0 {
		return found, ""
	}
	for _, s := range ss[last+1:] {
		if s.status == reconcile.Match {
			return found, s.at.UTC().Format(time.RFC3339)
		}
	}
	return found, ""
}

func verdictRank(s reconcile.Status) int {
	switch s {
	case reconcile.Match, reconcile.Missing, reconcile.Surplus:
		return 2
	case reconcile.Provisional:
		return 1
	}
	return 0
}

// checkTrend compares the trend of the nights from..to with the reports
// in the simulation's bucket, and the history's trend with the reports'.
func (s *sim) checkTrend(n int, from, to reconcile.Date) {
	t := s.t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.gate.reset(nil, cancel)
	dest, err := storage.Open(ctx, s.s3dir)
	if err != nil {
		t.Fatal(err)
	}
	workspace := s.env["ELIDO_WORKSPACE_ID"]

	// The reference, from every whole report.
	runs, err := dest.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]*refDay{}
	reports := 0
	for _, r := range runs {
		if r.Partial || r.Report.RunKey == "" {
			continue
		}
		f, err := dest.OpenRunFile(ctx, r.Key, "report.json")
		if err != nil {
			t.Fatalf("open the report of %s: %v", r.Key, err)
		}
		var rep report.Report
		err = json.NewDecoder(f).Decode(&rep)
		f.Close()
		if err != nil {
			t.Fatalf("read the report of %s: %v", r.Key, err)
		}
		reports++
		loss := map[string]map[string]int64{}
		for _, d := range rep.Diagnoses {
			if loss[d.Date] == nil {
				loss[d.Date] = map[string]int64{}
			}
			loss[d.Date][d.Kind] += d.Clicks
		}
		for _, d := range rep.Days {
			date, _ := reconcile.ParseDate(d.Date)
			if date.Before(from) || to.Before(date) {
				continue
			}
			v := refDay{rank: verdictRank(d.Status), at: rep.GeneratedAt, runKey: rep.RunKey, status: d.Status,
				api: d.API, local: d.Local, loss: loss[d.Date]}
			if d.API != nil && d.Local != nil && d.Status == reconcile.Missing {
				v.missing = *d.API - *d.Local
			}
			if d.API != nil && d.Local != nil && d.Status == reconcile.Surplus {
				v.surplus = *d.Local - *d.API
			}
			old := ref[d.Date]
			if old == nil {
				old = &refDay{rank: -1}
				ref[d.Date] = old
			}
			v.checks, v.restored = old.checks+1, old.restored+d.Repaired
			v.seen = append(old.seen, refSeen{rep.GeneratedAt, rep.RunKey, d.Status})
			if v.rank > old.rank || v.rank == old.rank && (v.at.After(old.at) || v.at.Equal(old.at) && v.runKey > old.runKey) {
				*old = v
			} else {
				old.checks, old.restored, old.seen = v.checks, v.restored, v.seen
			}
		}
	}

	tr, err := trend.New(from, to)
	if err != nil {
		t.Fatal(err)
	}
	read, err := trend.Read(ctx, dest, tr, workspace)
	if err != nil {
		t.Fatalf("the trend of the reports: %v", err)
	}
	if read != reports {
		s.violation(n, "trend differs", "the trend read %d reports, the bucket holds %d whole ones", read, reports)
	}
	series := tr.Series()
	if len(series) != 1 && reports > 0 {
		var keys []string
		for _, x := range series {
			runs := map[string]bool{}
			for _, d := range x.Days {
				if d.Checked {
					runs[d.RunKey] = true
				}
			}
			keys = append(keys, fmt.Sprintf("%+v (%d runs, among them %v)", x.Key, x.Runs, slices.Sorted(gomaps.Keys(runs))))
		}
		s.violation(n, "trend differs", "%d series for one workspace, store and zone: %v", len(series), keys)
		return
	}
	if reports == 0 {
		return
	}
	got := series[0]
	weeks := map[string][3]int64{} // missing, surplus, restored
	for _, d := range got.Days {
		r := ref[d.Date]
		if r == nil {
			if d.Checked {
				s.violation(n, "trend differs", "%s is checked in the trend (run %s), no report holds it", d.Date, d.RunKey)
			}
			continue
		}
		date, _ := reconcile.ParseDate(d.Date)
		y, w := date.Start(s.loc).ISOWeek()
		wk := fmt.Sprintf("%d-W%02d", y, w)
		sum := weeks[wk]
		weeks[wk] = [3]int64{sum[0] + r.missing, sum[1] + r.surplus, sum[2] + r.restored}
		found, healed := r.foundHealed()
		want := fmt.Sprintf("%s %s api %s local %s missing %d surplus %d checks %d restored %d loss %v found %s healed %s",
			r.runKey, r.status, num64(r.api), num64(r.local), r.missing, r.surplus, r.checks, r.restored, lossOf(r.loss), found, healed)
		have := fmt.Sprintf("%s %s api %s local %s missing %d surplus %d checks %d restored %d loss %v found %s healed %s",
			d.RunKey, d.Status, num64(d.API), num64(d.Local), d.Missing, d.Surplus, d.Checks, d.Restored, lossOf(d.Loss), instant(d.Found), instant(d.Healed))
		if want != have {
			s.violation(n, "trend differs", "%s: the trend says %s; the reports say %s", d.Date, have, want)
		}
	}
	for _, p := range got.Weeks {
		w := weeks[p.Name]
		if p.Missing != w[0] || p.Surplus != w[1] || p.Restored != w[2] {
			s.violation(n, "trend differs", "week %s: the trend sums missing %d surplus %d restored %d; the reports' days %d %d %d",
				p.Name, p.Missing, p.Surplus, p.Restored, w[0], w[1], w[2])
		}
	}

	// The history's trend: the same verdict wherever it took it from the
	// same run.
	ht, err := history.ParseDSN(s.env["HISTORY_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Open(ctx, ht)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	th, err := trend.New(from, to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trend.ReadHistory(ctx, h, th, workspace); err != nil {
		t.Fatalf("the trend of the history: %v", err)
	}
	hs := th.Series()
	if len(hs) != 1 {
		s.violation(n, "trend differs", "the history's trend has %d series for one workspace, store and zone", len(hs))
		return
	}
	byDate := map[string]trend.Day{}
	for _, d := range got.Days {
		byDate[d.Date] = d
	}
	same := 0
	for _, d := range hs[0].Days {
		r := byDate[d.Date]
		if !d.Checked || d.RunKey != r.RunKey {
			continue
		}
		same++
		want := fmt.Sprintf("%s api %s local %s missing %d surplus %d loss %v", r.Status, num64(r.API), num64(r.Local), r.Missing, r.Surplus, lossOf(r.Loss))
		have := fmt.Sprintf("%s api %s local %s missing %d surplus %d loss %v", d.Status, num64(d.API), num64(d.Local), d.Missing, d.Surplus, lossOf(d.Loss))
		if want != have {
			s.violation(n, "trend differs", "%s (run %s): the history's trend says %s; the reports' %s", d.Date, d.RunKey, have, want)
		}
	}
	// The time to alert: the history has each day alerted on the night
	// the channel began to show its gap (first, or again after a heal). A
	// webhook's post marked sent whose run died before it left counts as
	// told (it cannot be told from one whose answer was lost): its days
	// may be alerted on a night before the channel shows them, or never;
	// and a heal that never left makes the history's gap of the day, when
	// it returns, a new one, alerted on a later night than the channel's.
	// A post still pending after the last night (its run killed, and the
	// history gone the night after) has told the history nothing yet.
	pending, err := h.Pending(ctx, history.Scope{WorkspaceID: workspace, StoreID: hs[0].StoreID, TZ: hs[0].TZ})
	if err != nil {
		t.Fatal(err)
	}
	unsettled := map[string]bool{}
	for _, p := range pending {
		for _, a := range p.Alerts {
			unsettled[a.Date] = true
		}
	}
	early := 0
	nightOf := func(t *time.Time) int {
		if t == nil {
			return 0
		}
		first := time.Date(2027, 3, 1, 0, 0, 0, 0, s.loc)
		l := t.In(s.loc)
		return int(time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, s.loc).Sub(first).Hours()/24+0.5) + 1
	}
	for _, d := range hs[0].Days {
		tl := s.tell.days[d.Date]
		shown := 0
		if tl != nil {
			shown = tl.alertedOn
		}
		got := nightOf(d.Alerted)
		switch {
		case got == shown:
		case got == 0 && unsettled[d.Date]:
		case s.c.slack == "webhook" && got != 0 && (shown == 0 || got < shown):
			early++
		case s.c.slack == "webhook" && got > shown && shown != 0 && s.gate.neverLeft(d.Date):
			early++
		default:
			s.violation(n, "trend differs", "%s: the history's trend has it alerted on night %d (%s), the channel began to show its gap on night %d", d.Date, got, instant(d.Alerted), shown)
		}
	}
	stats.Lock()
	stats.events["trend: days checked against the reports"] += len(got.Days)
	stats.events["trend: days the history's trend took from the same run"] += same
	stats.events["trend: days a webhook's post that never left put on another night"] += early
	stats.Unlock()
}

// instant is t to the second, in UTC; "" for none.
func instant(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func num64(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// lossOf prints a loss map in key order (fmt sorts map keys); empty maps
// and nil print alike.
func lossOf(m map[string]int64) string {
	if len(m) == 0 {
		return "{}"
	}
	return fmt.Sprint(m)
}
