package job

import (
	"context"
	"errors"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// The drill-down planner. A backfill after a long outage has many
// consecutive days that differ, and usually the same links lost clicks on
// each of them. Reading each day's link breakdown costs P pages a day
// (P = links / 1000), G·P for a run of G days. One breakdown over the whole
// run (P pages) finds the links whose sum over the run differs, and one
// daily series per such link (L requests) says on which days: P + L
// instead of G·P. The attribution is proved by sums, never guessed: on
// each day the per-link deltas it finds must add up to the day's own
// delta, or the day is drilled by its own breakdown.

// pageLinks is how many links a breakdown page holds (the most
// breakdown/link serves).
const pageLinks = 1000

// pagesFor is the estimated number of breakdown pages for n links.
func pagesFor(n int) int { return max(1, (n+pageLinks-1)/pageLinks) }

// runsOf groups the days that differ, worst first, into runs of
// consecutive dates: each run in date order, the runs in the order of
// their worst day.
func runsOf(worst []reconcile.Date) [][]reconcile.Date {
	sorted := slices.Clone(worst)
	slices.SortFunc(sorted, func(a, b reconcile.Date) int { return a.Compare(b) })
	runOf := map[reconcile.Date]int{}
	var runs [][]reconcile.Date
	for i, d := range sorted {
		if i == 0 || sorted[i-1].AddDays(1) != d {
			runs = append(runs, nil)
		}
		runOf[d] = len(runs) - 1
		runs[len(runs)-1] = append(runs[len(runs)-1], d)
	}
	var out [][]reconcile.Date
	taken := map[int]bool{}
	for _, d := range worst {
		if r := runOf[d]; !taken[r] {
			taken[r] = true
			out = append(out, runs[r])
		}
	}
	return out
}

// runPlan is how a piece of a run is to be drilled, and what it is
// expected to cost in link requests (countries and hours, a request each
// a day, are the same either way).
type runPlan struct {
	perDay int // the days' own breakdowns: the sum of their pages
	run    int // the run's breakdown, in pages
	// across says to read the run's breakdown and the series of the
	// links that differ; false: each day its own breakdown.
	across bool
}

// plan chooses how to drill rc with room requests left: across the run
// when its breakdown and one series cost less than the days' own
// breakdowns, and fit in room with the days' countries and hours.
// acrossRun switches to the days' own breakdowns as soon as the links
// that differ make them cheaper, or more than room.
func (rc *runCounts) plan(room int) runPlan {
	p := runPlan{run: pagesFor(len(rc.ids))}
	usable := len(rc.days) >= 2
	for k := range rc.days {
		p.perDay += pagesFor(rc.links[k])
		usable = usable && rc.err[k] == nil && rc.sum[k] != nil
	}
	p.across = usable && p.run+1 < p.perDay && p.run+1+2*len(rc.days) <= room
	return p
}

// switchDayByDay reports whether the days' own breakdowns are the better
// way once pagesLeft pages of the run's breakdown are still to be read
// and series links differ: they cost less, or the rest across the run
// does not fit in room with the days' countries and hours.
func (p runPlan) switchDayByDay(pagesLeft, series, days, room int) bool {
	rest := max(pagesLeft, 0) + series
	return rest >= p.perDay || rest+2*days > room
}

// errSwitch stops a run's breakdown once the links that differ make the
// days' own breakdowns the cheaper way.
var errSwitch = errors.New("the links that differ over the run make per-day breakdowns cheaper")

// acrossOut is what acrossRun found: the days it proved by sums, the
// links it placed on every day (a series read, or none on Elido's side),
// and the store's sum of each link over the run (by its position in rc),
// which is Elido's too for a link not placed.
type acrossOut struct {
	proved map[reconcile.Date]bool
	placed map[string]bool
	sums   []int64
}

// acrossRun drills rc's links across the run (plan.across): its
// breakdown, a series per link whose sum over the run differs, and the
// proof by sums on each day. It fills in det of the days it proved and
// returns them; the others are left to their own breakdowns. noBreakdown
// says that Elido has no /breakdown/link.
func (dr driller) acrossRun(ctx context.Context, b *budget, rc *runCounts, p runPlan, api map[reconcile.Date]*int64,
	drilled map[reconcile.Date]*reconcile.DayDetail) (out acrossOut, noBreakdown bool) {
	from, to := rc.days[0], rc.days[len(rc.days)-1]
	sums, ok := rc.runSums()
	if !ok {
		return acrossOut{}, false // no real run has that many clicks: per day
	}
	bd, err := dr.readRunBreakdown(ctx, b, rc, p, sums)
	b.check(err)
	switch {
	case errors.Is(err, errSwitch):
		dr.log.Info("drill-down switches to per-day breakdowns", "from", from.String(), "to", to.String(),
			"pages_read", bd.pages, "links_differing", len(bd.runAPI), "per_day_pages", p.perDay)
		return acrossOut{}, false
	case errors.Is(err, elido.ErrNotFound):
		dr.log.Info("elido has no /breakdown/link; checking links one by one", "err", err)
		return acrossOut{}, true
	case err != nil:
		dr.log.Warn("the run's link breakdown could not be read; drilling its days one by one", "from", from.String(), "to", to.String(), "err", err)
		return acrossOut{}, false
	}
	if p.switchDayByDay(0, len(bd.runAPI), len(rc.days), b.room()) {
		dr.log.Info("drill-down switches to per-day breakdowns", "from", from.String(), "to", to.String(),
			"links_differing", len(bd.runAPI), "per_day_pages", p.perDay, "room", b.room())
		return acrossOut{}, false
	}
	series, ok := dr.series(ctx, b, from, to, bd.runAPI)
	if !ok {
		return acrossOut{}, false
	}
	storeOnly := bd.storeOnly(sums)
	out = acrossOut{placed: bd.placed(rc, storeOnly), sums: sums}
	proved := map[reconcile.Date]bool{}
	for k, d := range rc.days {
		apiLinks, localLinks, attributed := rc.differing(k, bd, storeOnly, series)
		// Proof by sums: with every other link matching on every day,
		// Elido's rows of the day add up to the store's less what the
		// links that differ explain; that must be Elido's daily count.
		if api[d] == nil || rc.sum[k] == nil || *rc.sum[k]-attributed != *api[d] {
			continue
		}
		det := drilled[d]
		det.APILinks, det.LocalLinks, det.LinksComplete = apiLinks, localLinks, true
		det.APILinkSum, det.LocalLinkSum = ptrInt64(*api[d]), ptrInt64(*rc.sum[k])
		proved[d] = true
	}
	dr.log.Info("drill-down across days", "from", from.String(), "to", to.String(), "pages", bd.pages,
		"series", len(bd.runAPI), "days_proved", len(proved), "days", len(rc.days))
	out.proved = proved
	return out, false
}

// runBreakdown is what the run's link breakdown says against the store's
// sums over the run. seen and none are by a link's position in rc: Elido
// named the link; Elido named it with no click over the run.
type runBreakdown struct {
	seen, none []bool
	differ     []uint32         // the store's links whose run sum differs and Elido counts
	runAPI     map[string]int64 // Elido's run count of the links to read series of
	only       map[string]bool  // Elido's links the store does not have
	pages      int              // the breakdown's pages read
}

// readRunBreakdown reads the run's link breakdown and compares each link's
// count with the store's sum over the run (sums). It stops with errSwitch
// as soon as the links that differ make the days' own breakdowns the
// better way (plan p); the pages read so far are counted either way.
func (dr driller) readRunBreakdown(ctx context.Context, b *budget, rc *runCounts, p runPlan, sums []int64) (runBreakdown, error) {
	bd := runBreakdown{seen: make([]bool, len(rc.ids)), none: make([]bool, len(rc.ids)),
		runAPI: map[string]int64{}, only: map[string]bool{}}
	err := dr.client.LinkBreakdownPages(ctx, rc.days[0], rc.days[len(rc.days)-1], dr.window.Loc, func(page []elido.LinkCount) error {
		bd.pages++
		for _, l := range page {
			i, ok := rc.index[l.LinkID]
			switch {
			case !ok && bd.only[l.LinkID]:
				return elido.LinkTwiceError(l.LinkID)
			case !ok:
				bd.only[l.LinkID] = true
				if l.Clicks != 0 {
					bd.runAPI[l.LinkID] = l.Clicks
				}
			case bd.seen[i]:
				return elido.LinkTwiceError(l.LinkID)
			default:
				bd.seen[i], bd.none[i] = true, l.Clicks == 0
				if l.Clicks != sums[i] && l.Clicks != 0 {
					bd.differ = append(bd.differ, i)
					bd.runAPI[l.LinkID] = l.Clicks
				}
			}
		}
		if p.switchDayByDay(p.run-bd.pages, len(bd.runAPI), len(rc.days), b.room()) {
			return errSwitch
		}
		return nil
	})
	return bd, err
}

// storeOnly returns the store's links, by position, that Elido does not
// count over the run though the store does (sums): they have 0 clicks on
// each of its days.
func (bd runBreakdown) storeOnly(sums []int64) []uint32 {
	var storeOnly []uint32
	for i := range bd.seen {
		if (!bd.seen[i] || bd.none[i]) && sums[i] != 0 {
			storeOnly = append(storeOnly, uint32(i))
		}
	}
	return storeOnly
}

// placed returns the links placed on every day of the run: those whose
// series is read, the store's links Elido does not count (storeOnly) and
// Elido's links the store does not have.
func (bd runBreakdown) placed(rc *runCounts, storeOnly []uint32) map[string]bool {
	placed := map[string]bool{}
	for id := range bd.runAPI {
		placed[id] = true
	}
	for _, i := range storeOnly {
		placed[rc.ids[i]] = true
	}
	for id := range bd.only {
		placed[id] = true
	}
	return placed
}

// differing returns the links placed on day k whose counts differ there,
// Elido's and the store's (Elido's from its series), and attributed, the
// store's less Elido's clicks of those links on the day.
func (rc *runCounts) differing(k int, bd runBreakdown, storeOnly []uint32, series map[string][]int64) (
	apiLinks, localLinks map[string]int64, attributed int64) {
	apiLinks, localLinks = map[string]int64{}, map[string]int64{}
	note := func(id string, a, l int64) {
		if a == l {
			return
		}
		if a != 0 {
			apiLinks[id] = a
		}
		if l != 0 {
			localLinks[id] = l
		}
		attributed += l - a
	}
	for _, i := range bd.differ {
		note(rc.ids[i], series[rc.ids[i]][k], rc.cell(k, i))
	}
	for _, i := range storeOnly {
		note(rc.ids[i], 0, rc.cell(k, i))
	}
	for id := range bd.only {
		if s, ok := series[id]; ok { // not: no click over the run
			note(id, s[k], 0)
		}
	}
	return apiLinks, localLinks, attributed
}

// placeMoved checks the days acrossRun proved against what the days'
// own breakdowns found. A link that differs on a day drilled by its own
// breakdown but was placed by no series had the same sum over the run on
// both sides: its clicks moved between days, and the sums of a proved day
// cannot see it when its moves there cancel with another link's. Its
// series is read and it is put on each proved day where it differs. A
// proved day on which those links do not cancel is proved no more (some
// other link that moved must cancel them): it is drilled by its own
// breakdown, within the budget, and the links that finds are looked at in
// turn. What the sums still cannot see, links that moved and cancel on
// every day where they differ, is said by the days' LinksBySums.
func (dr driller) placeMoved(ctx context.Context, b *budget, rc *runCounts, a acrossOut, drilled map[reconcile.Date]*reconcile.DayDetail,
	left map[reconcile.Date]*dayLeft) {
	var idx map[string]uint32
	looked := map[reconcile.Date]bool{}
	for {
		moved := a.moved(rc.days, drilled, looked)
		if len(moved) == 0 {
			return
		}
		if idx == nil {
			idx = make(map[string]uint32, len(rc.ids))
			for i, id := range rc.ids {
				idx[id] = uint32(i)
			}
		}
		want := map[string]int64{}
		for _, id := range moved {
			want[id] = -1 // not the store's: Elido's day and run counts disagree, so no sum is checked
			if i, ok := idx[id]; ok {
				want[id] = a.sums[i]
			}
		}
		series, ok := dr.series(ctx, b, rc.days[0], rc.days[len(rc.days)-1], want)
		dr.log.Info("drill-down: links whose clicks moved between days", "from", rc.days[0].String(), "to", rc.days[len(rc.days)-1].String(),
			"links", len(moved), "series_read", ok)
		for k, d := range rc.days {
			if !a.proved[d] {
				continue
			}
			det := drilled[d]
			if !ok {
				a.unprove(d, det, left[d], "per-link counts not read: links whose clicks moved between days were found, and their series could not be read to place them on this day")
				continue
			}
			if rc.placeOn(k, det, moved, idx, series) == 0 {
				continue
			}
			// Other links that moved cancel these here: only the day's
			// own breakdown finds them.
			dr.redrill(ctx, b, rc, k, a, det, left[d])
		}
	}
}

// moved returns the links, not yet placed, that differ on a day drilled
// by its own breakdown and not yet looked at, and marks them placed and
// those days looked at.
func (a acrossOut) moved(days []reconcile.Date, drilled map[reconcile.Date]*reconcile.DayDetail, looked map[reconcile.Date]bool) []string {
	var moved []string
	for _, d := range days {
		if a.proved[d] || looked[d] {
			continue
		}
		looked[d] = true
		det := drilled[d]
		if !det.LinksComplete {
			continue
		}
		for _, m := range []map[string]int64{det.APILinks, det.LocalLinks} {
			for id := range m {
				if !a.placed[id] {
					a.placed[id] = true
					moved = append(moved, id)
				}
			}
		}
	}
	return moved
}

// placeOn puts each of the moved links on proved day k's det where its
// counts differ: Elido's from its series, the store's by its position in
// idx. It returns shift, the store's less Elido's clicks of those links
// on the day: where it is not 0, other links that moved cancel them there.
func (rc *runCounts) placeOn(k int, det *reconcile.DayDetail, moved []string, idx map[string]uint32, series map[string][]int64) (shift int64) {
	for _, id := range moved {
		av, lv := series[id][k], int64(0)
		if i, ok := idx[id]; ok {
			lv = rc.cell(k, i)
		}
		if av == lv {
			continue
		}
		if det.APILinks == nil {
			det.APILinks = map[string]int64{}
		}
		if det.LocalLinks == nil {
			det.LocalLinks = map[string]int64{}
		}
		if av != 0 {
			det.APILinks[id] = av
		}
		if lv != 0 {
			det.LocalLinks[id] = lv
		}
		shift += lv - av
	}
	return shift
}

// redrill drills proved day k again by its own breakdown, proved no
// more, when its pages fit in the budget; when they do not, the day is
// left with a note and its pages are counted among those left.
func (dr driller) redrill(ctx context.Context, b *budget, rc *runCounts, k int, a acrossOut, det *reconcile.DayDetail, left *dayLeft) {
	d := rc.days[k]
	pages := pagesFor(rc.links[k])
	h, fits := b.reserve(pages)
	if !fits {
		h.release()
		a.unprove(d, det, left, dr.roomNote(b, pages))
		left.rest += pages
		return
	}
	a.unprove(d, det, left, "")
	dr.links(elido.WithBudget(ctx, h.take, h.giveBack), b, nil, d, rc.take(k), det)
	h.release()
	if det.LinksComplete {
		left.links = false
	}
}

// unprove takes day d, with its details det, from the days proved by
// sums: its per-link counts are dropped, with note (when not "") saying
// why, and its links are left to be drilled.
func (a acrossOut) unprove(d reconcile.Date, det *reconcile.DayDetail, left *dayLeft, note string) {
	delete(a.proved, d)
	det.APILinks, det.LocalLinks, det.LinksComplete, det.APILinkSum = nil, nil, false, nil
	if note != "" {
		det.Notes = append(det.Notes, note)
	}
	left.links = true
}

func ptrInt64(n int64) *int64 { return &n }

// series reads each link's daily series over from..to, fallbackConcurrency
// at a time under the rate limiter, and checks that it adds up to the
// link's count in the run's breakdown (runAPI). It returns each link's
// count per day, in date order; false when a series could not be read or
// does not add up (Elido's numbers are settling): the days are then
// drilled one by one.
func (dr driller) series(ctx context.Context, b *budget, from, to reconcile.Date, runAPI map[string]int64) (map[string][]int64, bool) {
	out := make(map[string][]int64, len(runAPI))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fallbackConcurrency)
	for id, want := range runAPI {
		g.Go(func() error {
			days, err := dr.client.LinkTimeseries(gctx, from, to, dr.window.Loc, id)
			b.check(err)
			if err != nil {
				dr.log.Warn("per-link timeseries failed; drilling the run's days one by one", "link_id", id, "err", err)
				return err
			}
			counts := make([]int64, len(days))
			var sum int64
			for k, dc := range days {
				counts[k] = dc.Clicks
				sum += dc.Clicks // checkDays made sure it fits
			}
			if want >= 0 && sum != want {
				dr.log.Warn("a link's series does not add up to its count in the run's breakdown; drilling the run's days one by one",
					"link_id", id, "series", sum, "breakdown", want)
				return errors.New("series and breakdown disagree")
			}
			mu.Lock()
			out[id] = counts
			mu.Unlock()
			return nil
		})
	}
	if g.Wait() != nil {
		return nil, false
	}
	return out, true
}
