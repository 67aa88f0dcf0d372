package job

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// drillDown drills into the settled days that differ, when the drill-down
// is on, and explains the result with what it read. The drill-down is the
// optional part of a run: it stops early enough (drillDeadline) to leave
// the report, Slack and the history time to finish, so a slow drill-down
// never costs the night's alert.
//
// The error is one no retry can mend, met during the drill-down: Elido
// refusing the key (401, 403) or redirecting to another origin.
func drillDown(ctx context.Context, s drillStage, res reconcile.Result) (reconcile.Result, report.Drilldown, error) {
	if !s.on || ctx.Err() != nil {
		// The findings across days need no drill-down.
		return reconcile.Explain(res, nil, s.window.Loc), report.Drilldown{Mode: report.DrillOff}, nil
	}
	var dctx context.Context
	var cancel context.CancelFunc
	if s.limit != nil {
		dctx, cancel = s.limit(ctx)
	} else {
		dctx, cancel = context.WithDeadline(ctx, drillDeadline(ctx, s.timeout))
	}
	details, storeErrs, drill, err := s.drill(dctx, res)
	s.recount(dctx, res, details)
	s.merged(dctx, details, storeErrs)
	stopped := dctx.Err() != nil && ctx.Err() == nil
	cancel()
	for day, err := range storeErrs {
		// Without the store's links, every link Elido counted would look
		// missing: the day's links are left out instead.
		if det, ok := details[day]; ok {
			det.APILinks, det.LinksComplete, det.LocalLinkSum = nil, false, nil
			det.Notes = append(det.Notes, "the store's per-link counts could not be read: "+err.Error())
			details[day] = det
		}
	}
	res = reconcile.Explain(res, details, s.window.Loc)
	if drill.UndrilledDays > 0 {
		res.Findings = append(res.Findings, reconcile.Finding{Kind: reconcile.FindingDrilldownGap, Message: fmt.Sprintf(
			"%d days that differ were not wholly drilled for want of requests (RECON_DRILLDOWN_MAX_REQUESTS=%d) or time (RECON_TIMEOUT at ELIDO_RATE_LIMIT=%g a minute): the rest needs about %d more requests, %s at that rate; %s links were left unchecked",
			drill.UndrilledDays, s.max, s.client.RatePerMinute(), drill.RestRequests,
			(time.Duration(drill.RestSeconds) * time.Second).String(), drill.Unchecked())})
	}
	if n := len(drill.LinksBySums); n > 0 {
		res.Findings = append(res.Findings, reconcile.Finding{Kind: reconcile.FindingLinksBySums, Message: fmt.Sprintf(
			"the link rows of %s were proved by sums over their run of days (one breakdown over the run, a series per link whose sum over it differs, and the links the other days' own breakdowns found moving), not read day by day: a link whose clicks moved between days and cancel with another link's on every day where they differ is not among their rows, and unchecked_links does not count it",
			strings.Join(drill.LinksBySums, ", "))})
	}
	if stopped {
		s.log.Warn("drill-down stopped at its time limit")
		res.Findings = append(res.Findings, reconcile.Finding{Kind: reconcile.FindingDrilldownGap,
			Message: "the drill-down stopped at its time limit (RECON_TIMEOUT less a fifth kept for the report and Slack): what it had not read yet is missing from the links, countries and hours above"})
	}
	return res, drill, err
}

// drillStage is what drillDown needs: whether it is on (--drilldown
// auto), when it must stop, and the driller that reads the days.
type drillStage struct {
	on bool
	// limit returns the context the drill-down runs in (Deps.DrillLimit);
	// nil: until drillDeadline of the run's deadline and timeout
	// (RECON_TIMEOUT).
	limit   func(ctx context.Context) (context.Context, context.CancelFunc)
	timeout time.Duration
	driller
}

// drillDeadline is when the drill-down must stop: the run's deadline less
// a fifth of RECON_TIMEOUT (at most 5 minutes) kept for what follows it.
func drillDeadline(ctx context.Context, timeout time.Duration) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	return deadline.Add(-min(timeout/5, 5*time.Minute))
}

