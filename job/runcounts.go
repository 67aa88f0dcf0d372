package job

import (
	"context"
	"math"
	"slices"

	"github.com/clickrecon/clickrecon/reconcile"
)

// The store's per-link counts of a run of days that differ, held for the
// drill-down planner (plan.go) in as little memory as a large store
// needs.

// maxRunCells bounds the store counts a run holds while it is drilled: a
// day's count of each link as 2 bytes, so 8 MiB (40 days of 100k links).
// A longer run is drilled in pieces.
const maxRunCells = 4 << 20

// runCounts are the store's per-link counts of a run of consecutive days
// that differ, for both ways of drilling it: a day's column for its own
// breakdown, the run's sums for the run's breakdown. A link's id is held
// once, its count on each day in 2 bytes (a larger count aside, in wide).
type runCounts struct {
	days  []reconcile.Date  // date order
	read  bool              // the store was asked for the days' counts
	index map[string]uint32 // nil once the run's breakdown no longer needs it
	ids   []string
	cells [][]uint16 // cells[k][i]: day k, link i; math.MaxUint16: see wide
	wide  []map[uint32]int64
	sum   []*int64 // the sum of the store's rows of day k; nil past an int64
	links []int    // how many links the store has rows for on day k
	err   []error  // why day k could not be read
}

func newRunCounts() *runCounts { return &runCounts{read: true, index: map[string]uint32{}} }

// forget drops what only the run's breakdown needs, the ids' index,
// before the days are drilled one by one.
func (rc *runCounts) forget() { rc.index = nil }

// take returns day k's counts as a LinkTally, for its own breakdown, and
// drops them from rc: the day's column is not read again.
func (rc *runCounts) take(k int) *reconcile.LinkTally {
	t := rc.tally(k)
	rc.cells[k], rc.wide[k] = nil, nil
	return t
}

// addDay makes room for day d and returns its position.
func (rc *runCounts) addDay(d reconcile.Date) int {
	rc.days = append(rc.days, d)
	rc.cells = append(rc.cells, make([]uint16, 0, len(rc.ids))) // the links of the days before, mostly
	rc.wide = append(rc.wide, nil)
	rc.sum = append(rc.sum, new(int64))
	rc.links = append(rc.links, 0)
	rc.err = append(rc.err, nil)
	return len(rc.days) - 1
}

// add adds the store's clicks of link id on day k; a link given twice
// adds up, as the store's rows do.
func (rc *runCounts) add(k int, id string, n int64) {
	i, ok := rc.index[id]
	if !ok {
		i = uint32(len(rc.ids))
		rc.index[id] = i
		rc.ids = append(rc.ids, id)
	}
	col := rc.cells[k]
	if int(i) >= len(col) {
		col = slices.Grow(col, int(i)+1-len(col))[:i+1] // never written beyond len: zeros
		rc.cells[k] = col
	}
	old := rc.cell(k, i)
	if old == 0 && n != 0 {
		rc.links[k]++
	}
	total, ok := reconcile.AddClicks(old, n)
	if !ok {
		total = math.MaxInt64
	}
	if total >= math.MaxUint16 {
		if rc.wide[k] == nil {
			rc.wide[k] = map[uint32]int64{}
		}
		rc.wide[k][i] = total
		col[i] = math.MaxUint16
	} else {
		col[i] = uint16(total)
	}
	if rc.sum[k] != nil {
		if s, ok := reconcile.AddClicks(*rc.sum[k], n); ok {
			*rc.sum[k] = s
		} else {
			rc.sum[k] = nil
		}
	}
}

// cell is the store's count of link i on day k.
func (rc *runCounts) cell(k int, i uint32) int64 {
	col := rc.cells[k]
	if int(i) >= len(col) {
		return 0
	}
	if v := col[i]; v != math.MaxUint16 {
		return int64(v)
	}
	return rc.wide[k][i]
}

// pos returns day d's position.
func (rc *runCounts) pos(d reconcile.Date) int { return slices.Index(rc.days, d) }

// tally returns day k's counts as a LinkTally, for its own breakdown.
func (rc *runCounts) tally(k int) *reconcile.LinkTally {
	t := &reconcile.LinkTally{}
	t.Grow(rc.links[k], rc.links[k]*rc.idLen())
	for i := range rc.cells[k] {
		if n := rc.cell(k, uint32(i)); n != 0 {
			t.AddLocal(rc.ids[i], n)
		}
	}
	return t
}

// idLen is the longest link id's length, for sizing a tally.
func (rc *runCounts) idLen() int {
	n := 0
	for _, id := range rc.ids {
		n = max(n, len(id))
	}
	return n
}

// runSums returns the store's sum of each link over the run, by its
// position in rc; false when one passes what a click count holds.
func (rc *runCounts) runSums() ([]int64, bool) {
	sums := make([]int64, len(rc.ids))
	for k := range rc.days {
		for i := range rc.cells[k] {
			s, ok := reconcile.AddClicks(sums[i], rc.cell(k, uint32(i)))
			if !ok {
				return nil, false
			}
			sums[i] = s
		}
	}
	return sums, true
}

// readRun reads the store's per-link counts of a run's days, in date
// order, into pieces of at most maxRunCells counts. A day that cannot be
// read has its error in its piece (and in errs).
func (dr driller) readRun(ctx context.Context, run []reconcile.Date, errs map[reconcile.Date]error) []*runCounts {
	var pieces []*runCounts
	rc := newRunCounts()
	for _, d := range run {
		if len(rc.days) > 0 && (len(rc.days)+1)*len(rc.ids) > maxRunCells {
			pieces, rc = append(pieces, rc), newRunCounts()
		}
		k := rc.addDay(d)
		err := dr.store.EachCount(ctx, dr.query, d, dr.window.Loc, func(id string, n int64) { rc.add(k, id, n) })
		if dr.storeRead(d, err, errs) != nil {
			rc.err[k], rc.cells[k], rc.wide[k], rc.sum[k], rc.links[k] = err, nil, nil, nil, 0
		}
	}
	return append(pieces, rc)
}
