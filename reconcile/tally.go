package reconcile

// LinkTally compares one day's per-link counts as Elido's side arrives, a
// link at a time (the pages of its breakdown), against the store's, read
// whole. It keeps Elido's count of a link only where it differs from the
// store's, and hands back only the links that differ (Differing), which
// is all CompareLinks reports: a day of a large workspace then costs the
// store's counts and a page while it is drilled, and its differing links
// after, not both sides whole for the rest of the run.
type LinkTally struct {
	// local is the store's count per link; a link Elido named holds ^n
	// (negative: a count never is), so that naming it again is noticed.
	local map[string]int64
	// api is Elido's count of the links it named that the store counted
	// differently or not at all.
	api map[string]int64
}

// NewLinkTally starts a tally against local, the store's counts of the
// day (never negative), which it takes over: the caller must not use local
// after.
func NewLinkTally(local map[string]int64) *LinkTally {
	if local == nil {
		local = map[string]int64{}
	}
	return &LinkTally{local: local, api: map[string]int64{}}
}

// Add counts Elido's clicks of link id. It reports false, and counts
// nothing, when id was added before: a breakdown names each link once.
func (t *LinkTally) Add(id string, clicks int64) bool {
	if n, ok := t.local[id]; ok {
		if n < 0 {
			return false
		}
		t.local[id] = ^n
		if clicks != n {
			t.api[id] = clicks
		}
		return true
	}
	if _, ok := t.api[id]; ok {
		return false
	}
	t.api[id] = clicks
	return true
}

// Differing returns both sides' counts of the links whose counts differ,
// as new maps the size of the difference; CompareLinks finds the same
// links in them, with complete true, as in the whole counts. A link
// absent from one map has no clicks on that side.
func (t *LinkTally) Differing() (api, local map[string]int64) {
	api, local = map[string]int64{}, map[string]int64{}
	for id, n := range t.local {
		if n >= 0 { // Elido did not name it
			if n != 0 {
				local[id] = n
			}
			continue
		}
		if a, ok := t.api[id]; ok { // named, with another count
			api[id], local[id] = a, ^n
		}
	}
	for id, a := range t.api {
		if _, ok := t.local[id]; !ok && a != 0 {
			api[id] = a
		}
	}
	return api, local
}
