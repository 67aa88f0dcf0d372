package reconcile

import (
	"cmp"
	"slices"
	"strings"
)

// clickKey is a click as the comparison tells clicks apart.
type clickKey struct {
	ms            int64
	link, country string
}

func keyOf(c Click) clickKey { return clickKey{c.TS.UnixMilli(), c.LinkID, c.CountryCode} }

// pairKey is a click's (instant, link): where a poller resumes.
type pairKey struct {
	ms   int64
	link string
}

func pairOf(c Click) pairKey { return pairKey{c.TS.UnixMilli(), c.LinkID} }

// flagged is an Elido click of the raw hours, lost or kept, or a marker
// standing for an unread hour's clicks (all kept).
type flagged struct {
	Click
	lost   bool
	marker bool
}

// clicks diagnoses a day from its raw clicks: the gap is every lost click
// and every surplus row; outages, busy intervals and duplicates are found
// click by click, then a steady leak in what is left.
func (d *diagDay) clicks() {
	for i := range d.r {
		d.r[i], d.surplus[i] = 0, 0
	}
	var seq []flagged
	var dupes []Click
	for i, h := range d.ev.Hours {
		rh, ok := d.rawAt[h.Start.UnixMilli()]
		if !ok {
			if h.API > 0 {
				seq = append(seq, flagged{Click: Click{TS: h.Start}, marker: true})
			}
			continue
		}
		local := map[clickKey]int{}
		for _, c := range rh.Local {
			local[keyOf(c)]++
		}
		api := slices.Clone(rh.API)
		slices.SortStableFunc(api, func(x, y Click) int { return x.TS.Compare(y.TS) })
		apiCount := map[clickKey]int{}
		for _, c := range api {
			apiCount[keyOf(c)]++
		}
		seen := map[clickKey]int{}
		for _, c := range api {
			k := keyOf(c)
			seen[k]++
			// The first occurrences of a key are the lost ones; which of
			// two identical clicks was lost cannot be told.
			lost := seen[k] <= apiCount[k]-local[k]
			seq = append(seq, flagged{Click: c, lost: lost})
			if lost {
				d.r[i]++
				d.gap++
			}
		}
		for _, c := range sortedClicks(rh.Local) {
			k := keyOf(c)
			if local[k] <= apiCount[k] {
				continue
			}
			// A row beyond Elido's count: a duplicate when it repeats
			// another row of the store.
			local[k]--
			d.gap++
			if local[k] >= 1 {
				dupes = append(dupes, c)
			} else {
				d.surplus[i]++
			}
		}
	}
	d.kept = map[pairKey]bool{}
	for _, f := range seq {
		switch {
		case f.lost:
			d.lost = append(d.lost, f.Click)
		case !f.marker:
			d.kept[pairOf(f.Click)] = true
		}
	}
	above := d.busy()
	d.outages(seq, above)
	d.duplicates(dupes)
	d.leak(true)
}

func sortedClicks(cs []Click) []Click {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(x, y Click) int {
		return cmp.Or(x.TS.Compare(y.TS), strings.Compare(x.LinkID, y.LinkID), strings.Compare(x.CountryCode, y.CountryCode))
	})
	return cs
}
