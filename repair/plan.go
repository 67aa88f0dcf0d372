package repair

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Elido is what a repair reads from Elido's API (*elido.Client).
type Elido interface {
	HourlyTimeseries(ctx context.Context, day reconcile.Date, loc *time.Location, linkID string) ([]elido.HourCount, error)
	ClicksRecentPaged(ctx context.Context, from, to time.Time, pageSize int) ([]elido.Click, error)
	LinkBreakdownPages(ctx context.Context, from, to reconcile.Date, loc *time.Location, fn func([]elido.LinkCount) error) error
	CountryBreakdown(ctx context.Context, from, to reconcile.Date, loc *time.Location) ([]elido.CountryCount, error)
}

// The page sizes an hour's clicks are read with, once each: their page
// boundaries fall in different places (997 is prime), so a click lost or
// repeated where a page ends shows as two reads that disagree. PageSize
// is the first read's, which a run's diagnosis makes too and a repair
// then reuses.
const (
	PageSize      = 1000
	pageSizeAgain = 997
)

// Store is what a repair reads from the click store (*store.Store), read-only.
type Store interface {
	HourlyCounts(ctx context.Context, q store.Query, day reconcile.Date, loc *time.Location) ([]store.HourCount, error)
	Clicks(ctx context.Context, q store.Query, from, to time.Time) ([]store.Click, error)
	EachCount(ctx context.Context, q store.Query, day reconcile.Date, loc *time.Location, fn func(linkID string, clicks int64)) error
	CountryCounts(ctx context.Context, q store.Query, day reconcile.Date, loc *time.Location) (map[string]int64, error)
	// EventColumns says what the clicks table's link_id and country_code
	// can hold, so that a click they cannot is refused in the plan.
	EventColumns(ctx context.Context) (store.Columns, error)
}

// Options say which days a repair looks at.
type Options struct {
	Window reconcile.Window
	Settle time.Duration    // a day is settled this long after it ends
	Now    time.Time        // the clock, for settling
	Query  store.Query      // the events preset
	Days   []reconcile.Date // if not nil, only these days of the window (run --repair: the days it found missing)
	// Wall is the zone a ts holding wall-clock times is read in
	// (store.Store.WallZone): its clicks are compared by wall-clock time
	// (PlanWallHour). nil for a column of instants.
	Wall *time.Location
}

// DayPlan is a repair's plan for one day.
type DayPlan struct {
	Day   reconcile.Date
	API   int64 // Elido's count for the day (the sum of its hours)
	Store int64 // the store's, when planned
	// Skipped is why the day is not repaired at all ("" when it is
	// planned): not settled, not missing.
	Skipped string
	Hours   []HourPlan // the hours that differ
	// Wall is Options.Wall: the zone of a ts holding wall-clock times,
	// in which repair.sql writes and re-counts; nil for instants.
	Wall *time.Location
}

// Add returns the clicks the day's repair puts back, oldest first.
func (d DayPlan) Add() []Click {
	var out []Click
	for _, h := range d.Hours {
		if h.Repairable() {
			out = append(out, h.Add...)
		}
	}
	return out
}

