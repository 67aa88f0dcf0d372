package elido_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// burst returns n clicks one millisecond apart from start, over three
// links and two countries (one unknown).
func burst(start time.Time, n int) []elidotest.Click {
	clicks := make([]elidotest.Click, n)
	for i := range clicks {
		cc := "PL"
		if i%3 == 0 {
			cc = ""
		}
		clicks[i] = elidotest.Click{TS: start.Add(time.Duration(i) * time.Millisecond), LinkID: fmt.Sprintf("lnk_%d", i%3), CountryCode: cc}
	}
	return clicks
}

// newestFirst converts clicks to the client's type, newest first.
func newestFirst(clicks []elidotest.Click) []elido.Click {
	if len(clicks) == 0 {
		return nil
	}
	out := make([]elido.Click, len(clicks))
	for i, c := range clicks {
		out[len(clicks)-1-i] = elido.Click{TS: c.TS.UTC(), LinkID: c.LinkID, CountryCode: c.CountryCode}
	}
	return out
}

func TestClicksRecentFollowsEveryPage(t *testing.T) {
	hour := ts(t, "2026-10-24T02:00:00Z")
	tests := []struct {
		name  string
		n     int
		pages int
	}{
		{"empty_hour_one_page", 0, 1},
		{"exactly_one_full_page", 1000, 1},
		{"one_more_than_a_page", 1001, 2},
		{"2500_clicks_three_pages", 2500, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inside := burst(hour, tt.n)
			// Clicks just outside the hour, on both sides, are not asked for.
			outside := []elidotest.Click{
				{TS: hour.Add(-time.Millisecond), LinkID: "lnk_x", CountryCode: "DE"},
				{TS: hour.Add(time.Hour), LinkID: "lnk_x", CountryCode: "DE"},
			}
			f := newFixture(t, append(slices.Clone(inside), outside...), nil)
			got, err := f.client.ClicksRecent(t.Context(), hour, hour.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(newestFirst(inside), got); diff != "" {
				t.Errorf("ClicksRecent (-want +got):\n%s", diff)
			}
			if n := f.client.Requests()["clicks/recent"]; n != tt.pages {
				t.Errorf("made %d requests, want %d", n, tt.pages)
			}
			for i, r := range f.srv.RequestLog() {
				if !strings.Contains(r, "from=2026-10-24T02%3A00%3A00.000Z") || !strings.Contains(r, "to=2026-10-24T03%3A00%3A00.000Z") ||
					(i > 0) != strings.Contains(r, "cursor=") {
					t.Errorf("request %d is %s: want the hour's instants, and a cursor after the first page", i, r)
				}
			}
		})
	}
}

func TestClicksRecentRetriesAPage(t *testing.T) {
	hour := ts(t, "2026-10-24T02:00:00Z")
	clicks := burst(hour, 1500)
	f := newFixture(t, clicks, nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.ServerError, Status: 503, Endpoint: "clicks/recent", Times: 1},
		elidotest.Fault{Kind: elidotest.RateLimited, Endpoint: "clicks/recent", Times: 1, RetryAfter: 2 * time.Second})
	got, err := f.client.ClicksRecent(t.Context(), hour, hour.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1500 {
		t.Errorf("got %d clicks, want 1500", len(got))
	}
	if n := f.client.Requests()["clicks/recent"]; n != 4 {
		t.Errorf("made %d requests, want 4 (2 pages, 2 retries)", n)
	}
}

func TestClicksRecentBeyondReachReturnsFewer(t *testing.T) {
	hour := ts(t, "2026-10-24T02:00:00Z")
	f := newFixture(t, burst(hour, 60), nil)
	f.srv.SetReach(hour.Add(30 * time.Millisecond))
	got, err := f.client.ClicksRecent(t.Context(), hour, hour.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 30 {
		t.Errorf("got %d clicks, want the 30 within reach", len(got))
	}
}

func TestClicksRecentStrict(t *testing.T) {
	from, to := ts(t, "2026-10-24T02:00:00Z"), ts(t, "2026-10-24T03:00:00Z")
	tests := []struct {
		name string
		body string
		want string
	}{
		{"missing_items", `{"next_cursor": null}`, `"items" is absent or null`},
		{"missing_ts", `{"items": [{"link_id": "a", "country_code": "PL"}]}`, `"items[0].ts" is absent or null`},
		{"missing_link", `{"items": [{"ts": "2026-10-24T02:00:00.000Z", "country_code": "PL"}]}`, `items[0].link_id: absent or null`},
		{"missing_country", `{"items": [{"ts": "2026-10-24T02:00:00.000Z", "link_id": "a"}]}`, `"items[0].country_code" is absent or null`},
		{"outside_the_hour", `{"items": [{"ts": "2026-10-24T03:00:00.000Z", "link_id": "a", "country_code": ""}]}`, "outside"},
		{"oldest_first", `{"items": [{"ts": "2026-10-24T02:00:00.000Z", "link_id": "a", "country_code": ""},
			{"ts": "2026-10-24T02:00:01.000Z", "link_id": "a", "country_code": ""}]}`, "newest first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, cannedServer(t, 200, tt.body), nil)
			got, err := c.ClicksRecent(t.Context(), from, to)
			wantError(t, err, "elido: GET clicks/recent", tt.want)
			if got != nil {
				t.Errorf("got %d clicks with the error", len(got))
			}
		})
	}
}

func TestClicksRecentRepeatedCursorIsAnError(t *testing.T) {
	body := `{"items": [], "next_cursor": "same"}`
	c, _ := newClient(t, cannedServer(t, 200, body), nil)
	_, err := c.ClicksRecent(t.Context(), ts(t, "2026-10-24T02:00:00Z"), ts(t, "2026-10-24T03:00:00Z"))
	wantError(t, err, "page 2 repeats an earlier cursor")
}

// A page that repeats, at its boundary, the click the page before ended
// with keeps that click once: with the fake's RepeatAtPageBoundary, which
// also loses the click that should have come first, the hour reads one
// click short (and a caller comparing with Elido's count refuses it),
// never with a click twice. Read with another page size, the boundaries
// fall elsewhere.
func TestClicksRecentKeepsABoundaryRepeatOnce(t *testing.T) {
	hour := ts(t, "2026-10-24T02:00:00Z")
	inside := burst(hour, 2500)
	f := newFixture(t, inside, nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.RepeatAtPageBoundary})
	got, err := f.client.ClicksRecent(t.Context(), hour, hour.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := newestFirst(inside)
	// The first click of pages 2 and 3 (newest first) is lost.
	want = slices.Delete(slices.Delete(want, 2000, 2001), 1000, 1001)
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("ClicksRecent (-want +got):\n%s", diff)
	}

	f.srv.SetFaults()
	before := len(f.srv.RequestLog())
	if _, err := f.client.ClicksRecentPaged(t.Context(), hour, hour.Add(time.Hour), 997); err != nil {
		t.Fatal(err)
	}
	log := f.srv.RequestLog()[before:]
	if len(log) != 3 || !strings.Contains(log[0], "limit=997") {
		t.Errorf("read with pages of 997: %v", log)
	}
	for _, size := range []int{0, 1001} {
		if _, err := f.client.ClicksRecentPaged(t.Context(), hour, hour.Add(time.Hour), size); err == nil {
			t.Errorf("page size %d: no error", size)
		}
	}
}
