package elido_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// novemberClicks: three days in UTC, the middle one without clicks, and a
// click just outside each end.
func novemberClicks(t *testing.T) []elidotest.Click {
	return []elidotest.Click{
		{TS: ts(t, "2026-11-25T23:59:59.999Z"), LinkID: "lnk_a", CountryCode: "PL"}, // before the range
		{TS: ts(t, "2026-11-26T00:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-26T10:15:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-26T23:59:59.999Z"), LinkID: "lnk_b", CountryCode: "DE"},
		{TS: ts(t, "2026-11-28T00:30:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-28T09:00:00Z"), LinkID: "lnk_b", CountryCode: ""},
		{TS: ts(t, "2026-11-28T09:59:59Z"), LinkID: "lnk_c", CountryCode: "US"},
		{TS: ts(t, "2026-11-28T23:00:00Z"), LinkID: "lnk_c", CountryCode: "US"},
		{TS: ts(t, "2026-11-28T23:59:59.999Z"), LinkID: "lnk_c", CountryCode: "US"},
		{TS: ts(t, "2026-11-29T00:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"}, // after the range
	}
}

func TestReadsEveryEndpoint(t *testing.T) {
	f := newFixture(t, novemberClicks(t), nil)
	ctx := t.Context()
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")

	t.Run("summary", func(t *testing.T) {
		got, err := f.client.Summary(ctx, from, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		want := elido.Summary{From: from, To: to, TZ: "UTC", Clicks: 8, UniqueClicks: 4}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("Summary (-want +got):\n%s", diff)
		}
	})
	t.Run("timeseries_includes_zero_days", func(t *testing.T) {
		got, err := f.client.Timeseries(ctx, from, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		want := []elido.DayCount{{Date: from, Clicks: 3}, {Date: from.AddDays(1), Clicks: 0}, {Date: to, Clicks: 5}}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("Timeseries (-want +got):\n%s", diff)
		}
	})
	t.Run("empty_tz_is_utc", func(t *testing.T) {
		got, err := f.client.Timeseries(ctx, from, to, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Errorf("got %d days, want 3", len(got))
		}
	})
	t.Run("link_timeseries", func(t *testing.T) {
		got, err := f.client.LinkTimeseries(ctx, from, to, time.UTC, "lnk_a")
		if err != nil {
			t.Fatal(err)
		}
		want := []elido.DayCount{{Date: from, Clicks: 2}, {Date: from.AddDays(1), Clicks: 0}, {Date: to, Clicks: 1}}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("LinkTimeseries (-want +got):\n%s", diff)
		}
	})
	t.Run("hourly_timeseries", func(t *testing.T) {
		got, err := f.client.HourlyTimeseries(ctx, to, time.UTC, "")
		if err != nil {
			t.Fatal(err)
		}
		want := hours(ts(t, "2026-11-28T00:00:00Z"), 24, map[int]int64{0: 1, 9: 2, 23: 2})
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("HourlyTimeseries (-want +got):\n%s", diff)
		}
	})
	t.Run("hourly_timeseries_of_a_link", func(t *testing.T) {
		got, err := f.client.HourlyTimeseries(ctx, to, time.UTC, "lnk_c")
		if err != nil {
			t.Fatal(err)
		}
		want := hours(ts(t, "2026-11-28T00:00:00Z"), 24, map[int]int64{9: 1, 23: 2})
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("HourlyTimeseries (-want +got):\n%s", diff)
		}
	})
	t.Run("link_breakdown_highest_first", func(t *testing.T) {
		got, err := f.client.LinkBreakdown(ctx, from, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		want := []elido.LinkCount{{"lnk_a", 3}, {"lnk_c", 3}, {"lnk_b", 2}}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("LinkBreakdown (-want +got):\n%s", diff)
		}
	})
	t.Run("country_breakdown_keeps_unknown_country", func(t *testing.T) {
		got, err := f.client.CountryBreakdown(ctx, from, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		want := []elido.CountryCount{{"PL", 3}, {"US", 3}, {"", 1}, {"DE", 1}}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("CountryBreakdown (-want +got):\n%s", diff)
		}
	})
	t.Run("requests_counted_per_endpoint", func(t *testing.T) {
		want := map[string]int{"summary": 1, "timeseries": 5, "breakdown/link": 1, "breakdown/country": 1}
		if diff := gocmp.Diff(want, f.client.Requests()); diff != "" {
			t.Errorf("client Requests (-want +got):\n%s", diff)
		}
		if diff := gocmp.Diff(want, f.srv.Requests()); diff != "" {
			t.Errorf("server Requests (-want +got):\n%s", diff)
		}
	})
}