// driller reads the details of the days that differ from both sides.
type driller struct {
	client    *elido.Client
	store     *store.Store
	query     store.Query
	window    reconcile.Window
	now       time.Time
	retention int // ELIDO_RETENTION_DAYS; 0: no limit
	max       int // RECON_DRILLDOWN_MAX_REQUESTS
	log       *slog.Logger
	progress  Progress
	// wall is the zone of a store's wall-clock ts (store.Naive.WallZone):
	// its hours that share wall times are compared merged. nil for
	// instants.
	wall *time.Location
	// dayByDay drills each day by its own breakdown, never across a run:
	// the per-day drill-down the planner is measured and tested against.
	dayByDay bool
}

// drill reads, for each settled day that differs, Elido's per-link,
// per-country and hourly counts and the store's, within the request
// budget and the time left. The budget goes to the worst runs of
// consecutive days first, and within a run per-day breakdowns to the
// worst days first. storeErrs say why a day's per-link counts could not
// be read from the store.
//
// Each run (runsOf) is planned before its first request (runCounts.plan):
// across the run (one breakdown over it and a series per link whose sum
// differs, proved by sums on each day: acrossRun) or day by day, whichever
// costs fewer requests. A day's own breakdown is started only when its
// pages and its countries and hours fit in what is left (budget.room), so
// that no request is spent on a breakdown that cannot finish. A day keeps
// only the links that differ (reconcile.LinkTally); the store's counts of
// a run are held while it is drilled, 2 bytes a link and day. The fallback
// needs the store's whole list, and keeps it.
func (dr driller) drill(ctx context.Context, res reconcile.Result) (details map[reconcile.Date]reconcile.DayDetail,
	storeErrs map[reconcile.Date]error, summary report.Drilldown, err error) {
	days := worstFirst(res.Gaps())
	if len(days) == 0 {
		return nil, nil, report.Drilldown{Mode: report.DrillNone}, nil
	}
	started := time.Now()
	s := dr.startDrill(ctx, res, days)
	ctx = elido.WithBudget(ctx, s.b.take, s.b.giveBack)
	dr.drillRuns(ctx, s)
	dr.progress.Step("drill-down", len(days), len(days))
	dr.uncheckedLinks(ctx, s)
	slices.Sort(s.summary.LinksBySums)
	dr.rest(s.left, s.b.rate, &s.summary)
	dr.neighbourHours(ctx, s.b, res, s.drilled)
	details = map[reconcile.Date]reconcile.DayDetail{}
	for d, det := range s.drilled {
		details[d] = *det
	}
	s.summary.Requests = s.b.used()
	dr.log.Info("drill-down done", "mode", s.summary.Mode, "days", len(days), "requests", s.summary.Requests,
		"unchecked_links", s.summary.Unchecked(), "undrilled_days", s.summary.UndrilledDays, "rest_requests", s.summary.RestRequests,
		"duration_ms", time.Since(started).Milliseconds())
	return details, s.storeErrs, s.summary, s.b.err()
}

// drilling is what the steps of one drill-down share: the days that
// differ, worst first, the budget their requests are counted against,
// Elido's count of each day, what each day drilled found and left unread,
// and the summary so far. Only the goroutine that runs drill writes it.
type drilling struct {
	days      []reconcile.Date
	b         *budget
	api       map[reconcile.Date]*int64 // Elido's count of each day, nil when not known
	drilled   map[reconcile.Date]*reconcile.DayDetail
	left      map[reconcile.Date]*dayLeft // what each day left unread
	storeErrs map[reconcile.Date]error
	storeTook time.Duration // reading the runs' store counts
	step      int           // days started, for the progress
	summary   report.Drilldown
}

