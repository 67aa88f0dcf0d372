package job

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// DiagnoseMode is RECON_DIAGNOSE: how far a run goes to say why a gap
// day lost its clicks.
type DiagnoseMode string

// The diagnose modes.
const (
	DiagnoseRaw    DiagnoseMode = "raw"    // the raw clicks of the gap hours where the budget and clicks/recent reach, else the hours
	DiagnoseHourly DiagnoseMode = "hourly" // the hourly counts the drill-down read: no request of its own
	DiagnoseOff    DiagnoseMode = "off"    // no diagnosis
)

// diagnoser reads the evidence of the run's settled gap days and names
// their shapes (reconcile.Diagnose).
type diagnoser struct {
	mode   DiagnoseMode
	client *elido.Client
	store  *store.Store
	query  store.Query
	window reconcile.Window
	left   int // requests of RECON_DRILLDOWN_MAX_REQUESTS the drill-down left
	log    *slog.Logger
	// keep keeps what was read for the repair of the run (--repair);
	// without one, each day's clicks are dropped once it is diagnosed.
	keep bool
}

// diagnoses is what the stage found: each diagnosed day, the raw clicks it
// read (for the repair), and the requests it made.
type diagnoses struct {
	Days     []reconcile.DayDiagnosis
	Reads    *rawReads
	Requests int
}

// diagnoseRun is the run's diagnosis stage: with the drill-down on, it
// diagnoses the settled gap days within what the drill-down left of
// RECON_DRILLDOWN_MAX_REQUESTS and of its time.
func diagnoseRun(ctx context.Context, o Options, d Deps, st *store.Store, res reconcile.Result, drillRequests int) diagnoses {
	if !o.Drilldown || o.Diagnose == "" || o.Diagnose == DiagnoseOff {
		return diagnoses{}
	}
	var cancel context.CancelFunc
	if d.DrillLimit != nil {
		ctx, cancel = d.DrillLimit(ctx)
	} else {
		ctx, cancel = context.WithDeadline(ctx, drillDeadline(ctx, o.Timeout))
	}
	defer cancel()
	return diagnose(ctx, diagnoser{mode: o.Diagnose, client: d.Elido, store: st, query: o.Query, window: o.Window,
		left: o.DrillMax - drillRequests, log: d.Log, keep: o.Repair != RepairOff}, res)
}

// diagnose diagnoses every settled gap day whose hours the drill-down
// compared, worst first. Raw clicks are read (mode raw) only for the hours
// that differ, only while the requests the drill-down left suffice for a
// whole day, and only as far back as clicks/recent reaches: an hour it
// gives fewer clicks for than Elido counts ends the reading of that day and
// of every older hour. A window without a gap day makes no request.
func diagnose(ctx context.Context, dg diagnoser, res reconcile.Result) diagnoses {
	out := diagnoses{Reads: &rawReads{}}
	if dg.mode == "" || dg.mode == DiagnoseOff || dg.store == nil || ctx.Err() != nil {
		return out
	}
	gaps := map[reconcile.Date]reconcile.DayResult{}
	for _, d := range res.Gaps() {
		gaps[d.Date] = d
	}
	b := newBudget(max(0, dg.left))
	bctx := elido.WithBudget(ctx, b.take, b.giveBack)
	raw := dg.mode == DiagnoseRaw && dg.client != nil
	var reach time.Time // clicks/recent gave no older click than this
	rows := true        // the store can list its rows
	for _, date := range worstFirst(res.Gaps()) {
		day := gaps[date]
		if !day.Settled || day.API == nil || day.Local == nil {
			continue
		}
		if len(day.HoursWithGap) == 0 {
			out.Days = append(out.Days, reconcile.DayDiagnosis{Date: date, Note: "not diagnosed: its hours were not compared (see the drill-down's findings)"})
			continue
		}
		ev, err := dg.hours(ctx, day)
		if err != nil {
			dg.log.Warn("day not diagnosed", "date", date.String(), "err", err)
			out.Days = append(out.Days, reconcile.DayDiagnosis{Date: date, Note: err.Error()})
			continue
		}
		ev.LinksLost = linksLost(res.Links, date, ev.Hours)
		var note string
		if raw && hourGap(ev.Hours) >= reconcile.DiagMinClicks {
			var stop bool
			ev.Raw, note, stop = dg.rawHours(bctx, b, day, &reach, out.Reads)
			raw = !stop
		}
		if ev.Raw == nil && rows {
			var rowNote string
			ev.Rows, rowNote, rows = dg.surplusRows(ctx, day.Date, ev.Hours)
			note = cmp.Or(note, rowNote)
		}
		dd := reconcile.Diagnose(ev, dg.window.Loc)
		if dd.Note == "" {
			dd.Note = note
		}
		out.Days = append(out.Days, dd)
	}
	reconcile.JoinMidnight(out.Days, dg.window.Loc, func(date reconcile.Date) reconcile.Beside {
		return besideDay(dg.window, res, out.Days, date)
	})
	out.Requests = b.used()
	dg.log.Info("gap days diagnosed", "days", len(out.Days), "requests", out.Requests)
	return out
}

