package job

import (
	"context"
	"sync"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The reading of a run's two sources at once, and its comparison.

// readSources reads Elido and the store over o.Window (readBoth) and
// compares them. A store that was not opened (st nil, openErr why) is not
// read: its failure to open is the store's, and leaves every day unknown.
// storeErr is the store's first failure, to open or to read.
func readSources(ctx context.Context, o Options, d Deps, st *store.Store, openErr error) (
	res reconcile.Result, elidoErr, storeErr error) {
	w := o.Window
	var sr *storeRead
	if st != nil {
		sr = &storeRead{store: st, query: o.Query, window: w, log: d.Log}
	} else {
		d.Log.Error("store not opened", "err", openErr)
	}
	er := elidoRead{client: d.Elido, window: w, retention: o.Retention, now: d.Now(), log: d.Log}
	api, summaries, elidoErr, local, readErr := readBoth(ctx, d.Progress, er, sr)
	if sr == nil {
		local = unopened(w, openErr)
	}
	res = reconcile.Compare(reconcile.Input{
		Window:    w,
		Now:       d.Now(),
		Settle:    o.Settle,
		Tolerance: o.Tolerance,
		API:       api,
		Local:     local,
		Summaries: summaries,
	})
	return res, elidoErr, firstErr(openErr, readErr)
}

// readBoth reads Elido and the store's totals at the same time, so a run
// takes about as long as the slower of the two. Each side keeps its own
// limits: Elido's requests still go through the client's rate limiter, and
// both end at the run's deadline. Their progress shows as one stage, on p.
// A nil s reads Elido alone, and returns no local readings.
func readBoth(ctx context.Context, p Progress, e elidoRead, s *storeRead) (
	api map[reconcile.Date]reconcile.Reading, summaries []reconcile.SummaryCheck, elidoErr error,
	local map[reconcile.Date]reconcile.Reading, storeErr error) {
	rp := &readProgress{p: p}
	e.progress = rp.side(0)
	var wg sync.WaitGroup
	if s != nil {
		sr := *s
		sr.progress = rp.side(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			local, storeErr = readTotals(ctx, sr)
		}()
	}
	api, summaries, elidoErr = readElido(ctx, e)
	wg.Wait()
	return api, summaries, elidoErr, local, storeErr
}

// readProgress adds up the steps of the two sources read at once into one
// stage, so the bar does not flip between them.
type readProgress struct {
	p           Progress
	mu          sync.Mutex
	done, total [2]int
}

func (r *readProgress) side(i int) Progress { return readSide{r, i} }

type readSide struct {
	r *readProgress
	i int
}

func (s readSide) Step(_ string, done, total int) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[s.i], r.total[s.i] = done, total
	r.p.Step("elido+store", r.done[0]+r.done[1], r.total[0]+r.total[1])
}

func (readSide) Done() {}