// startDrill sets up the drill-down of days: a budget of
// RECON_DRILLDOWN_MAX_REQUESTS that also counts the requests that fit
// before ctx's deadline at ELIDO_RATE_LIMIT, and an empty detail naming
// the store's queries for each day.
func (dr driller) startDrill(ctx context.Context, res reconcile.Result, days []reconcile.Date) *drilling {
	b := newBudget(dr.max)
	b.rate = dr.client.RatePerMinute()
	if deadline, ok := ctx.Deadline(); ok {
		b.deadline = deadline
	}
	s := &drilling{
		days:      days,
		b:         b,
		api:       map[reconcile.Date]*int64{},
		drilled:   map[reconcile.Date]*reconcile.DayDetail{},
		left:      map[reconcile.Date]*dayLeft{},
		storeErrs: map[reconcile.Date]error{},
		summary:   report.Drilldown{Mode: report.DrillBreakdown},
	}
	for _, d := range res.Days {
		s.api[d.Date] = d.API
	}
	for _, d := range days {
		s.drilled[d] = &reconcile.DayDetail{TotalQuery: dr.query.TotalSource(), LinkQuery: dr.query.LinkSource()}
	}
	return s
}

// drillRuns drills the runs of consecutive days that differ (runsOf),
// worst first. The store's counts of the next run are read while this
// run's requests are sent (readAhead).
func (dr driller) drillRuns(ctx context.Context, s *drilling) {
	runs := runsOf(s.days)
	dr.log.Info("drill-down plan", "days", len(s.days), "runs", len(runs), "max_requests", dr.max,
		"rate_per_minute", s.b.rate, "requests_that_fit", s.b.room())
	next := dr.readAhead(ctx, s, runs[0])
	for i, run := range runs {
		r := <-next
		if i+1 < len(runs) {
			next = dr.readAhead(ctx, s, runs[i+1])
		}
		pieces := r.pieces
		maps.Copy(s.storeErrs, r.errs)
		s.storeTook += r.took
		if pieces == nil {
			pieces = []*runCounts{{days: run}} // not read: nothing is known of its links
		}
		for _, rc := range pieces {
			dr.drillPiece(ctx, s, rc)
		}
	}
}

// runRead is the store's counts of a run, read ahead (readAhead): the
// run's pieces (readRun), nil when not read, why days could not be read,
// and how long it took.
type runRead struct {
	pieces []*runCounts
	errs   map[reconcile.Date]error
	took   time.Duration
}

// readAhead reads the store's counts of run in the background. Nothing is
// read once no request is left or Elido is known to have no breakdown:
// the counts would buy nothing.
func (dr driller) readAhead(ctx context.Context, s *drilling, run []reconcile.Date) <-chan runRead {
	ch := make(chan runRead, 1)
	if s.b.room() == 0 || s.summary.Mode != report.DrillBreakdown {
		ch <- runRead{}
		return ch
	}
	go func() {
		started, errs := time.Now(), map[reconcile.Date]error{}
		pieces := dr.readRun(ctx, run, errs)
		ch <- runRead{pieces, errs, time.Since(started)}
	}()
	return ch
}

// drillPiece drills the days of rc, a run or a piece of one: across the
// run when its plan (runCounts.plan) says that costs fewer requests
// (acrossRun), then each day not proved by sums by its own breakdown
// (drillDays), then, in the proved days, the links the others found
// moving (placeMoved).
func (dr driller) drillPiece(ctx context.Context, s *drilling, rc *runCounts) {
	var p runPlan
	var across acrossOut
	if rc.read {
		p = rc.plan(s.b.room())
		dr.log.Info("drill-down run", "from", rc.days[0].String(), "to", rc.days[len(rc.days)-1].String(),
			"days", len(rc.days), "links", len(rc.ids), "across", p.across,
			"per_day_requests", p.perDay+2*len(rc.days), "across_requests_at_least", p.run+1+2*len(rc.days))
	}
	if p.across && !dr.dayByDay && s.summary.Mode == report.DrillBreakdown {
		var noBreakdown bool
		across, noBreakdown = dr.acrossRun(ctx, s.b, rc, p, s.api, s.drilled)
		if noBreakdown {
			s.summary.Mode = report.DrillFallback
		}
	}
	proved := across.proved
	if rc.read {
		rc.forget()
	}
	breakdown := dr.drillDays(ctx, s, rc, proved)
	if !breakdown {
		s.summary.Mode = report.DrillFallback
	}
	if len(proved) > 0 && breakdown {
		// The days' own breakdowns may have found links that
		// moved between days, which the proved days' sums hide.
		dr.placeMoved(ctx, s.b, rc, across, s.drilled, s.left)
	}
	for d := range proved {
		k := rc.pos(d)
		rc.cells[k], rc.wide[k] = nil, nil
		s.drilled[d].LinksBySums = true
		s.summary.LinksBySums = append(s.summary.LinksBySums, d.String())
	}
}