// besideDay says what the run knows of date, the day next to an outage
// that reaches midnight, when no diagnosis of date continues it.
func besideDay(w reconcile.Window, res reconcile.Result, diagnosed []reconcile.DayDiagnosis, date reconcile.Date) reconcile.Beside {
	if date.Before(w.From) || date.After(w.To) {
		return reconcile.Beside{Why: date.String() + " is outside the run's window and was not checked"}
	}
	for _, dd := range diagnosed {
		if dd.Date == date && dd.Note != "" {
			return reconcile.Beside{Why: date.String() + " was not diagnosed (" + dd.Note + ")"}
		}
	}
	for _, d := range res.Days {
		if d.Date != date {
			continue
		}
		switch {
		case d.Status == reconcile.Match && d.API != nil && d.Local != nil && *d.API == *d.Local:
			return reconcile.Beside{Ended: true, Why: date.String() + " holds every click Elido counted"}
		case d.Status == reconcile.Match:
			return reconcile.Beside{Why: date.String() + " matched within the tolerance, its hours not compared"}
		case d.Status == reconcile.Provisional:
			return reconcile.Beside{Why: date.String() + " has not settled and was not checked"}
		case d.Status == reconcile.Unverifiable:
			return reconcile.Beside{Why: date.String() + " could not be checked (unverifiable)"}
		}
	}
	return reconcile.Beside{Why: date.String() + " was not diagnosed"}
}

// hours returns a day's evidence of hourly counts: the store's counts of
// every hour, Elido's for the hours the drill-down found differing (the
// others are the store's, which the drill-down found equal). Its sums must
// be the day's totals, else the store changed since: no evidence then.
func (dg diagnoser) hours(ctx context.Context, day reconcile.DayResult) (reconcile.DayEvidence, error) {
	local, err := dg.store.HourlyCounts(ctx, dg.query, day.Date, dg.window.Loc)
	if err != nil {
		return reconcile.DayEvidence{}, fmt.Errorf("the store's hourly counts could not be read again: %w", err)
	}
	differ := map[int64]reconcile.HourDiff{}
	for _, h := range day.HoursWithGap {
		differ[h.Start.UnixMilli()] = h
	}
	ev := reconcile.DayEvidence{Date: day.Date}
	var api, sum int64
	for _, h := range local {
		p := reconcile.HourPair{Start: h.Start, API: h.Clicks, Local: h.Clicks}
		if dh, ok := differ[h.Start.UnixMilli()]; ok {
			p.API = dh.API
			delete(differ, h.Start.UnixMilli())
		}
		ev.Hours = append(ev.Hours, p)
		api, sum = api+p.API, sum+p.Local
	}
	if len(differ) > 0 || api != *day.API || sum != *day.Local {
		return reconcile.DayEvidence{}, errors.New("the store's hours changed since they were compared: not diagnosed")
	}
	return ev, nil
}

