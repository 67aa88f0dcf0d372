package reconcile

import (
	"bytes"
	"slices"
	"sort"
)

// LinkTally compares one day's per-link counts: the store's, added first
// (AddLocal), then Elido's as they arrive a link at a time (Add, the pages
// of its breakdown). It keeps Elido's count of a link only where it
// differs from the store's, and hands back only the links that differ
// (Differing), which is all CompareLinks reports. The store's side, as
// many links as the workspace has (100k), is kept compactly while Elido's
// is read: the ids end to end in one slice, found by binary search, about
// 30 bytes a link of 10 characters where a map holds 50.
//
// The zero LinkTally is an empty tally.
type LinkTally struct {
	ids   []byte   // the store's link ids end to end, in the order added
	ends  []uint32 // link i's id is ids[ends[i-1]:ends[i]], from 0 for link 0
	local []int64  // the store's count of link i; ^n once Elido named it
	// byID is the store's links in id order, each id once, built by the
	// first Add.
	byID   []uint32
	sorted bool
	differ map[string]int64 // Elido's count of the store's links it counts otherwise
	only   map[string]int64 // Elido's count of links the store does not know

	// The sums of each side's rows, for checking each against its own
	// day total (Sums); over is set once a sum passes an int64.
	localSum, apiSum   int64
	localOver, apiOver bool
}

// AddLocal adds the store's clicks of link id; a link added twice adds
// up. Every store count comes before Elido's first: AddLocal panics after
// Add, and past 4 GiB of link ids.
func (t *LinkTally) AddLocal(id string, clicks int64) {
	if t.sorted {
		panic("reconcile: LinkTally.AddLocal after Add")
	}
	t.ids = append(t.ids, id...)
	if uint64(len(t.ids)) > 1<<32-1 {
		panic("reconcile: LinkTally holds at most 4 GiB of link ids")
	}
	t.ends = append(t.ends, uint32(len(t.ids)))
	t.local = append(t.local, clicks)
	t.localSum, t.localOver = addSum(t.localSum, clicks, t.localOver)
}

// Grow makes room for links more of the store's links, their ids idBytes
// long in all, so that a tally filled from a known list is sized once.
func (t *LinkTally) Grow(links, idBytes int) {
	t.ids = slices.Grow(t.ids, idBytes)
	t.ends = slices.Grow(t.ends, links)
	t.local = slices.Grow(t.local, links)
}

// addSum adds n to sum unless the sum already passed an int64 (over).
func addSum(sum, n int64, over bool) (int64, bool) {
	if over {
		return 0, true
	}
	s, ok := AddClicks(sum, n)
	return s, !ok
}

// Sums returns the sum of the store's rows added and of Elido's, each
// nil when it passed an int64 (no day has that many clicks: a misread).
// Each side's must be its day total: the rows of a day that do not add up
// to it show which side's numbers disagree with themselves.
func (t *LinkTally) Sums() (api, local *int64) {
	if !t.apiOver {
		api = ptr(t.apiSum)
	}
	if !t.localOver {
		local = ptr(t.localSum)
	}
	return api, local
}

func (t *LinkTally) id(i uint32) []byte {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.ids[start:t.ends[i]]
}

// sort orders the store's links by id and adds up the counts of a link
// added more than once. Counts are never negative and add up to at most
// MaxClicks, as a store's day does.
func (t *LinkTally) sort() {
	t.sorted = true
	t.byID = make([]uint32, len(t.local))
	for i := range t.byID {
		t.byID[i] = uint32(i)
	}
	slices.SortStableFunc(t.byID, func(a, b uint32) int { return bytes.Compare(t.id(a), t.id(b)) })
	kept := t.byID[:0]
	for _, i := range t.byID {
		if k := len(kept); k > 0 && bytes.Equal(t.id(kept[k-1]), t.id(i)) {
			t.local[kept[k-1]] += t.local[i]
			continue
		}
		kept = append(kept, i)
	}
	t.byID = slices.Clip(kept)
}

// find returns the store's link with id, if there is one.
func (t *LinkTally) find(id string) (uint32, bool) {
	k := sort.Search(len(t.byID), func(k int) bool { return string(t.id(t.byID[k])) >= id })
	if k < len(t.byID) && string(t.id(t.byID[k])) == id {
		return t.byID[k], true
	}
	return 0, false
}

// Add counts Elido's clicks of link id. It reports false, and counts
// nothing, when id was added before: a breakdown names each link once.
func (t *LinkTally) Add(id string, clicks int64) bool {
	if !t.sorted {
		t.sort()
	}
	if i, ok := t.find(id); ok {
		n := t.local[i]
		if n < 0 {
			return false
		}
		t.apiSum, t.apiOver = addSum(t.apiSum, clicks, t.apiOver)
		t.local[i] = ^n
		if clicks != n {
			if t.differ == nil {
				t.differ = map[string]int64{}
			}
			t.differ[id] = clicks
		}
		return true
	}
	if _, ok := t.only[id]; ok {
		return false
	}
	if t.only == nil {
		t.only = map[string]int64{}
	}
	t.only[id] = clicks
	t.apiSum, t.apiOver = addSum(t.apiSum, clicks, t.apiOver)
	return true
}

// Differing returns both sides' counts of the links whose counts differ,
// as new maps the size of the difference; CompareLinks finds the same
// links in them, with complete true, as in the whole counts. A link
// absent from one map has no clicks on that side.
func (t *LinkTally) Differing() (api, local map[string]int64) {
	if !t.sorted {
		t.sort()
	}
	api, local = map[string]int64{}, map[string]int64{}
	for _, i := range t.byID {
		switch n := t.local[i]; {
		case n > 0: // Elido did not name it
			local[string(t.id(i))] = n
		case n < 0: // named, perhaps with another count
			if a, ok := t.differ[string(t.id(i))]; ok {
				id := string(t.id(i))
				api[id], local[id] = a, ^n
			}
		}
	}
	for id, a := range t.only {
		if a != 0 {
			api[id] = a
		}
	}
	return api, local
}