// drillDays drills the days of rc (planDay, drillDay), several at once,
// worst first, each holding the requests it needs; the rate limiter paces
// them all. It reports whether Elido still has a breakdown: false once a
// day found it has none.
func (dr driller) drillDays(ctx context.Context, s *drilling, rc *runCounts, proved map[reconcile.Date]bool) (breakdown bool) {
	var g errgroup.Group
	g.SetLimit(dayConcurrency)
	mode := &drillMode{}
	mode.breakdown.Store(s.summary.Mode == report.DrillBreakdown)
	b := s.b
	for _, d := range worstOf(s.days, rc.days) {
		dr.progress.Step("drill-down", s.step, len(s.days))
		s.step++
		// Set aside in the order of worst, before the day starts.
		det := s.drilled[d]
		day := dr.planDay(b, rc, d, proved[d], mode, det)
		day.api = s.api[d]
		s.left[d] = day.left // this goroutine's alone; read after Wait
		g.Go(func() error {
			dr.drillDay(ctx, b, rc, day, mode, det)
			return nil
		})
	}
	_ = g.Wait() // drillDay notes its failures
	return mode.isBreakdown()
}

// uncheckedLinks counts into s.summary the links the drill-down left
// unchecked: where Elido has no breakdown, those the fallback could not
// check (linksOneByOne, which it runs), else those of the days whose
// links were left unread.
func (dr driller) uncheckedLinks(ctx context.Context, s *drilling) {
	if s.summary.Mode == report.DrillFallback {
		s.summary.UncheckedLinks = dr.linksOneByOne(ctx, s.b, s.days, s.drilled, s.storeErrs)
		return
	}
	dr.log.Info("store links read", "days", len(s.days), "duration_ms", s.storeTook.Milliseconds())
	for _, l := range s.left {
		switch {
		case !l.links:
		case l.linkCount < 0:
			s.summary.UncheckedUnknown = true
		default:
			s.summary.UncheckedLinks += l.linkCount
		}
	}
}

// rest sums what the days left unread into summary: how many days, how
// many requests would read the rest and how long they take at rate.
func (dr driller) rest(left map[reconcile.Date]*dayLeft, rate float64, summary *report.Drilldown) {
	for _, l := range left {
		if l.rest > 0 {
			summary.UndrilledDays++
			summary.RestRequests += l.rest
		}
	}
	if rate > 0 {
		summary.RestSeconds = int(math.Ceil(float64(summary.RestRequests) * 60 / rate))
	}
}

// recount reads again the day total of each drilled day whose store rows
// did not add up to it, so that Explain can tell a day that changed while
// it was read (a click written in between: the rows add up to the new
// total) from two store queries that disagree.
func (dr driller) recount(ctx context.Context, res reconcile.Result, details map[reconcile.Date]reconcile.DayDetail) {
	for _, day := range res.Days {
		det, ok := details[day.Date]
		if !ok || day.Local == nil || det.LocalLinkSum == nil || *det.LocalLinkSum == *day.Local {
			continue
		}
		totals, err := dr.store.Totals(ctx, dr.query, []reconcile.Date{day.Date}, dr.window.Loc)
		if err != nil {
			dr.log.Warn("store day total not read again", "date", day.Date.String(), "err", err)
			continue
		}
		n := totals[day.Date].Clicks
		det.LocalRecount = &n
		details[day.Date] = det
	}
}