// hourGap is the clicks the hours differ by, each hour's own way: a gap
// smaller than reconcile.DiagMinClicks shows no shape, and its raw clicks
// are not read.
func hourGap(hours []reconcile.HourPair) int64 {
	var n int64
	for _, h := range hours {
		n += max(h.API-h.Local, h.Local-h.API)
	}
	return n
}

// linksLost is how many links lost clicks on date, when the links that
// differ account for every click the hours lost; else nil.
func linksLost(links []reconcile.LinkDiff, date reconcile.Date, hours []reconcile.HourPair) *int {
	var lost, byLink int64
	for _, h := range hours {
		lost += max(0, h.API-h.Local)
	}
	n := 0
	for _, l := range links {
		if l.Date == date && l.Delta < 0 {
			n++
			byLink -= l.Delta
		}
	}
	if n == 0 || byLink != lost {
		return nil
	}
	return &n
}

// rawHours reads both sides' clicks of each hour of day that differs,
// newest first, when the budget b holds enough requests for all of them.
// It returns the hours read (nil: the day is diagnosed from its hours),
// why not, and whether no later day can be read either (the store cannot
// list its rows, or the budget or a failure ended the reading).
func (dg diagnoser) rawHours(ctx context.Context, b *budget, day reconcile.DayResult, reach *time.Time, reads *rawReads) (_ []reconcile.RawHour, note string, stop bool) {
	_, dayEnd := day.Date.Bounds(dg.window.Loc)
	need := 0
	for _, h := range day.HoursWithGap {
		need += int(max(1, (h.API+repair.PageSize-1)/repair.PageSize))
	}
	if b.max-b.used() < need {
		return nil, fmt.Sprintf("raw clicks not read: RECON_DRILLDOWN_MAX_REQUESTS leaves %d requests, its %d hours that differ need %d", b.max-b.used(), len(day.HoursWithGap), need), false
	}
	var out []reconcile.RawHour
	for i := len(day.HoursWithGap) - 1; i >= 0; i-- {
		h := day.HoursWithGap[i]
		from, to := hourBounds(h.Start, dayEnd)
		if !reach.IsZero() && from.Before(*reach) {
			return nil, "raw clicks not read: clicks/recent does not reach this far back", false
		}
		rows, err := dg.store.Clicks(ctx, dg.query, from, to)
		if errors.Is(err, store.ErrNotSupported) {
			return nil, "raw clicks not read: the store's rows cannot be listed (" + err.Error() + ")", true
		}
		if err != nil {
			dg.log.Warn("store rows not read for the diagnosis", "date", day.Date.String(), "err", err)
			return nil, "raw clicks not read: the store's rows could not be read", false
		}
		clicks, err := dg.client.ClicksRecentPaged(ctx, from, to, repair.PageSize)
		b.check(err)
		if err != nil {
			dg.log.Warn("raw clicks not read for the diagnosis", "date", day.Date.String(), "err", err)
			return nil, "raw clicks not read: " + err.Error(), b.err() != nil || errors.Is(err, elido.ErrBudget)
		}
		if int64(len(clicks)) != h.API {
			// Beyond clicks/recent's reach, or the hour changed: no older
			// hour is read.
			*reach = to
			return nil, fmt.Sprintf("raw clicks not read: clicks/recent gave %d clicks for %s, Elido counts %d: it does not reach this far back",
				len(clicks), reconcile.HourSpan(from, to, dg.window.Loc), h.API), false
		}
		if dg.keep {
			reads.put(from, to, clicks)
		}
		rh := reconcile.RawHour{From: from, To: to}
		for _, c := range clicks {
			rh.API = append(rh.API, reconcile.Click(c))
		}
		rh.Local = rowClicks(rows)
		out = append(out, rh)
	}
	return out, "", false
}

