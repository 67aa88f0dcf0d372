package elidotest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

const (
	workspace = "42"
	key       = "sk_test_key"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value, for comparison with a
// literal.
func (a answer) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", a.body, err)
	}
	return v
}

func get(t *testing.T, srv *elidotest.Server, bearer, pathAndQuery string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+pathAndQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, body}
}

func analytics(endpoint, query string) string {
	return "/workspaces/" + workspace + "/analytics/" + endpoint + "?" + query
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func clicks(t *testing.T) []elidotest.Click {
	return []elidotest.Click{
		{TS: ts(t, "2026-11-25T23:59:59.999Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-26T00:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-26T10:15:00.5Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-26T23:59:59.999Z"), LinkID: "lnk_b", CountryCode: "DE"},
		{TS: ts(t, "2026-11-28T09:00:00Z"), LinkID: "lnk_b", CountryCode: ""},
		{TS: ts(t, "2026-11-28T23:00:00Z"), LinkID: "lnk_c", CountryCode: "US"},
		{TS: ts(t, "2026-11-29T00:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
	}
}

func newServer(t *testing.T, cs []elidotest.Click) *elidotest.Server {
	srv := elidotest.NewServer(workspace, key, cs)
	t.Cleanup(srv.Close)
	return srv
}

func TestURLIsOnLoopbackWithV1(t *testing.T) {
	srv := newServer(t, nil)
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/v1") {
		t.Errorf("URL() = %q, want http://127.0.0.1:PORT/v1", srv.URL())
	}
}

func TestAnswers(t *testing.T) {
	srv := newServer(t, clicks(t))
	const rng = "from=2026-11-26&to=2026-11-28"
	tests := []struct {
		name string
		path string
		want string
	}{
		{
			name: "summary",
			path: analytics("summary", rng+"&tz=UTC"),
			want: `{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":5,"unique_clicks":4}`,
		},
		{
			name: "summary_default_tz_is_utc",
			path: analytics("summary", rng),
			want: `{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":5,"unique_clicks":4}`,
		},
		{
			name: "summary_of_one_link",
			path: analytics("summary", rng+"&link_id=lnk_a"),
			want: `{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":2,"unique_clicks":1}`,
		},
		{
			name: "timeseries_with_zero_day",
			path: analytics("timeseries", rng+"&tz=UTC&interval=day"),
			want: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":3},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":2}]}`,
		},
		{
			name: "timeseries_in_another_zone",
			path: analytics("timeseries", rng+"&tz=America/New_York"),
			want: `{"interval":"day","tz":"America/New_York","items":[{"date":"2026-11-26","clicks":2},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":3}]}`,
		},
		{
			name: "timeseries_of_one_link",
			path: analytics("timeseries", rng+"&link_id=lnk_b&interval=day"),
			want: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":1},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":1}]}`,
		},
		{
			name: "country_breakdown_highest_first_unknown_is_empty",
			path: analytics("breakdown/country", rng),
			want: `{"items":[{"country_code":"PL","clicks":2},{"country_code":"","clicks":1},{"country_code":"DE","clicks":1},{"country_code":"US","clicks":1}]}`,
		},
		{
			name: "link_breakdown_single_page",
			path: analytics("breakdown/link", rng),
			want: `{"items":[{"link_id":"lnk_a","clicks":2},{"link_id":"lnk_b","clicks":2},{"link_id":"lnk_c","clicks":1}],"next_cursor":null}`,
		},
		{
			name: "empty_range_has_empty_items",
			path: analytics("breakdown/link", "from=2026-01-01&to=2026-01-01"),
			want: `{"items":[],"next_cursor":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := get(t, srv, key, tt.path)
			if a.status != http.StatusOK {
				t.Fatalf("status %d, body %s", a.status, a.body)
			}
			if diff := gocmp.Diff(mustJSON(t, tt.want), a.json(t)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// Day totals add to the clicks in /summary and the daily /timeseries of
// their zone, for the whole workspace only.
func TestDailyTotals(t *testing.T) {
	srv := newServer(t, clicks(t))
	srv.SetDailyTotals("UTC", map[string]int64{"2026-11-27": 1000000, "2026-11-28": 5, "2026-12-01": 7})
	const rng = "from=2026-11-26&to=2026-11-28"
	for _, tt := range []struct {
		name, path, want string
	}{
		{"summary", analytics("summary", rng+"&tz=UTC"),
			`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":1000010,"unique_clicks":4}`},
		{"timeseries", analytics("timeseries", rng+"&tz=UTC&interval=day"),
			`{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":3},{"date":"2026-11-27","clicks":1000000},{"date":"2026-11-28","clicks":7}]}`},
		{"not_for_one_link", analytics("summary", rng+"&link_id=lnk_a"),
			`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":2,"unique_clicks":1}`},
		{"not_in_another_zone", analytics("timeseries", rng+"&tz=America/New_York"),
			`{"interval":"day","tz":"America/New_York","items":[{"date":"2026-11-26","clicks":2},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":3}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := get(t, srv, key, tt.path)
			if a.status != http.StatusOK {
				t.Fatalf("status %d, body %s", a.status, a.body)
			}
			if diff := gocmp.Diff(mustJSON(t, tt.want), a.json(t)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHourlyTimeseries(t *testing.T) {
	srv := newServer(t, []elidotest.Click{
		{TS: ts(t, "2026-03-28T23:30:00Z"), LinkID: "l"}, // 00:30 on 2026-03-29 in Warsaw
		{TS: ts(t, "2026-03-29T01:00:00Z"), LinkID: "l"}, // 03:00 CEST, the third hour of the day
		{TS: ts(t, "2026-03-29T21:59:59Z"), LinkID: "l"}, // the last hour
	})
	a := get(t, srv, key, analytics("timeseries", "from=2026-03-29&to=2026-03-29&tz=Europe/Warsaw&interval=hour"))
	var got struct {
		Interval, TZ string
		Items        []struct {
			TS     string `json:"ts"`
			Clicks int64  `json:"clicks"`
		}
	}
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Interval != "hour" || got.TZ != "Europe/Warsaw" || len(got.Items) != 23 {
		t.Fatalf("interval %q, tz %q, %d items; want hour, Europe/Warsaw, 23", got.Interval, got.TZ, len(got.Items))
	}
	nonZero := map[string]int64{}
	for _, it := range got.Items {
		if it.Clicks > 0 {
			nonZero[it.TS] = it.Clicks
		}
	}
	want := map[string]int64{"2026-03-28T23:00:00.000Z": 1, "2026-03-29T01:00:00.000Z": 1, "2026-03-29T21:00:00.000Z": 1}
	if diff := gocmp.Diff(want, nonZero); diff != "" {
		t.Errorf("non-zero hours (-want +got):\n%s", diff)
	}
	if got.Items[0].TS != "2026-03-28T23:00:00.000Z" || got.Items[22].TS != "2026-03-29T21:00:00.000Z" {
		t.Errorf("hours run from %s to %s", got.Items[0].TS, got.Items[22].TS)
	}
}

func TestDSTDaysInWarsaw(t *testing.T) {
	srv := newServer(t, []elidotest.Click{
		{TS: ts(t, "2026-03-28T22:59:59Z"), LinkID: "l"}, // 23:59:59 CET on the 28th
		{TS: ts(t, "2026-03-28T23:30:00Z"), LinkID: "l"}, // 00:30 CET on the 29th
		{TS: ts(t, "2026-03-29T21:59:59Z"), LinkID: "l"}, // 23:59:59 CEST on the 29th
		{TS: ts(t, "2026-03-29T22:00:00Z"), LinkID: "l"}, // 00:00 CEST on the 30th
		{TS: ts(t, "2026-10-24T22:00:00Z"), LinkID: "l"}, // 00:00 CEST on the 25th
		{TS: ts(t, "2026-10-25T00:30:00Z"), LinkID: "l"}, // 02:30 CEST
		{TS: ts(t, "2026-10-25T01:30:00Z"), LinkID: "l"}, // 02:30 CET, the same wall time again
		{TS: ts(t, "2026-10-25T22:59:59Z"), LinkID: "l"}, // 23:59:59 CET on the 25th
		{TS: ts(t, "2026-10-25T23:00:00Z"), LinkID: "l"}, // 00:00 CET on the 26th
	})
	tests := []struct {
		name, query, want string
	}{
		{
			name:  "spring_forward",
			query: "from=2026-03-28&to=2026-03-30&tz=Europe/Warsaw",
			want:  `{"interval":"day","tz":"Europe/Warsaw","items":[{"date":"2026-03-28","clicks":1},{"date":"2026-03-29","clicks":2},{"date":"2026-03-30","clicks":1}]}`,
		},
		{
			name:  "fall_back",
			query: "from=2026-10-24&to=2026-10-26&tz=Europe/Warsaw",
			want:  `{"interval":"day","tz":"Europe/Warsaw","items":[{"date":"2026-10-24","clicks":0},{"date":"2026-10-25","clicks":4},{"date":"2026-10-26","clicks":1}]}`,
		},
		{
			name:  "same_clicks_in_utc",
			query: "from=2026-10-24&to=2026-10-26&tz=UTC",
			want:  `{"interval":"day","tz":"UTC","items":[{"date":"2026-10-24","clicks":1},{"date":"2026-10-25","clicks":4},{"date":"2026-10-26","clicks":0}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := get(t, srv, key, analytics("timeseries", tt.query))
			if diff := gocmp.Diff(mustJSON(t, tt.want), a.json(t)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	srv := newServer(t, nil)
	tests := []struct {
		name   string
		bearer string
		path   string
		status int
		code   string
		msg    string
	}{
		{"wrong_key", "sk_wrong", analytics("summary", "from=2026-11-26&to=2026-11-28"), 401, "unauthorized", "invalid or missing API key"},
		{"no_key", "", analytics("summary", "from=2026-11-26&to=2026-11-28"), 401, "unauthorized", "invalid or missing API key"},
		{"other_workspace", key, "/workspaces/43/analytics/summary?from=2026-11-26&to=2026-11-28", 404, "not_found", "workspace 43 not found"},
		{"unknown_endpoint", key, analytics("breakdown/city", "from=2026-11-26&to=2026-11-28"), 404, "not_found", "no such endpoint: /v1/workspaces/42/analytics/breakdown/city"},
		{"outside_analytics", key, "/workspaces/42/links", 404, "not_found", "no such endpoint: /v1/workspaces/42/links"},
		{"malformed_date", key, analytics("summary", "from=2026-11-31&to=2026-12-01"), 400, "invalid_parameter", `from: "2026-11-31" is not a date: no such day in the calendar`},
		{"missing_to", key, analytics("timeseries", "from=2026-11-26"), 400, "invalid_parameter", "to is required (YYYY-MM-DD)"},
		{"unknown_zone", key, analytics("summary", "from=2026-11-26&to=2026-11-28&tz=Mars/Olympus"), 400, "invalid_parameter", `unknown time zone "Mars/Olympus"`},
		{"local_is_not_a_zone", key, analytics("summary", "from=2026-11-26&to=2026-11-28&tz=Local"), 400, "invalid_parameter", `unknown time zone "Local"`},
		{"from_after_to", key, analytics("breakdown/country", "from=2026-11-28&to=2026-11-26"), 400, "invalid_parameter", "from 2026-11-28 is after to 2026-11-26"},
		{"bad_interval", key, analytics("timeseries", "from=2026-11-26&to=2026-11-28&interval=week"), 400, "invalid_parameter", `interval must be day or hour, got "week"`},
		{"limit_over_1000", key, analytics("breakdown/link", "from=2026-11-26&to=2026-11-28&limit=1001"), 400, "invalid_parameter", `limit must be from 1 to 1000, got "1001"`},
		{"limit_zero", key, analytics("clicks/recent", "limit=0"), 400, "invalid_parameter", `limit must be from 1 to 1000, got "0"`},
		{"bad_cursor", key, analytics("breakdown/link", "from=2026-11-26&to=2026-11-28&cursor=xyz"), 400, "invalid_parameter", "invalid cursor"},
		{"bad_recent_cursor", key, analytics("clicks/recent", "cursor=xyz"), 400, "invalid_parameter", "invalid cursor"},
		{"recent_from_not_rfc3339", key, analytics("clicks/recent", "from=2026-11-26"), 400, "invalid_parameter", `from must be an RFC 3339 instant, got "2026-11-26"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := get(t, srv, tt.bearer, tt.path)
			if a.status != tt.status {
				t.Errorf("status %d, want %d", a.status, tt.status)
			}
			want := map[string]any{"error": tt.msg, "code": tt.code, "request_id": fmt.Sprintf("req_%06d", i+1)}
			if diff := gocmp.Diff(any(want), a.json(t)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscapedWorkspaceID(t *testing.T) {
	srv := elidotest.NewServer("team/a b", key, clicks(t))
	t.Cleanup(srv.Close)
	a := get(t, srv, key, "/workspaces/team%2Fa%20b/analytics/summary?from=2026-11-26&to=2026-11-28")
	if a.status != http.StatusOK {
		t.Errorf("status %d, body %s", a.status, a.body)
	}
}

func TestHeaders(t *testing.T) {
	srv := newServer(t, clicks(t))
	now := time.Date(2026, 11, 29, 3, 0, 30, 0, time.UTC)
	srv.SetNow(func() time.Time { return now })
	for i := 1; i <= 3; i++ {
		path := analytics("summary", "from=2026-11-26&to=2026-11-28")
		if i == 2 {
			path = analytics("summary", "from=bad") // errors carry the headers too
		}
		a := get(t, srv, key, path)
		got := map[string]string{}
		for _, h := range []string{"X-Request-ID", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			got[h] = a.header.Get(h)
		}
		want := map[string]string{
			"X-Request-ID":          fmt.Sprintf("req_%06d", i),
			"X-RateLimit-Limit":     "600",
			"X-RateLimit-Remaining": strconv.Itoa(600 - i),
			"X-RateLimit-Reset":     strconv.FormatInt(time.Date(2026, 11, 29, 3, 1, 0, 0, time.UTC).Unix(), 10),
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("request %d headers (-want +got):\n%s", i, diff)
		}
	}
}

func TestLinkBreakdownPaging(t *testing.T) {
	var cs []elidotest.Click
	day := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i := range 250 {
		for range i%3 + 1 {
			cs = append(cs, elidotest.Click{TS: day, LinkID: fmt.Sprintf("lnk_%03d", i)})
		}
	}
	srv := newServer(t, cs)

	type page struct {
		Items []struct {
			LinkID string `json:"link_id"`
			Clicks int64  `json:"clicks"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	var sizes []int
	seen := map[string]bool{}
	last := int64(1 << 62)
	cursor := ""
	for range 10 {
		q := "from=2026-11-28&to=2026-11-28"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		var p page
		if err := json.Unmarshal(get(t, srv, key, analytics("breakdown/link", q)).body, &p); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Items))
		for _, it := range p.Items {
			if seen[it.LinkID] {
				t.Errorf("link %s on two pages", it.LinkID)
			}
			if it.Clicks > last {
				t.Errorf("link %s has %d clicks after one with %d: not highest first", it.LinkID, it.Clicks, last)
			}
			seen[it.LinkID], last = true, it.Clicks
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if diff := gocmp.Diff([]int{100, 100, 50}, sizes); diff != "" {
		t.Errorf("page sizes with the default limit (-want +got):\n%s", diff)
	}
	if len(seen) != 250 {
		t.Errorf("saw %d links, want 250", len(seen))
	}
}

func TestRecentClicks(t *testing.T) {
	base := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var cs []elidotest.Click
	for i := range 25 {
		cs = append(cs, elidotest.Click{TS: base.Add(time.Duration(i) * time.Minute), LinkID: fmt.Sprintf("lnk_%02d", i), CountryCode: "PL"})
	}
	// Two clicks in the same millisecond: the cursor must not lose one.
	cs = append(cs, elidotest.Click{TS: base.Add(10*time.Minute + 123*time.Millisecond), LinkID: "twin_1"})
	cs = append(cs, elidotest.Click{TS: base.Add(10*time.Minute + 123*time.Millisecond), LinkID: "twin_2"})
	srv := newServer(t, cs)

	type page struct {
		Items []struct {
			TS          string `json:"ts"`
			LinkID      string `json:"link_id"`
			CountryCode string `json:"country_code"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	read := func(q string) page {
		var p page
		a := get(t, srv, key, analytics("clicks/recent", q))
		if a.status != http.StatusOK {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		if err := json.Unmarshal(a.body, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("newest_first_in_pages", func(t *testing.T) {
		var ids []string
		cursor := ""
		for pages := 0; ; pages++ {
			q := "limit=4&from=2026-11-28T00:05:00Z&to=2026-11-28T00:20:00Z"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p := read(q)
			for _, it := range p.Items {
				ids = append(ids, it.LinkID)
			}
			if pages == 0 && len(cs) > 0 {
				// Late data arriving while paging does not shift later pages.
				srv.SetClicks(append(cs, elidotest.Click{TS: base.Add(19 * time.Minute), LinkID: "late"}))
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		want := []string{"lnk_19", "lnk_18", "lnk_17", "lnk_16", "lnk_15", "lnk_14", "lnk_13", "lnk_12", "lnk_11",
			"twin_2", "twin_1", "lnk_10", "lnk_09", "lnk_08", "lnk_07", "lnk_06", "lnk_05"}
		if diff := gocmp.Diff(want, ids); diff != "" {
			t.Errorf("links (-want +got):\n%s", diff)
		}
	})
	t.Run("timestamps_are_utc_milliseconds", func(t *testing.T) {
		p := read("limit=1&to=2026-11-28T00:10:00.124Z")
		if len(p.Items) != 1 || p.Items[0].TS != "2026-11-28T00:10:00.123Z" {
			t.Errorf("items %+v, want one at 2026-11-28T00:10:00.123Z", p.Items)
		}
	})
	t.Run("last_page_cursor_is_null", func(t *testing.T) {
		a := get(t, srv, key, analytics("clicks/recent", "limit=1000"))
		if !strings.Contains(string(a.body), `"next_cursor":null`) {
			t.Errorf("body does not end the paging with a null cursor: %.200s", a.body)
		}
	})
}

func TestFaults(t *testing.T) {
	const summary = "from=2026-11-26&to=2026-11-28"
	tests := []struct {
		name     string
		fault    elidotest.Fault
		endpoint string
		status   int
		headers  map[string]string // "" means absent
		body     string            // JSON, or the text the body must contain
	}{
		{
			name:     "rate_limited",
			fault:    elidotest.Fault{Kind: elidotest.RateLimited, RetryAfter: 1500 * time.Millisecond},
			endpoint: "summary", status: 429,
			headers: map[string]string{"Retry-After": "2", "X-RateLimit-Scope": "workspace", "X-RateLimit-Remaining": "0"},
			body:    `{"error":"rate limit exceeded for this workspace","code":"rate_limited","request_id":"req_000001"}`,
		},
		{
			name:     "rate_limited_body_shape",
			fault:    elidotest.Fault{Kind: elidotest.RateLimitedBody, RetryAfter: 12 * time.Second},
			endpoint: "summary", status: 429,
			headers: map[string]string{"Retry-After": "", "X-RateLimit-Reset": "", "X-RateLimit-Scope": "workspace"},
			body:    `{"error":"rate_limited","message":"Too many requests, slow down","retry_after_seconds":12}`,
		},
		{
			name:     "rate_limited_reset_only",
			fault:    elidotest.Fault{Kind: elidotest.RateLimitedReset, RetryAfter: 20 * time.Second},
			endpoint: "summary", status: 429,
			headers: map[string]string{"Retry-After": "", "X-RateLimit-Reset": strconv.FormatInt(time.Date(2026, 11, 29, 3, 0, 20, 0, time.UTC).Unix(), 10)},
		},
		{
			name:     "server_error_default_500",
			fault:    elidotest.Fault{Kind: elidotest.ServerError},
			endpoint: "summary", status: 500,
			body: `{"error":"the analytics backend failed: internal server error","code":"internal_error","request_id":"req_000001"}`,
		},
		{
			name:     "bad_gateway_is_html",
			fault:    elidotest.Fault{Kind: elidotest.ServerError, Status: 502},
			endpoint: "summary", status: 502,
			headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Request-ID": "req_000001"},
			body:    "<h1>502 Bad Gateway</h1>",
		},
		{
			name:     "unauthorized",
			fault:    elidotest.Fault{Kind: elidotest.Unauthorized},
			endpoint: "summary", status: 401,
			body: `{"error":"API key revoked","code":"unauthorized","request_id":"req_000001"}`,
		},
		{
			name:     "forbidden",
			fault:    elidotest.Fault{Kind: elidotest.Forbidden},
			endpoint: "summary", status: 403,
			body: `{"error":"the API key lacks the analytics:read scope","code":"forbidden","request_id":"req_000001"}`,
		},
		{
			name:     "link_breakdown_not_found",
			fault:    elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"},
			endpoint: "breakdown/link", status: 404,
			body: `{"error":"not found","code":"not_found","request_id":"req_000001"}`,
		},
		{
			name:     "missing_field_in_summary",
			fault:    elidotest.Fault{Kind: elidotest.MissingField, Field: "clicks"},
			endpoint: "summary", status: 200,
			body: `{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","unique_clicks":4}`,
		},
		{
			name:     "missing_field_in_items",
			fault:    elidotest.Fault{Kind: elidotest.MissingField, Field: "clicks"},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26"},{"date":"2026-11-27"},{"date":"2026-11-28"}]}`,
		},
		{
			name:     "null_field",
			fault:    elidotest.Fault{Kind: elidotest.NullField, Field: "date"},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":null,"clicks":3},{"date":null,"clicks":0},{"date":null,"clicks":2}]}`,
		},
		{
			name:     "summary_off",
			fault:    elidotest.Fault{Kind: elidotest.SummaryOff, Offset: -2},
			endpoint: "summary", status: 200,
			body: `{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":3,"unique_clicks":4}`,
		},
		{
			name:     "missing_day",
			fault:    elidotest.Fault{Kind: elidotest.MissingDay},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":3},{"date":"2026-11-28","clicks":2}]}`,
		},
		{
			name:     "reversed_days",
			fault:    elidotest.Fault{Kind: elidotest.ReversedDays},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-28","clicks":2},{"date":"2026-11-27","clicks":0},{"date":"2026-11-26","clicks":3}]}`,
		},
		{
			name:     "huge_count",
			fault:    elidotest.Fault{Kind: elidotest.HugeCount},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":9223372036854775807},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":2}]}`,
		},
		{
			name:     "echo_authorization",
			fault:    elidotest.Fault{Kind: elidotest.EchoAuthorization},
			endpoint: "summary", status: 503,
			headers: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			body:    "<pre>Authorization: Bearer " + key + "</pre>",
		},
		{
			name:     "duplicate_day",
			fault:    elidotest.Fault{Kind: elidotest.DuplicateDay},
			endpoint: "timeseries", status: 200,
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":3},{"date":"2026-11-26","clicks":3},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":2}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, clicks(t))
			srv.SetNow(func() time.Time { return time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC) })
			srv.SetFaults(tt.fault)
			a := get(t, srv, key, analytics(tt.endpoint, summary))
			if a.status != tt.status {
				t.Errorf("status %d, want %d", a.status, tt.status)
			}
			for h, v := range tt.headers {
				if got := a.header.Get(h); got != v {
					t.Errorf("header %s is %q, want %q", h, got, v)
				}
			}
			switch {
			case strings.HasPrefix(tt.body, "{"):
				if diff := gocmp.Diff(mustJSON(t, tt.body), a.json(t)); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			case !strings.Contains(string(a.body), tt.body):
				t.Errorf("body %q does not contain %q", a.body, tt.body)
			}
		})
	}
}

func TestTruncatedIsNotJSON(t *testing.T) {
	srv := newServer(t, clicks(t))
	srv.SetFaults(elidotest.Fault{Kind: elidotest.Truncated})
	a := get(t, srv, key, analytics("timeseries", "from=2026-11-26&to=2026-11-28"))
	if a.status != 200 || json.Valid(a.body) || len(a.body) == 0 {
		t.Errorf("status %d, body %q: want 200 and a cut-short JSON body", a.status, a.body)
	}
}

func TestRepeatCursor(t *testing.T) {
	var cs []elidotest.Click
	for i := range 3 {
		cs = append(cs, elidotest.Click{TS: time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC), LinkID: fmt.Sprint(i)})
	}
	srv := newServer(t, cs)
	srv.SetFaults(elidotest.Fault{Kind: elidotest.RepeatCursor})
	var p struct {
		NextCursor *string `json:"next_cursor"`
	}
	json.Unmarshal(get(t, srv, key, analytics("breakdown/link", "from=2026-11-28&to=2026-11-28&limit=1")).body, &p)
	if p.NextCursor == nil {
		t.Fatal("first page has no cursor")
	}
	first := *p.NextCursor
	json.Unmarshal(get(t, srv, key, analytics("breakdown/link", "from=2026-11-28&to=2026-11-28&limit=1&cursor="+first)).body, &p)
	if p.NextCursor == nil || *p.NextCursor != first {
		t.Errorf("second page's cursor is %v, want the repeated %q", p.NextCursor, first)
	}
}

func TestFaultCountsAndScope(t *testing.T) {
	srv := newServer(t, clicks(t))
	srv.SetFaults(
		elidotest.Fault{Kind: elidotest.ServerError, Status: 503, Endpoint: "timeseries", Times: 2},
		elidotest.Fault{Kind: elidotest.SummaryOff, Offset: 100}, // touches summary only
		elidotest.Fault{Kind: elidotest.Forbidden, Times: 1},     // anything else, once
	)
	q := "from=2026-11-26&to=2026-11-28"
	var got []int
	for _, e := range []string{"timeseries", "breakdown/country", "timeseries", "timeseries", "breakdown/country", "summary"} {
		got = append(got, get(t, srv, key, analytics(e, q)).status)
	}
	if diff := gocmp.Diff([]int{503, 403, 503, 200, 200, 200}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if body := string(get(t, srv, key, analytics("summary", q)).body); !strings.Contains(body, `"clicks":105`) {
		t.Errorf("summary %s is not off by 100", body)
	}
	srv.SetFaults()
	if body := string(get(t, srv, key, analytics("summary", q)).body); !strings.Contains(body, `"clicks":5`) {
		t.Errorf("summary %s after SetFaults(): faults not cleared", body)
	}
}

func TestRequestsAndLog(t *testing.T) {
	srv := newServer(t, nil)
	get(t, srv, key, analytics("summary", "from=2026-11-26&to=2026-11-28"))
	get(t, srv, "wrong", analytics("timeseries", "from=2026-11-26&to=2026-11-28&tz=Europe%2FWarsaw"))
	get(t, srv, key, analytics("breakdown/link", "from=2026-11-26&to=2026-11-28&limit=1000"))
	get(t, srv, key, analytics("timeseries", "from=2026-11-26&to=2026-11-26&interval=hour"))
	wantCounts := map[string]int{"summary": 1, "timeseries": 2, "breakdown/link": 1}
	if diff := gocmp.Diff(wantCounts, srv.Requests()); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
	wantLog := []string{
		"/v1/workspaces/42/analytics/summary?from=2026-11-26&to=2026-11-28",
		"/v1/workspaces/42/analytics/timeseries?from=2026-11-26&to=2026-11-28&tz=Europe%2FWarsaw",
		"/v1/workspaces/42/analytics/breakdown/link?from=2026-11-26&to=2026-11-28&limit=1000",
		"/v1/workspaces/42/analytics/timeseries?from=2026-11-26&to=2026-11-26&interval=hour",
	}
	if diff := gocmp.Diff(wantLog, srv.RequestLog()); diff != "" {
		t.Errorf("RequestLog (-want +got):\n%s", diff)
	}
}

func TestSetClicksIsLateData(t *testing.T) {
	cs := clicks(t)
	srv := newServer(t, cs)
	q := analytics("summary", "from=2026-11-27&to=2026-11-27")
	if body := string(get(t, srv, key, q).body); !strings.Contains(body, `"clicks":0`) {
		t.Fatalf("before: %s", body)
	}
	srv.SetClicks(append(cs, elidotest.Click{TS: ts(t, "2026-11-27T12:00:00Z"), LinkID: "late"}))
	if body := string(get(t, srv, key, q).body); !strings.Contains(body, `"clicks":1`) {
		t.Errorf("after the late click: %s", body)
	}
}

// TestConcurrentChanges changes faults and clicks while requests are
// served; run with -race.
func TestConcurrentChanges(t *testing.T) {
	srv := newServer(t, clicks(t))
	q := analytics("timeseries", "from=2026-11-26&to=2026-11-28")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				req, _ := http.NewRequest(http.MethodGet, srv.URL()+q, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			srv.SetFaults(elidotest.Fault{Kind: elidotest.ServerError, Times: i % 3})
			srv.SetClicks(clicks(t)[:i%5])
			srv.Requests()
			srv.RequestLog()
		}
	})
	wg.Wait()
	if n := srv.Requests()["timeseries"]; n != 80 {
		t.Errorf("counted %d requests, want 80", n)
	}
}

func TestCloseCutsSlowAnswers(t *testing.T) {
	srv := elidotest.NewServer(workspace, key, nil)
	srv.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Hour})
	arrived := srv.Arrived("summary") // registered before the request
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL()+analytics("summary", "from=2026-11-26&to=2026-11-28"), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// Every wait is bounded: a fake that failed to cut its answer fails
	// the test instead of hanging it.
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still waiting after 10s", what)
		}
	}
	wait(arrived, "the slow request to arrive")
	closed := make(chan struct{})
	go func() {
		srv.Close() // returns only once the slow answer has ended
		close(closed)
	}()
	wait(closed, "Close to cut the slow answer")
	answered := make(chan struct{})
	go func() { <-done; close(answered) }()
	wait(answered, "the client to get its answer")
	srv.Close()                                               // twice is harmless
	wait(srv.Arrived("summary"), "Arrived after the request") // already closed
}

func TestRedirectFault(t *testing.T) {
	srv := newServer(t, clicks(t))
	srv.SetFaults(elidotest.Fault{Kind: elidotest.Redirect, Status: http.StatusTemporaryRedirect, Location: "http://other.example:8080/v1"})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+analytics("summary", "from=2026-11-26&to=2026-11-28"), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "http://other.example:8080/v1" + analytics("summary", "from=2026-11-26&to=2026-11-28")
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != want {
		t.Errorf("answer %d Location %q, want 307 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

// TestLinkBreakdownAfterSetClicks: the breakdown's ranking is kept between
// pages, and late data still shows in the next page asked for.
func TestLinkBreakdownAfterSetClicks(t *testing.T) {
	day := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	cs := []elidotest.Click{{TS: day, LinkID: "a"}, {TS: day, LinkID: "b"}, {TS: day, LinkID: "b"}}
	srv := newServer(t, cs)
	type page struct {
		Items []struct {
			LinkID string `json:"link_id"`
			Clicks int64  `json:"clicks"`
		} `json:"items"`
	}
	read := func() page {
		var p page
		if err := json.Unmarshal(get(t, srv, key, analytics("breakdown/link", "from=2026-11-28&to=2026-11-28&limit=1")).body, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for range 2 { // the second is served from the kept ranking
		if p := read(); len(p.Items) != 1 || p.Items[0].LinkID != "b" || p.Items[0].Clicks != 2 {
			t.Fatalf("first page %+v, want b with 2 clicks", p.Items)
		}
	}
	srv.SetClicks(append(cs, elidotest.Click{TS: day, LinkID: "a"}, elidotest.Click{TS: day, LinkID: "a"}))
	if p := read(); len(p.Items) != 1 || p.Items[0].LinkID != "a" || p.Items[0].Clicks != 3 {
		t.Errorf("first page after SetClicks %+v, want a with 3 clicks", p.Items)
	}
}

// RepeatAtPageBoundary serves, on each page after the first, the click the
// page before ended with again in place of the next one: as many clicks
// in all, one repeated and one lost per boundary.
func TestRecentClicksRepeatAtPageBoundary(t *testing.T) {
	base := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var cs []elidotest.Click
	for i := range 10 {
		cs = append(cs, elidotest.Click{TS: base.Add(time.Duration(i) * time.Minute), LinkID: fmt.Sprintf("lnk_%02d", i), CountryCode: "PL"})
	}
	srv := newServer(t, cs)
	srv.SetFaults(elidotest.Fault{Kind: elidotest.RepeatAtPageBoundary})
	var ids []string
	cursor := ""
	for {
		q := "limit=4"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		a := get(t, srv, key, analytics("clicks/recent", q))
		var p struct {
			Items []struct {
				LinkID string `json:"link_id"`
			} `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(a.body, &p); err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			ids = append(ids, it.LinkID)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	want := []string{"lnk_09", "lnk_08", "lnk_07", "lnk_06", "lnk_06", "lnk_04", "lnk_03", "lnk_02", "lnk_02", "lnk_00"}
	if diff := gocmp.Diff(want, ids); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}