// hours returns n hour buckets from start, with the given counts by index.
func hours(start time.Time, n int, counts map[int]int64) []elido.HourCount {
	hs := make([]elido.HourCount, n)
	for i := range hs {
		hs[i] = elido.HourCount{Start: start.Add(time.Duration(i) * time.Hour), Clicks: counts[i]}
	}
	return hs
}

func TestDSTDaysInWarsaw(t *testing.T) {
	clicks := []elidotest.Click{
		// Spring forward, 2026-03-29 02:00 CET → 03:00 CEST: a 23-hour day
		// from 2026-03-28T23:00Z to 2026-03-29T22:00Z.
		{TS: ts(t, "2026-03-28T22:59:59Z"), LinkID: "l"}, // 23:59:59 on the 28th
		{TS: ts(t, "2026-03-28T23:30:00Z"), LinkID: "l"}, // 00:30 on the 29th
		{TS: ts(t, "2026-03-29T00:59:00Z"), LinkID: "l"}, // 01:59 CET, just before the jump
		{TS: ts(t, "2026-03-29T01:00:00Z"), LinkID: "l"}, // 03:00 CEST
		{TS: ts(t, "2026-03-29T21:59:59Z"), LinkID: "l"}, // 23:59:59 CEST
		{TS: ts(t, "2026-03-29T22:00:00Z"), LinkID: "l"}, // 00:00 on the 30th
		// Fall back, 2026-10-25 03:00 CEST → 02:00 CET: a 25-hour day from
		// 2026-10-24T22:00Z to 2026-10-25T23:00Z.
		{TS: ts(t, "2026-10-24T21:59:59Z"), LinkID: "l"}, // 23:59:59 on the 24th
		{TS: ts(t, "2026-10-24T22:00:00Z"), LinkID: "l"}, // 00:00 on the 25th
		{TS: ts(t, "2026-10-25T00:30:00Z"), LinkID: "l"}, // 02:30 CEST, the first one
		{TS: ts(t, "2026-10-25T01:30:00Z"), LinkID: "l"}, // 02:30 CET, the second one
		{TS: ts(t, "2026-10-25T22:59:59Z"), LinkID: "l"}, // 23:59:59 CET
		{TS: ts(t, "2026-10-25T23:00:00Z"), LinkID: "l"}, // 00:00 on the 26th
	}
	f := newFixture(t, clicks, nil)
	tz := zone(t, "Europe/Warsaw")

	tests := []struct {
		name      string
		from, to  string
		want      []int64 // per day
		hourlyDay string
		hourStart string
		hourly    map[int]int64
		hourCount int
	}{
		{
			name: "spring_forward_day_has_23_hours",
			from: "2026-03-28", to: "2026-03-30",
			want:      []int64{1, 4, 1},
			hourlyDay: "2026-03-29", hourStart: "2026-03-28T23:00:00Z", hourCount: 23,
			hourly: map[int]int64{0: 1, 1: 1, 2: 1, 22: 1},
		},
		{
			name: "fall_back_day_has_25_hours",
			from: "2026-10-24", to: "2026-10-26",
			want:      []int64{1, 4, 1},
			hourlyDay: "2026-10-25", hourStart: "2026-10-24T22:00:00Z", hourCount: 25,
			hourly: map[int]int64{0: 1, 2: 1, 3: 1, 24: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := date(t, tt.from), date(t, tt.to)
			got, err := f.client.Timeseries(t.Context(), from, to, tz)
			if err != nil {
				t.Fatal(err)
			}
			var want []elido.DayCount
			for i, n := range tt.want {
				want = append(want, elido.DayCount{Date: from.AddDays(i), Clicks: n})
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("Timeseries (-want +got):\n%s", diff)
			}

			gotHours, err := f.client.HourlyTimeseries(t.Context(), date(t, tt.hourlyDay), tz, "")
			if err != nil {
				t.Fatal(err)
			}
			wantHours := hours(ts(t, tt.hourStart), tt.hourCount, tt.hourly)
			if diff := gocmp.Diff(wantHours, gotHours); diff != "" {
				t.Errorf("HourlyTimeseries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHalfHourZoneHours(t *testing.T) {
	// Asia/Kolkata is UTC+05:30: its hours start at :30 UTC.
	f := newFixture(t, []elidotest.Click{{TS: ts(t, "2026-11-27T18:30:00Z"), LinkID: "l"}}, nil)
	got, err := f.client.HourlyTimeseries(t.Context(), date(t, "2026-11-28"), zone(t, "Asia/Kolkata"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := hours(ts(t, "2026-11-27T18:30:00Z"), 24, map[int]int64{0: 1})
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("HourlyTimeseries (-want +got):\n%s", diff)
	}
}

// manyLinks gives link i (from 0 to n-1) i%7+1 clicks on 2026-11-28.
func manyLinks(n int) ([]elidotest.Click, []elido.LinkCount) {
	var clicks []elidotest.Click
	var want []elido.LinkCount
	day := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("lnk_%05d", i)
		for j := range i%7 + 1 {
			clicks = append(clicks, elidotest.Click{TS: day.Add(time.Duration(j) * time.Second), LinkID: id, CountryCode: "PL"})
		}
		want = append(want, elido.LinkCount{LinkID: id, Clicks: int64(i%7 + 1)})
	}
	slices.SortFunc(want, func(a, b elido.LinkCount) int {
		return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), cmp.Compare(a.LinkID, b.LinkID))
	})
	return clicks, want
}

func TestLinkBreakdownPaging(t *testing.T) {
	tests := []struct {
		name  string
		links int
		pages int
	}{
		{"no_links_one_page", 0, 1},
		{"exactly_one_full_page", 1000, 1},
		{"one_more_than_a_page", 1001, 2},
		{"2500_links_three_pages", 2500, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clicks, want := manyLinks(tt.links)
			f := newFixture(t, clicks, nil)
			day := date(t, "2026-11-28")
			got, err := f.client.LinkBreakdown(t.Context(), day, day, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("LinkBreakdown (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(map[string]int{"breakdown/link": tt.pages}, f.client.Requests()); diff != "" {
				t.Errorf("Requests (-want +got):\n%s", diff)
			}
			for i, r := range f.srv.RequestLog() {
				if !strings.Contains(r, "limit=1000") || (i > 0) != strings.Contains(r, "cursor=") {
					t.Errorf("request %d is %s: want limit=1000, and a cursor after the first page", i, r)
				}
			}
		})
	}
}

// LinkBreakdownPages hands over the pages LinkBreakdown reads, in order,
// one at a time; an error from the caller stops the paging there.
// The next page is asked for while the caller works through one.
func TestLinkBreakdownPages(t *testing.T) {
	clicks, want := manyLinks(2500)
	day := date(t, "2026-11-28")
	t.Run("every_page_in_order", func(t *testing.T) {
		f := newFixture(t, clicks, nil)
		var got []elido.LinkCount
		var sizes []int
		err := f.client.LinkBreakdownPages(t.Context(), day, day, time.UTC, func(page []elido.LinkCount) error {
			got, sizes = append(got, page...), append(sizes, len(page))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("links (-want +got):\n%s", diff)
		}
		if diff := gocmp.Diff([]int{1000, 1000, 500}, sizes); diff != "" {
			t.Errorf("page sizes (-want +got):\n%s", diff)
		}
	})
	t.Run("caller_error_stops_paging", func(t *testing.T) {
		f := newFixture(t, clicks, nil)
		err := f.client.LinkBreakdownPages(t.Context(), day, day, time.UTC, func(page []elido.LinkCount) error {
			return elido.LinkTwiceError(page[0].LinkID)
		})
		wantError(t, err, "elido: GET breakdown/link 2026-11-28..2026-11-28: link "+strconv.Quote(want[0].LinkID)+" appears twice")
		// The second page may have been asked for while the first was
		// handed over; no later one is.
		if n := f.client.Requests()["breakdown/link"]; n < 1 || n > 2 {
			t.Errorf("made %d requests, want 1, or 2 with the page read ahead (stop at the caller's error)", n)
		}
	})
}

func TestLinkBreakdownRepeatedCursorIsAnError(t *testing.T) {
	clicks, _ := manyLinks(2500)
	f := newFixture(t, clicks, nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.RepeatCursor})
	day := date(t, "2026-11-28")
	got, err := f.client.LinkBreakdown(t.Context(), day, day, time.UTC)
	wantError(t, err, "elido: GET breakdown/link 2026-11-28..2026-11-28", "page 2 repeats an earlier cursor")
	if got != nil {
		t.Errorf("got %d links with the error, want none", len(got))
	}
	if n := f.client.Requests()["breakdown/link"]; n != 2 {
		t.Errorf("made %d requests, want 2 (stop at the first repeat)", n)
	}
}

func TestLinkBreakdownNotFoundIsDetectable(t *testing.T) {
	f := newFixture(t, novemberClicks(t), nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"})
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")

	_, err := f.client.LinkBreakdown(t.Context(), from, to, time.UTC)
	if !errors.Is(err, elido.ErrNotFound) {
		t.Fatalf("LinkBreakdown error %v does not match ErrNotFound", err)
	}
	var apiErr *elido.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Endpoint != "breakdown/link" {
		t.Errorf("error %#v is not a 404 APIError from breakdown/link", err)
	}
	if n := f.client.Requests()["breakdown/link"]; n != 1 {
		t.Errorf("made %d requests, want 1: a 404 is not retried", n)
	}
	// The fallback the caller takes still works.
	if _, err := f.client.LinkTimeseries(t.Context(), from, to, time.UTC, "lnk_a"); err != nil {
		t.Errorf("LinkTimeseries after the 404: %v", err)
	}
}

// TestMisreadsAreErrors: every way the fake spoils a 200 answer is an error
// that says what was wrong, never a count.
func TestMisreadsAreErrors(t *testing.T) {
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	tests := []struct {
		name     string
		fault    elidotest.Fault
		call     func(context.Context, *elido.Client) (any, error)
		want     []string
		requests int
	}{
		{
			name:  "summary_without_clicks",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "clicks"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Summary(ctx, from, to, time.UTC)
			},
			want:     []string{"GET summary 2026-11-26..2026-11-28", `required field "clicks" is absent or null`, "request_id req_000001"},
			requests: 1,
		},
		{
			name:  "summary_with_null_unique_clicks",
			fault: elidotest.Fault{Kind: elidotest.NullField, Field: "unique_clicks"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Summary(ctx, from, to, time.UTC)
			},
			want:     []string{`required field "unique_clicks" is absent or null`},
			requests: 1,
		},
		{
			name:  "timeseries_item_without_clicks",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "clicks"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{"GET timeseries 2026-11-26..2026-11-28", `required field "items[0].clicks" is absent or null`},
			requests: 1,
		},
		{
			name:  "timeseries_item_with_null_date",
			fault: elidotest.Fault{Kind: elidotest.NullField, Field: "date"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{`"items[0].date" is absent or null`},
			requests: 1,
		},
		{
			name:  "timeseries_without_items",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "items"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{`required field "items" is absent or null`},
			requests: 1,
		},
		{
			name:  "timeseries_without_interval",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "interval"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{`required field "interval" is absent or null`},
			requests: 1,
		},
		{
			name:  "timeseries_missing_a_day",
			fault: elidotest.Fault{Kind: elidotest.MissingDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{"day 2026-11-27 is missing"},
			requests: 1,
		},
		{
			name:  "one_day_timeseries_with_no_items",
			fault: elidotest.Fault{Kind: elidotest.MissingDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, to, to, time.UTC)
			},
			want:     []string{"day 2026-11-28 is missing (the answer has 0 items, for 1 days)"},
			requests: 1,
		},
		{
			name:  "timeseries_with_a_day_twice",
			fault: elidotest.Fault{Kind: elidotest.DuplicateDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Timeseries(ctx, from, to, time.UTC)
			},
			want:     []string{"day 2026-11-26 appears twice"},
			requests: 1,
		},
		{
			name:  "link_timeseries_missing_a_day",
			fault: elidotest.Fault{Kind: elidotest.MissingDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.LinkTimeseries(ctx, from, to, time.UTC, "lnk_a")
			},
			want:     []string{`GET timeseries 2026-11-26..2026-11-28 link "lnk_a"`, "day 2026-11-27 is missing"},
			requests: 1,
		},
		{
			name:  "hourly_missing_an_hour",
			fault: elidotest.Fault{Kind: elidotest.MissingDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.HourlyTimeseries(ctx, to, time.UTC, "")
			},
			want:     []string{"GET timeseries 2026-11-28 hourly", "item 1 starts at 2026-11-28T02:00:00Z, want 2026-11-28T01:00:00Z"},
			requests: 1,
		},
		{
			name:  "hourly_with_an_hour_twice",
			fault: elidotest.Fault{Kind: elidotest.DuplicateDay},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.HourlyTimeseries(ctx, to, time.UTC, "")
			},
			want:     []string{"hour 2026-11-28T00:00:00Z appears twice"},
			requests: 1,
		},
		{
			name:  "hourly_item_without_ts",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "ts"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.HourlyTimeseries(ctx, to, time.UTC, "")
			},
			want:     []string{`required field "items[0].ts" is absent or null`},
			requests: 1,
		},
		{
			name:  "link_breakdown_item_without_link_id",
			fault: elidotest.Fault{Kind: elidotest.MissingField, Field: "link_id"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.LinkBreakdown(ctx, from, to, time.UTC)
			},
			want:     []string{"items[0].link_id: absent or null"},
			requests: 1,
		},
		{
			name:  "country_breakdown_item_with_null_country",
			fault: elidotest.Fault{Kind: elidotest.NullField, Field: "country_code"},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.CountryBreakdown(ctx, from, to, time.UTC)
			},
			want:     []string{`required field "items[0].country_code" is absent or null`},
			requests: 1,
		},
		{
			name:  "truncated_body_retried_once_then_given_up",
			fault: elidotest.Fault{Kind: elidotest.Truncated},
			call: func(ctx context.Context, c *elido.Client) (any, error) {
				return c.Summary(ctx, from, to, time.UTC)
			},
			want:     []string{"gave up after 2 attempts", "unusable response (request_id req_000002)", "unexpected end of JSON input"},
			requests: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, novemberClicks(t), nil)
			f.srv.SetFaults(tt.fault)
			got, err := tt.call(t.Context(), f.client)
			wantError(t, err, tt.want...)
			if !isZero(got) {
				t.Errorf("got %#v with the error, want the zero value", got)
			}
			if n := f.srv.Requests(); sum(n) != tt.requests {
				t.Errorf("made %v requests, want %d", n, tt.requests)
			}
		})
	}
}

