package reconcile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// link is one of Elido's per-link counts, in the order its breakdown names
// them.
type link struct {
	id     string
	clicks int64
}

func tally(local map[string]int64, api []link) (*LinkTally, []string) {
	t := &LinkTally{}
	for id, n := range local { // in no order, as a store returns them
		t.AddLocal(id, n)
	}
	var twice []string
	for _, l := range api {
		if !t.Add(l.id, l.clicks) {
			twice = append(twice, l.id)
		}
	}
	return t, twice
}

func whole(api []link) map[string]int64 {
	out := map[string]int64{}
	for _, l := range api {
		out[l.id] = l.clicks
	}
	return out
}

// A day's detail keeps only the links that differ, and the report finds
// in them the rows it finds in both sides' whole counts.
func TestLinkTallyKeepsWhatDiffers(t *testing.T) {
	t.Parallel()
	d := date("2026-11-25")
	tests := []struct {
		name               string
		local              map[string]int64
		api                []link
		wantAPI, wantLocal map[string]int64
	}{
		{
			name:      "matching_links_dropped",
			local:     map[string]int64{"lnk_same": 7, "lnk_docs": 41, "lnk_sale": 102},
			api:       []link{{"lnk_sale", 500}, {"lnk_docs", 40}, {"lnk_same", 7}},
			wantAPI:   map[string]int64{"lnk_sale": 500, "lnk_docs": 40},
			wantLocal: map[string]int64{"lnk_sale": 102, "lnk_docs": 41},
		},
		{
			name:      "one_sided_links_kept",
			local:     map[string]int64{"lnk_store_only": 2, "lnk_same": 1},
			api:       []link{{"lnk_elido_only", 3}, {"lnk_same", 1}},
			wantAPI:   map[string]int64{"lnk_elido_only": 3},
			wantLocal: map[string]int64{"lnk_store_only": 2},
		},
		{
			name:      "zero_on_one_side_absent_on_the_other_matches",
			local:     map[string]int64{"lnk_zero_local": 0},
			api:       []link{{"lnk_zero_elido", 0}},
			wantAPI:   map[string]int64{},
			wantLocal: map[string]int64{},
		},
		{
			name:      "zero_against_clicks_differs",
			local:     map[string]int64{"lnk_lost": 0, "lnk_extra": 4},
			api:       []link{{"lnk_lost", 2}, {"lnk_extra", 0}},
			wantAPI:   map[string]int64{"lnk_lost": 2, "lnk_extra": 0},
			wantLocal: map[string]int64{"lnk_lost": 0, "lnk_extra": 4},
		},
		{name: "nothing_read", local: nil, api: nil, wantAPI: map[string]int64{}, wantLocal: map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl, twice := tally(tt.local, tt.api)
			if twice != nil {
				t.Fatalf("links added twice: %v", twice)
			}
			api, local := tl.Differing()
			if diff := cmp.Diff(tt.wantAPI, api); diff != "" {
				t.Errorf("Elido's side (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLocal, local); diff != "" {
				t.Errorf("the store's side (-want +got):\n%s", diff)
			}
			want := CompareLinks(d, whole(tt.api), tt.local, true)
			if diff := cmp.Diff(want, CompareLinks(d, api, local, true)); diff != "" {
				t.Errorf("rows from the kept links (-whole +kept):\n%s", diff)
			}
		})
	}
}

// Rows of the store with the same link add up, as the store's per-link
// counts do; Elido's count is compared with their sum.
func TestLinkTallyAddsUpALinksRows(t *testing.T) {
	t.Parallel()
	var tl LinkTally
	for _, r := range []link{{"lnk_b", 2}, {"lnk_a", 1}, {"lnk_b", 3}, {"lnk_c", 4}, {"lnk_a", 1}} {
		tl.AddLocal(r.id, r.clicks)
	}
	for _, l := range []link{{"lnk_a", 2}, {"lnk_b", 4}, {"lnk_c", 4}} {
		if !tl.Add(l.id, l.clicks) {
			t.Fatalf("%s noticed twice", l.id)
		}
	}
	api, local := tl.Differing()
	if diff := cmp.Diff(map[string]int64{"lnk_b": 4}, api); diff != "" {
		t.Errorf("Elido's side (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"lnk_b": 5}, local); diff != "" {
		t.Errorf("the store's side (-want +got):\n%s", diff)
	}
}

// A link Elido names twice is noticed whether its first count matched
// the store's, differed from it, or the store never saw the link.
func TestLinkTallyNoticesALinkNamedTwice(t *testing.T) {
	t.Parallel()
	local := map[string]int64{"lnk_match": 3, "lnk_differs": 5}
	_, twice := tally(local, []link{
		{"lnk_match", 3}, {"lnk_differs", 1}, {"lnk_elido_only", 2},
		{"lnk_match", 3}, {"lnk_differs", 1}, {"lnk_elido_only", 2}, {"lnk_new", 1},
	})
	if diff := cmp.Diff([]string{"lnk_match", "lnk_differs", "lnk_elido_only"}, twice); diff != "" {
		t.Errorf("links noticed twice (-want +got):\n%s", diff)
	}
}

// Over many random days, the rows from the kept links are the rows from
// the whole counts.
func TestLinkTallyAgreesWithCompareLinks(t *testing.T) {
	t.Parallel()
	d := date("2026-11-25")
	r := rand.New(rand.NewPCG(11, 2026))
	for i := range 200 {
		local := map[string]int64{}
		var api []link
		for n := range r.IntN(60) {
			id := fmt.Sprintf("lnk_%02d", n)
			c := int64(r.IntN(4))
			switch r.IntN(4) {
			case 0: // the store only
				local[id] = c
			case 1: // Elido only
				api = append(api, link{id, c})
			case 2: // both, the same
				local[id] = c
				api = append(api, link{id, c})
			default: // both, perhaps not the same
				local[id] = c
				api = append(api, link{id, int64(r.IntN(4))})
			}
		}
		r.Shuffle(len(api), func(a, b int) { api[a], api[b] = api[b], api[a] })
		tl, _ := tally(local, api)
		kept, keptLocal := tl.Differing()
		want := CompareLinks(d, whole(api), local, true)
		got := CompareLinks(d, kept, keptLocal, true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("day %d: rows (-whole +kept):\n%s", i, diff)
		}
		if len(kept) > len(want) || len(keptLocal) > len(want) {
			t.Fatalf("day %d: kept %d and %d links for %d rows", i, len(kept), len(keptLocal), len(want))
		}
	}
}

// Sums adds up each side's rows, a link Elido names twice once (the
// second is refused), for each to be held against its own day total.
func TestLinkTallySums(t *testing.T) {
	var tally LinkTally
	tally.AddLocal("a", 2)
	tally.AddLocal("b", 3)
	tally.AddLocal("a", 4)
	tally.Add("a", 6)
	tally.Add("c", 5)
	if tally.Add("c", 5) {
		t.Fatal("a link named twice was taken")
	}
	api, local := tally.Sums()
	if api == nil || local == nil || *api != 11 || *local != 9 {
		t.Errorf("sums %v, %v; want 11, 9", api, local)
	}
	var over LinkTally
	over.AddLocal("a", math.MaxInt64)
	over.AddLocal("b", 1)
	if _, local := over.Sums(); local != nil {
		t.Errorf("a sum past an int64: %d, want nil", *local)
	}
}