// Plan computes the repair of every day of o.Window: a settled day the
// store has fewer clicks for than Elido is localised to the hours that
// differ, and those whose counts agree over store rows that repeat one
// another exactly, each planned with PlanHour; on a day where one of them
// shows a row Elido does not count, or where the day's per-link or
// per-country counts differ otherwise than those hours' clicks do (a lost
// click beside a row Elido does not count of another link or country, in
// an hour whose counts agree), every other hour holding rows is planned
// too (an hour whose counts agree is kept only when its clicks differ).
// A lost click beside a row Elido does not count of its own hour, link
// and country changes no count, and is not found. It reads and writes
// nothing else; an
// error is a source that could not be read, and no plan is returned then.
func Plan(ctx context.Context, api Elido, st Store, o Options) ([]DayPlan, error) {
	loc := o.Window.Loc
	days := o.Days
	if days == nil {
		days = o.Window.Days()
	}
	cols, err := st.EventColumns(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the repair: %w", err)
	}
	var plans []DayPlan
	for _, day := range days {
		p, err := planDay(ctx, api, st, o, cols, day, loc)
		if err != nil {
			return nil, fmt.Errorf("plan the repair of %s: %w", day, err)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func planDay(ctx context.Context, api Elido, st Store, o Options, cols store.Columns, day reconcile.Date, loc *time.Location) (DayPlan, error) {
	p := DayPlan{Day: day, Wall: o.Wall}
	if _, end := day.Bounds(loc); o.Now.Before(end.Add(o.Settle)) {
		p.Skipped = "not settled yet: Elido may still be receiving its clicks"
		return p, nil
	}
	apiHours, err := api.HourlyTimeseries(ctx, day, loc, "")
	if err != nil {
		return p, err
	}
	localHours, err := st.HourlyCounts(ctx, o.Query, day, loc)
	if err != nil {
		return p, err
	}
	if len(apiHours) != len(localHours) {
		return p, fmt.Errorf("Elido has %d hours, the store %d", len(apiHours), len(localHours))
	}
	for i := range apiHours {
		p.API += apiHours[i].Clicks
		p.Store += localHours[i].Clicks
	}
	if p.Store >= p.API {
		p.Skipped = "not missing: the store has every click Elido counts"
		if p.Store > p.API {
			p.Skipped = fmt.Sprintf("not missing: the store has %s more than Elido (surplus is never deleted)", words.Plural(int(p.Store-p.API), "click", "clicks"))
		}
		return p, nil
	}
	_, dayEnd := day.Bounds(loc)
	for i := range apiHours {
		if !apiHours[i].Start.Equal(localHours[i].Start) {
			return p, fmt.Errorf("hour %d starts at %s for Elido, %s for the store", i, apiHours[i].Start.UTC().Format(time.RFC3339), localHours[i].Start.UTC().Format(time.RFC3339))
		}
	}
	us := units(apiHours, localHours, dayEnd, o.Wall)
	var agree []Hour // hours whose counts agree, not read
	foreign := false // the store holds a row of the day Elido does not count
	var read []HourPlan
	plan := func(u Hour, rows []store.Click) error {
		hp, err := planHour(ctx, api, st, o, u, rows)
		if err != nil {
			return err
		}
		read = append(read, hp)
		foreign = foreign || len(hp.Surplus) > 0
		if u.API == u.Store && len(hp.Add)+len(hp.Surplus) == 0 {
			return nil // its clicks agree too
		}
		p.Hours = append(p.Hours, hp.holdable(cols))
		return nil
	}
	for _, u := range us {
		var rows []store.Click // read already: the hour is not read again
		if u.API == u.Store {
			var hidden bool
			var err error
			if rows, hidden, err = repeatsRows(ctx, st, o, u); err != nil {
				return p, err
			}
			if !hidden {
				agree = append(agree, u)
				continue
			}
		}
		if err := plan(u, rows); err != nil {
			return p, err
		}
	}
	// A row Elido does not count (a duplicate, a click Elido revised
	// away, a row of another source) can cancel a lost click in its
	// hour's count: on a day that holds one, every hour is read (its
	// rows again: an hour's rows at a time are kept, not the day's). One
	// in an hour whose counts agree, beside the lost click, shows only in
	// the day's per-link or per-country counts, when it is of another
	// link or country.
	if !foreign {
		var err error
		if foreign, err = hiddenInCounts(ctx, api, st, o, day, loc, read); err != nil {
			return p, err
		}
	}
	if foreign {
		for _, u := range agree {
			if u.Store == 0 {
				continue // nothing to cancel a lost click: its count shows it
			}
			if err := plan(u, nil); err != nil {
				return p, err
			}
		}
		slices.SortFunc(p.Hours, func(a, b HourPlan) int { return a.From.Compare(b.From) })
	}
	return p, nil
}

// hiddenInCounts says whether the day's per-link or per-country counts
// differ otherwise than the clicks of the hours read say they do (read:
// each hour's clicks to put back and rows Elido does not count), a
// difference no hour's count shows. It says so too when a breakdown
// cannot be read: nothing then rules one out. A day with an hour refused
// is not looked at further: it stays short of Elido whatever else is
// read (an hour beyond clicks/recent's reach refuses its neighbours too),
// and the refusal says why.
func hiddenInCounts(ctx context.Context, api Elido, st Store, o Options, day reconcile.Date, loc *time.Location, read []HourPlan) (bool, error) {
	links, countries := map[string]int64{}, map[string]int64{}
	for _, hp := range read {
		if hp.Refused != "" {
			return false, nil
		}
		for _, c := range hp.Add {
			links[c.LinkID]--
			countries[c.CountryCode]--
		}
		for _, c := range hp.Surplus {
			links[c.LinkID]++
			countries[c.CountryCode]++
		}
	}
	// Each map holds the store's count less Elido's, per key, as the hours
	// read explain it; adding Elido's day and taking the store's away
	// leaves 0 for every key the hours explain. The links are compared as
	// the drill-down compares them (reconcile.LinkTally: the store's kept
	// compactly, only those that differ handed back), a workspace having
	// as many as 100k.
	var tally reconcile.LinkTally
	err := st.EachCount(ctx, o.Query, day, loc, tally.AddLocal)
	if err == nil {
		err = api.LinkBreakdownPages(ctx, day, day, loc, func(page []elido.LinkCount) error { return elido.TallyPage(&tally, page) })
	}
	if err == nil {
		apiLinks, localLinks := tally.Differing()
		for id, n := range apiLinks {
			links[id] += n
		}
		for id, n := range localLinks {
			links[id] -= n
		}
		var apiCountries []elido.CountryCount
		if apiCountries, err = api.CountryBreakdown(ctx, day, day, loc); err == nil {
			for _, c := range apiCountries {
				countries[c.CountryCode] += c.Clicks
			}
			var local map[string]int64
			local, err = st.CountryCounts(ctx, o.Query, day, loc)
			for c, n := range local {
				countries[c] -= n
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return true, nil // not known: every hour is read
	}
	for _, m := range []map[string]int64{links, countries} {
		for _, n := range m {
			if n != 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// repeatsRows says whether the store's rows of h, an hour whose counts
// agree, repeat one another exactly (the same instant, link and country):
// a click lost beside a duplicate in the same hour leaves the hour's count
// as Elido's, and only the clicks themselves show it. Such an hour is
// planned as one that differs; an hour without a repeated row cannot hide
// a lost click behind its count. It returns the rows it read (nil when
// it read none).
func repeatsRows(ctx context.Context, st Store, o Options, h Hour) (rows []store.Click, hidden bool, err error) {
	if h.Store < 2 {
		return nil, false, nil
	}
	if rows, err = st.Clicks(ctx, o.Query, h.From, h.To); err != nil {
		return nil, false, err
	}
	seen := make(map[key]bool, len(rows))
	for _, c := range rows {
		k := fromStore(c).normal().key() // the comparison's key: the same row twice is one key
		if seen[k] {
			return rows, true, nil
		}
		seen[k] = true
	}
	return rows, false, nil
}

// units are the day's hours as a repair compares them: each of Elido's
// hours, except that, in a wall-clock column (wall not nil), hours whose
// clicks share wall-clock times are one: the two hours an autumn DST day
// repeats, whose clicks the column cannot tell apart, are compared
// together, wall time by wall time.
func units(apiHours, localHours []elido.HourCount, dayEnd time.Time, wall *time.Location) []Hour {
	var out []Hour
	for i, ah := range apiHours {
		to := ah.Start.Add(time.Hour)
		if to.After(dayEnd) {
			to = dayEnd // the short last hour of Australia/Lord_Howe's DST day
		}
		h := Hour{From: ah.Start.UTC(), To: to.UTC(), API: ah.Clicks, Store: localHours[i].Clicks}
		if n := len(out); n > 0 && wall != nil && store.SharesWall(out[n-1].To, wall) {
			out[n-1].To, out[n-1].API, out[n-1].Store = h.To, out[n-1].API+h.API, out[n-1].Store+h.Store
			continue
		}
		out = append(out, h)
	}
	return out
}

// planHour plans h from Elido's clicks, read twice, and the store's rows:
// local, when the caller read them already (after the hour's counts, as
// planHour would), else read here.
func planHour(ctx context.Context, api Elido, st Store, o Options, h Hour, local []store.Click) (HourPlan, error) {
	var reads [2][]Click
	for i, size := range []int{PageSize, pageSizeAgain} {
		got, err := api.ClicksRecentPaged(ctx, h.From, h.To, size)
		if err != nil {
			return HourPlan{}, err
		}
		reads[i] = make([]Click, len(got))
		for j, c := range got {
			reads[i][j] = Click(c)
		}
	}
	lc := local
	if lc == nil {
		var err error
		if lc, err = st.Clicks(ctx, o.Query, h.From, h.To); err != nil {
			return HourPlan{}, err
		}
	}
	if o.Wall != nil {
		return PlanWallHour(h, reads[0], reads[1], lc, o.Wall), nil
	}
	l := make([]Click, len(lc))
	for i, c := range lc {
		l[i] = fromStore(c)
	}
	return PlanHour(h, reads[0], reads[1], l), nil
}