// merged takes out of each drilled day's links those the store keeps as
// one counter (store.MergedLinks: its daily key's collation calls them
// equal, as the server says), and keeps them in det.Merged with their
// delta together: every other link keeps its exact row. A day whose
// merged links cannot be asked for is a day whose store links could not
// be read (storeErrs).
func (dr driller) merged(ctx context.Context, details map[reconcile.Date]reconcile.DayDetail, storeErrs map[reconcile.Date]error) {
	for d, det := range details {
		if det.APILinks == nil && det.LocalLinks == nil {
			continue
		}
		ids := slices.Sorted(maps.Keys(det.LocalLinks))
		for id := range det.APILinks {
			if _, ok := det.LocalLinks[id]; !ok {
				ids = append(ids, id)
			}
		}
		m, err := dr.store.MergedLinks(ctx, dr.query, d, ids)
		if err != nil {
			dr.log.Warn("store links merged by its collation not read", "date", d.String(), "err", err)
			storeErrs[d] = err
			continue
		}
		if len(m.Groups) == 0 {
			continue
		}
		api, local := maps.Clone(det.APILinks), maps.Clone(det.LocalLinks)
		for _, g := range m.Groups {
			ml := reconcile.MergedLinks{IDs: g, Known: true}
			for _, id := range g {
				a, checked := api[id]
				ml.Known = ml.Known && (checked || det.LinksComplete)
				ml.Delta += local[id] - a
				delete(api, id)
				delete(local, id)
			}
			ml.Note = m.Note(g, ml.Delta, ml.Known)
			det.Merged = append(det.Merged, ml)
		}
		if det.APILinks != nil {
			det.APILinks = api
		}
		det.LocalLinks = local
		dr.log.Info("store links merged by its collation", "date", d.String(), "groups", len(m.Groups), "column", m.Column)
		details[d] = det
	}
}

// storeRead records how the store's per-link read of day d ended in errs,
// logs a failure, and returns err.
func (dr driller) storeRead(d reconcile.Date, err error, errs map[reconcile.Date]error) error {
	if err != nil {
		dr.log.Warn("store per-link read failed", "date", d.String(), "err", err)
		errs[d] = err
		return err
	}
	delete(errs, d)
	return nil
}

// neighbourHours reads Elido's hours of the days around each pair of
// adjacent opposite gaps whose store has no hourly counts, which is what
// estimating a day-boundary offset from Elido's side alone needs
// (reconcile.Explain). Days that have not ended are left out.
func (dr driller) neighbourHours(ctx context.Context, b *budget, res reconcile.Result, details map[reconcile.Date]*reconcile.DayDetail) {
	today := reconcile.DateOf(dr.now.In(dr.window.Loc))
	oldest, limited := oldestKept(dr.now, dr.window.Loc, dr.retention)
	for i := 0; i+1 < len(res.Days); i++ {
		a, c := res.Days[i], res.Days[i+1]
		if !a.IsGap() || !c.IsGap() || a.Status == c.Status {
			continue
		}
		if details[a.Date].LocalHours != nil && details[c.Date].LocalHours != nil {
			continue // the store's own hours decide it (reconcile.Explain)
		}
		for _, d := range []reconcile.Date{a.Date.AddDays(-1), c.Date.AddDays(1)} {
			if _, ok := details[d]; ok || !d.Before(today) || (limited && d.Before(oldest)) || !b.left() {
				continue
			}
			hours, err := dr.client.HourlyTimeseries(ctx, d, dr.window.Loc, "")
			b.check(err)
			if err != nil {
				continue // the estimate says it lacks hours; the pair is still reported
			}
			det := &reconcile.DayDetail{}
			if len(hours) > 0 {
				det.APIHours = hours
			}
			details[d] = det
		}
	}
}