// surplusRows reads the store's rows of a day's hours holding more rows
// than Elido counts, for a day diagnosed from its hourly counts: they cost
// no Elido request, and rows repeating another row there are duplicates.
// Nothing is read when the surplus is too small to be named. It returns
// the hours read, why not, and whether the store can list its rows.
func (dg diagnoser) surplusRows(ctx context.Context, date reconcile.Date, hours []reconcile.HourPair) (_ []reconcile.RowHour, note string, listed bool) {
	var surplus int64
	for _, h := range hours {
		surplus += max(0, h.Local-h.API)
	}
	if hourGap(hours) < reconcile.DiagMinClicks || surplus < reconcile.DiagMinDuplicates {
		return nil, "", true
	}
	_, dayEnd := date.Bounds(dg.window.Loc)
	var out []reconcile.RowHour
	for _, h := range hours {
		if h.Local <= h.API {
			continue
		}
		from, to := hourBounds(h.Start, dayEnd)
		rows, err := dg.store.Clicks(ctx, dg.query, from, to)
		if errors.Is(err, store.ErrNotSupported) {
			return nil, "store rows not read: the store's rows cannot be listed (" + err.Error() + ")", false
		}
		if err != nil {
			dg.log.Warn("store rows not read for the diagnosis", "date", date.String(), "err", err)
			return nil, "store rows not read: the store's rows could not be read", true
		}
		out = append(out, reconcile.RowHour{From: from, To: to, Rows: rowClicks(rows)})
	}
	return out, "", true
}

// hourBounds is the hour starting at start, in UTC, ending no later than
// the day's end.
func hourBounds(start, dayEnd time.Time) (from, to time.Time) {
	from, to = start.UTC(), start.Add(time.Hour).UTC()
	if to.After(dayEnd) {
		to = dayEnd.UTC() // the short last hour of Australia/Lord_Howe's DST day
	}
	return from, to
}

// rowClicks are the store's rows as a diagnosis reads them.
func rowClicks(rows []store.Click) []reconcile.Click {
	out := make([]reconcile.Click, 0, len(rows))
	for _, c := range rows {
		out = append(out, reconcile.Click{TS: c.TS, LinkID: c.LinkID, CountryCode: c.CountryCode})
	}
	return out
}

// rawReads are the clicks the diagnosis read with repair.PageSize, by span, for
// the repair of the same run to take instead of reading them again. Each
// is given once: the repair's second read, with other page boundaries,
// still goes to Elido, so what it proves it still proves.
type rawReads struct {
	mu    sync.Mutex
	spans map[[2]int64][]elido.Click
}

func (r *rawReads) put(from, to time.Time, clicks []elido.Click) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spans == nil {
		r.spans = map[[2]int64][]elido.Click{}
	}
	r.spans[[2]int64{from.UnixMilli(), to.UnixMilli()}] = clicks
}

func (r *rawReads) take(from, to time.Time) ([]elido.Click, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]int64{from.UnixMilli(), to.UnixMilli()}
	got, ok := r.spans[k]
	delete(r.spans, k)
	return got, ok
}

// reusingElido is the Elido a run's repair reads: the client, except that
// the first read of an hour at repair.PageSize is the one the diagnosis made.
type reusingElido struct {
	*elido.Client
	reads *rawReads
}

func (e reusingElido) ClicksRecentPaged(ctx context.Context, from, to time.Time, pageSize int) ([]elido.Click, error) {
	if pageSize == repair.PageSize {
		if got, ok := e.reads.take(from, to); ok {
			return got, nil
		}
	}
	return e.Client.ClicksRecentPaged(ctx, from, to, pageSize)
}

// repairElido is what the repair of a run reads from Elido: the client,
// reusing what the diagnosis read.
func repairElido(client *elido.Client, reads *rawReads) repair.Elido {
	if reads == nil {
		return client
	}
	return reusingElido{Client: client, reads: reads}
}