func isZero(v any) bool {
	switch v := v.(type) {
	case elido.Summary:
		return v == elido.Summary{}
	case []elido.DayCount:
		return v == nil
	case []elido.HourCount:
		return v == nil
	case []elido.LinkCount:
		return v == nil
	case []elido.CountryCount:
		return v == nil
	}
	return false
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestSummaryDisagreeingWithTimeseriesIsReturnedAsIs(t *testing.T) {
	f := newFixture(t, novemberClicks(t), nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.SummaryOff, Offset: 5})
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	s, err := f.client.Summary(t.Context(), from, to, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	days, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, d := range days {
		total += d.Clicks
	}
	if s.Clicks != 13 || total != 8 {
		t.Errorf("summary %d, timeseries total %d; want 13 and 8, each as the API sent it", s.Clicks, total)
	}
}

// TestStrictDecoding feeds the client answers the fake never gives.
func TestStrictDecoding(t *testing.T) {
	from, to := date(t, "2026-11-26"), date(t, "2026-11-27")
	timeseries := func(ctx context.Context, c *elido.Client) (any, error) { return c.Timeseries(ctx, from, to, time.UTC) }
	summary := func(ctx context.Context, c *elido.Client) (any, error) { return c.Summary(ctx, from, to, time.UTC) }
	links := func(ctx context.Context, c *elido.Client) (any, error) {
		return c.LinkBreakdown(ctx, from, to, time.UTC)
	}
	countries := func(ctx context.Context, c *elido.Client) (any, error) {
		return c.CountryBreakdown(ctx, from, to, time.UTC)
	}
	tests := []struct {
		name string
		body string
		call func(context.Context, *elido.Client) (any, error)
		want any      // on success
		err  []string // or the error
	}{
		{
			name: "unknown_fields_are_ignored",
			body: `{"interval":"day","tz":"UTC","granularity":"x","items":[{"date":"2026-11-26","clicks":1,"uniques":1},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			want: []elido.DayCount{{Date: from, Clicks: 1}, {Date: to, Clicks: 0}},
		},
		{
			name: "wrong_interval",
			body: `{"interval":"hour","tz":"UTC","items":[{"date":"2026-11-26","clicks":1},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{`the answer has interval "hour", not the "day" asked for`},
		},
		{
			name: "tz_not_echoed",
			body: `{"interval":"day","tz":"Europe/Warsaw","items":[{"date":"2026-11-26","clicks":1},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{`time zone "Europe/Warsaw", not the "UTC" asked for`},
		},
		{
			name: "newest_first",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-27","clicks":1},{"date":"2026-11-26","clicks":0}]}`,
			call: timeseries,
			err:  []string{"out of order", "item 1 (2026-11-26) comes after item 0 (2026-11-27)", "oldest first"},
		},
		{
			name: "one_day_missing_is_named",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-27","clicks":1}]}`,
			call: timeseries,
			err:  []string{"day 2026-11-26 is missing (item 0 is for 2026-11-27)"},
		},
		{
			name: "counts_that_overflow_a_sum",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":9223372036854775807},{"date":"2026-11-27","clicks":1}]}`,
			call: timeseries,
			err:  []string{"add up to more than 9223372036854775807"},
		},
		{
			name: "largest_count_alone_is_read",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":9223372036854775807},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			want: []elido.DayCount{{Date: from, Clicks: 9223372036854775807}, {Date: to, Clicks: 0}},
		},
		{
			name: "count_beyond_int64",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":9223372036854775808},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{"unusable response", "cannot unmarshal number 9223372036854775808"},
		},
		{
			name: "link_counts_that_overflow_a_sum",
			body: `{"items":[{"link_id":"a","clicks":9223372036854775807},{"link_id":"b","clicks":5}]}`,
			call: links,
			err:  []string{"add up to more than 9223372036854775807"},
		},
		{
			name: "country_counts_that_overflow_a_sum",
			body: `{"items":[{"country_code":"PL","clicks":9223372036854775000},{"country_code":"DE","clicks":9223372036854775000}]}`,
			call: countries,
			err:  []string{"add up to more than 9223372036854775807"},
		},
		{
			name: "day_outside_the_range",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":1},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":0}]}`,
			call: timeseries,
			err:  []string{"item 2 is for 2026-11-28, outside the 2026-11-26..2026-11-27 asked for"},
		},
		{
			name: "negative_count",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":-1},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{"day 2026-11-26 has a negative count -1"},
		},
		{
			name: "count_as_a_string",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":"1"},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{"unusable response (request_id req_canned)", "cannot unmarshal string"},
		},
		{
			name: "malformed_date",
			body: `{"interval":"day","tz":"UTC","items":[{"date":"26/11/2026","clicks":1},{"date":"2026-11-27","clicks":0}]}`,
			call: timeseries,
			err:  []string{`"26/11/2026" is not a date`},
		},
		{
			name: "summary_for_another_range",
			body: `{"from":"2026-11-25","to":"2026-11-27","tz":"UTC","clicks":3,"unique_clicks":2}`,
			call: summary,
			err:  []string{"the answer is for 2026-11-25..2026-11-27, not the 2026-11-26..2026-11-27 asked for"},
		},
		{
			name: "summary_uniques_over_clicks",
			body: `{"from":"2026-11-26","to":"2026-11-27","tz":"UTC","clicks":3,"unique_clicks":4}`,
			call: summary,
			err:  []string{"4 unique clicks is more than 3 clicks"},
		},
		{
			name: "null_body",
			body: `null`,
			call: summary,
			err:  []string{`required field "from" is absent or null`},
		},
		{
			name: "html_body_retried_once",
			body: `<html>gateway says hi</html>`,
			call: summary,
			err:  []string{"gave up after 2 attempts", "invalid character '<'"},
		},
		{
			name: "integer_link_ids_kept_verbatim",
			body: `{"items":[{"link_id":90071992547409931234,"clicks":3},{"link_id":"lnk_9a","clicks":1}],"next_cursor":null}`,
			call: links,
			want: []elido.LinkCount{{"90071992547409931234", 3}, {"lnk_9a", 1}},
		},
		{
			name: "empty_cursor_ends_paging",
			body: `{"items":[{"link_id":"a","clicks":3}],"next_cursor":""}`,
			call: links,
			want: []elido.LinkCount{{"a", 3}},
		},
		{
			name: "absent_cursor_ends_paging",
			body: `{"items":[{"link_id":"a","clicks":3}]}`,
			call: links,
			want: []elido.LinkCount{{"a", 3}},
		},
		{
			name: "link_id_neither_string_nor_number",
			body: `{"items":[{"link_id":{"id":1},"clicks":3}]}`,
			call: links,
			err:  []string{"items[0].link_id: neither a string nor a number"},
		},
		{
			name: "link_twice",
			body: `{"items":[{"link_id":"a","clicks":3},{"link_id":"a","clicks":1}]}`,
			call: links,
			err:  []string{`link "a" appears twice`},
		},
		{
			name: "negative_link_count",
			body: `{"items":[{"link_id":"a","clicks":-3}]}`,
			call: links,
			err:  []string{"item 0 has a negative count -3"},
		},
		{
			name: "country_twice",
			body: `{"items":[{"country_code":"PL","clicks":3},{"country_code":"PL","clicks":1}]}`,
			call: countries,
			err:  []string{`country "PL" appears twice`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, cannedServer(t, 200, tt.body), nil)
			got, err := tt.call(t.Context(), c)
			if tt.err != nil {
				wantError(t, err, tt.err...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBodyOverTheCapIsAnError(t *testing.T) {
	clicks, _ := manyLinks(50)
	f := newFixture(t, clicks, nil)
	elido.SetMaxBody(f.client, 512)
	day := date(t, "2026-11-28")
	_, err := f.client.LinkBreakdown(t.Context(), day, day, time.UTC)
	wantError(t, err, "response (request_id req_000001) is larger than the client accepts (512 bytes)")
	if n := f.srv.Requests()["breakdown/link"]; n != 1 {
		t.Errorf("made %d requests, want 1: an oversized body is not retried", n)
	}
}

func TestBadInputMakesNoRequest(t *testing.T) {
	f := newFixture(t, nil, nil)
	d1, d2 := date(t, "2026-11-26"), date(t, "2026-11-28")
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"summary_from_after_to", func() error { _, err := f.client.Summary(ctx, d2, d1, time.UTC); return err },
			"elido: GET summary 2026-11-28..2026-11-26: from 2026-11-28 is after to 2026-11-26"},
		{"timeseries_from_after_to", func() error { _, err := f.client.Timeseries(ctx, d2, d1, time.UTC); return err },
			"from 2026-11-28 is after to 2026-11-26"},
		{"link_timeseries_empty_link", func() error { _, err := f.client.LinkTimeseries(ctx, d1, d2, time.UTC, ""); return err },
			"the link id is empty"},
		{"link_breakdown_from_after_to", func() error { _, err := f.client.LinkBreakdown(ctx, d2, d1, time.UTC); return err },
			"from 2026-11-28 is after to 2026-11-26"},
		{"country_breakdown_from_after_to", func() error { _, err := f.client.CountryBreakdown(ctx, d2, d1, time.UTC); return err },
			"from 2026-11-28 is after to 2026-11-26"},
		{"cancelled_context", func() error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := f.client.Summary(ctx, d1, d2, time.UTC)
			return err
		}, "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, tt.call(), tt.want)
		})
	}
	if log := f.srv.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %q", log)
	}
	if diff := gocmp.Diff(map[string]int{}, f.client.Requests()); diff != "" {
		t.Errorf("client Requests (-want +got):\n%s", diff)
	}
}

func TestRequestLooksRight(t *testing.T) {
	// The workspace id is opaque: it is path-escaped.
	const workspace = "team/a b"
	srv := elidotest.NewServer(workspace, testKey, novemberClicks(t))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL()+"/", func(cfg *elido.Config) { cfg.WorkspaceID = workspace })
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	if _, err := c.Timeseries(t.Context(), from, to, zone(t, "Europe/Warsaw")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LinkTimeseries(t.Context(), from, to, time.UTC, "lnk/1?x=2"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/v1/workspaces/team%2Fa%20b/analytics/timeseries?from=2026-11-26&interval=day&to=2026-11-28&tz=Europe%2FWarsaw",
		"/v1/workspaces/team%2Fa%20b/analytics/timeseries?from=2026-11-26&interval=day&link_id=lnk%2F1%3Fx%3D2&to=2026-11-28&tz=UTC",
	}
	if diff := gocmp.Diff(want, srv.RequestLog()); diff != "" {
		t.Errorf("RequestLog (-want +got):\n%s", diff)
	}
}

// While the caller works through a page, the next one is already being
// asked for: the round trip does not wait for the comparison.
func TestLinkBreakdownPagesReadsAhead(t *testing.T) {
	clicks, _ := manyLinks(2500)
	f := newFixture(t, clicks, nil)
	day := date(t, "2026-11-28")
	first := true
	err := f.client.LinkBreakdownPages(t.Context(), day, day, time.UTC, func(page []elido.LinkCount) error {
		if first {
			first = false
			// Held here, the first page's handling ends only once the
			// second page's request has reached Elido.
			deadline := time.Now().Add(10 * time.Second)
			for f.srv.Requests()["breakdown/link"] < 2 {
				if time.Now().After(deadline) {
					t.Error("the second page was not asked for while the first was handed over")
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// It reads one page ahead, never more: while the caller is held on the
// first page, the second is asked for and the third is not, however long
// the hold. A caller that stops at its first page has spent two requests.
func TestLinkBreakdownPagesReadsOnePageAhead(t *testing.T) {
	clicks, _ := manyLinks(4500) // 5 pages
	f := newFixture(t, clicks, nil)
	day := date(t, "2026-11-28")
	stop := errors.New("stopped at the first page")
	err := f.client.LinkBreakdownPages(t.Context(), day, day, time.UTC, func(page []elido.LinkCount) error {
		deadline := time.Now().Add(10 * time.Second)
		for f.srv.Requests()["breakdown/link"] < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		// Held on: a third page asked for meanwhile would show here.
		time.Sleep(200 * time.Millisecond)
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("LinkBreakdownPages = %v, want the caller's stop", err)
	}
	if n := f.srv.Requests()["breakdown/link"]; n != 2 {
		t.Errorf("%d pages asked for while the caller held the first, want 2: the first and the one read ahead", n)
	}
}
