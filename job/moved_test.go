package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/reconcile"
)

// moveClick moves one of link n's store clicks from day a to day b.
func (w *planWorld) moveClick(n, a, b int) {
	w.local[a][linkN(n)]--
	w.local[b][linkN(n)]++
}

// plannedLinks drills w's gaps as the planner does and returns the rows
// of links that differ, by day and link, and the drill-down.
func plannedLinks(t *testing.T, w *planWorld) (map[string][2]int64, []string, reconcile.Result) {
	t.Helper()
	o, d := w.start(t)
	st := openStore(t, o)
	res := compared(t, o, d, st)
	res, drill, err := drillDown(context.Background(), drillStageOf(o, d, st), res)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][2]int64{}
	for _, l := range res.Links {
		rows[l.Date.String()+" "+l.LinkID] = [2]int64{l.API, l.Local}
	}
	return rows, drill.LinksBySums, res
}

// checkAgainstTruth compares the planner's rows with the world's own
// (brute force: each link on each day, both sides): every row it gives
// is true; a day whose links were read by its own breakdown has every
// row; a day proved by sums lacks only links whose moves the sums cannot
// see: links that differ on no day the run read by its own breakdown, and
// that cancel on that day. The report says which days rest on sums.
func checkAgainstTruth(t *testing.T, w *planWorld, rows map[string][2]int64, bySums []string, res reconcile.Result) {
	t.Helper()
	truth := map[string][2]int64{}
	differs := map[string][]int{} // link: the days it differs on
	for d := range w.days {
		ids := map[string]bool{}
		for id := range w.api[d] {
			ids[id] = true
		}
		for id := range w.local[d] {
			ids[id] = true
		}
		for id := range ids {
			if a, l := w.api[d][id], w.local[d][id]; a != l {
				truth[w.from.AddDays(d).String()+" "+id] = [2]int64{a, l}
				differs[id] = append(differs[id], d)
			}
		}
	}
	for k, got := range rows {
		if truth[k] != got {
			t.Errorf("row %s: planned %v, true %v", k, got, truth[k])
		}
	}
	index := map[string]int{}
	for d := range w.days {
		index[w.from.AddDays(d).String()] = d
	}
	sums := map[int]bool{}
	for _, s := range bySums {
		sums[index[s]] = true
	}
	hiddenOn := map[int]int64{}
	for k, want := range truth {
		if _, ok := rows[k]; ok {
			continue
		}
		date, id, _ := strings.Cut(k, " ")
		d := index[date]
		if !sums[d] {
			t.Errorf("row %s %v missing from a day read by its own breakdown", k, want)
			continue
		}
		for _, o := range differs[id] {
			if !sums[o] {
				t.Errorf("row %s %v missing from a day proved by sums, though %s differs on %s, a day read by its own breakdown: its moves were seen",
					k, want, id, w.from.AddDays(o))
			}
		}
		hiddenOn[d] += want[1] - want[0]
	}
	for d, n := range hiddenOn {
		if n != 0 {
			t.Errorf("%s: the rows missing add up to %+d: the sums would have seen them", w.from.AddDays(d), n)
		}
	}
	said := slices.ContainsFunc(res.Findings, func(f reconcile.Finding) bool { return f.Kind == reconcile.FindingLinksBySums })
	if said != (len(bySums) > 0) {
		t.Errorf("links_by_sums finding %v with days %v proved by sums", said, bySums)
	}
}

// Links whose clicks moved between days so that their sums over the run
// match, and cancel on one day but not on the others (lnk_02000 +1 on day
// 2 and −1 on day 3; lnk_02001 −1 on day 2 and +1 on day 4), have their
// rows on every day: day 2 adds up, but the breakdowns of days 3 and 4
// show both links, and their series place them on day 2. Where the moves
// cancel on every day (lnk_02002 and lnk_02003 between days 5 and 6, where
// nothing else moves) the rows cannot be seen, and the report names the
// days whose rows rest on sums.
func TestPlannerFindsMovedLinks(t *testing.T) {
	w := newPlanWorld(8, 2500)
	for d := 1; d <= 6; d++ {
		w.lose(d, span(0, 8)...)
	}
	w.moveClick(2000, 3, 2)
	w.moveClick(2001, 2, 4)
	rows, bySums, res := plannedLinks(t, w)
	for _, k := range []string{"2026-10-03 lnk_02000", "2026-10-03 lnk_02001", "2026-10-04 lnk_02000", "2026-10-05 lnk_02001"} {
		if _, ok := rows[k]; !ok {
			t.Errorf("no row %s", k)
		}
	}
	checkAgainstTruth(t, w, rows, bySums, res)

	// A chain: day 2 holds lnk_02000 +1 and lnk_02001 −1, day 5 lnk_02001
	// +1 and lnk_02002 −1, both adding up; only day 3 (lnk_02000) and day
	// 6 (lnk_02002) do not. Placing lnk_02000 on day 2 breaks its sums:
	// day 2 is read by its own breakdown, which finds lnk_02001.
	w = newPlanWorld(8, 2500)
	for d := 1; d <= 6; d++ {
		w.lose(d, span(0, 8)...)
	}
	w.moveClick(2000, 3, 2)
	w.moveClick(2001, 2, 5)
	w.moveClick(2002, 5, 6)
	rows, bySums, res = plannedLinks(t, w)
	for _, k := range []string{"2026-10-03 lnk_02000", "2026-10-03 lnk_02001", "2026-10-06 lnk_02001", "2026-10-06 lnk_02002"} {
		if _, ok := rows[k]; !ok {
			t.Errorf("chain: no row %s (days by sums %v)", k, bySums)
		}
	}
	checkAgainstTruth(t, w, rows, bySums, res)

	w = newPlanWorld(8, 2500)
	for d := 1; d <= 6; d++ {
		w.lose(d, span(0, 8)...)
	}
	w.moveClick(2002, 5, 6)
	w.moveClick(2003, 6, 5)
	rows, bySums, res = plannedLinks(t, w)
	if !slices.Contains(bySums, "2026-10-06") || !slices.Contains(bySums, "2026-10-07") {
		t.Errorf("days proved by sums %v, want 2026-10-06 and 2026-10-07 among them", bySums)
	}
	checkAgainstTruth(t, w, rows, bySums, res)
}

// A reference model: random windows of links and days, with losses on
// recurring links, random moves of clicks between days, and moves that
// cancel on some days and not others; the planner's rows are checked
// against brute force (checkAgainstTruth).
func TestPlannerAgainstBruteForce(t *testing.T) {
	for seed := range uint64(16) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 34))
			days := 5 + rng.IntN(4)
			w := newPlanWorld(days, 2100+rng.IntN(800))
			for d := 1; d < days-1; d++ {
				w.lose(d, span(0, 3+rng.IntN(5))...)
			}
			gap := func() int { return 1 + rng.IntN(days-2) }
			link := func() int { return 100 + rng.IntN(w.links-100) }
			for range rng.IntN(4) { // a click moved between two days
				a, b := gap(), gap()
				if a != b {
					w.moveClick(link(), a, b)
				}
			}
			for range 1 + rng.IntN(3) { // x: +1 on a, −1 on b; y: −1 on a, +1 on c
				a, b, c := gap(), gap(), gap()
				if a != b && a != c {
					w.moveClick(link(), b, a)
					w.moveClick(link(), a, c)
				}
			}
			if rng.IntN(2) == 0 { // cancelling on every day
				a, b := gap(), gap()
				if a != b {
					w.moveClick(link(), a, b)
					w.moveClick(link(), b, a)
				}
			}
			rows, bySums, res := plannedLinks(t, w)
			checkAgainstTruth(t, w, rows, bySums, res)
			t.Logf("%d days, %d links: %d rows, days by sums %v", days, w.links, len(rows), bySums)
		})
	}
}
