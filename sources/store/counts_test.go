package store

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// eventCases run against every backend, with the events preset and with a
// custom query equivalent to it.
var eventCases = []struct {
	name   string
	tz     string
	day    string
	clicks []click
	want   map[string]int64
}{
	{
		name: "utc_day_counts_each_link",
		tz:   "UTC",
		day:  "2026-11-26",
		clicks: []click{
			{ts: "2026-11-26T00:00:00.000Z", link: "a"},
			{ts: "2026-11-26T12:00:00.000Z", link: "a"},
			{ts: "2026-11-26T23:59:59.999Z", link: "b"},
			{ts: "2026-11-25T23:59:59.999Z", link: "a"},
			{ts: "2026-11-27T00:00:00.000Z", link: "b"},
		},
		want: map[string]int64{"a": 2, "b": 1},
	},
	{
		name:   "local_midnight_belongs_to_the_new_day",
		tz:     "Europe/Warsaw",
		day:    "2026-11-27",
		clicks: warsawMidnights,
		want:   map[string]int64{"first_instant": 1, "last_millisecond": 1},
	},
	{
		name:   "last_millisecond_belongs_to_the_old_day",
		tz:     "Europe/Warsaw",
		day:    "2026-11-26",
		clicks: warsawMidnights,
		want:   map[string]int64{"before": 1},
	},
	{
		name: "offsets_compare_as_instants",
		tz:   "Europe/Warsaw",
		day:  "2026-11-27",
		clicks: []click{
			{ts: "2026-11-27T04:30:00.000+05:30", link: "first_instant_in_kolkata"},
			{ts: "2026-11-26T14:59:59.999-08:00", link: "before_in_los_angeles"},
			{ts: "2026-11-27T22:59:59.999Z", link: "last_millisecond_in_utc"},
			{ts: "2026-11-27 18:00:00.000-05:00", link: "next_day_in_new_york"},
			{ts: "2026-11-28T09:59:59.999+11:00", link: "last_millisecond_in_sydney"},
		},
		want: map[string]int64{"first_instant_in_kolkata": 1, "last_millisecond_in_utc": 1, "last_millisecond_in_sydney": 1},
	},
	{
		name:   "spring_forward_day_has_23_hours",
		tz:     "Europe/Warsaw",
		day:    "2026-03-29",
		clicks: warsawSpringForward,
		want:   map[string]int64{"before_jump": 2, "after_jump": 2},
	},
	{
		name:   "day_after_spring_forward",
		tz:     "Europe/Warsaw",
		day:    "2026-03-30",
		clicks: warsawSpringForward,
		want:   map[string]int64{"outside": 1},
	},
	{
		name:   "fall_back_day_has_25_hours",
		tz:     "Europe/Warsaw",
		day:    "2026-10-25",
		clicks: warsawFallBack,
		want:   map[string]int64{"edge": 2, "repeated_hour": 2},
	},
	{
		name:   "day_before_fall_back",
		tz:     "Europe/Warsaw",
		day:    "2026-10-24",
		clicks: warsawFallBack,
		want:   map[string]int64{"outside": 1},
	},
	{
		name: "half_hour_zone",
		tz:   "Asia/Kolkata",
		day:  "2026-11-27",
		clicks: []click{
			{ts: "2026-11-26T18:30:00.000Z", link: "a"},
			{ts: "2026-11-26T18:29:59.999Z", link: "b"},
			{ts: "2026-11-27T00:00:00.000+05:30", link: "a"},
			{ts: "2026-11-27T18:29:59.999Z", link: "a"},
			{ts: "2026-11-27T18:30:00.000Z", link: "b"},
		},
		want: map[string]int64{"a": 3},
	},
	{
		name: "day_without_clicks_counts_zero",
		tz:   "UTC",
		day:  "2026-11-20",
		clicks: []click{
			{ts: "2026-11-19T23:59:59.999Z", link: "a"},
			{ts: "2026-11-21T00:00:00.000Z", link: "a"},
		},
		want: map[string]int64{},
	},
}

// warsawMidnights surround 2026-11-27 00:00 in Europe/Warsaw (UTC+1).
var warsawMidnights = []click{
	{ts: "2026-11-26T23:59:59.999+01:00", link: "before"},
	{ts: "2026-11-27T00:00:00.000+01:00", link: "first_instant"},
	{ts: "2026-11-27T23:59:59.999+01:00", link: "last_millisecond"},
	{ts: "2026-11-28T00:00:00.000+01:00", link: "after"},
}

// warsawSpringForward surround 2026-03-29 in Europe/Warsaw, when 02:00+01
// becomes 03:00+02.
var warsawSpringForward = []click{
	{ts: "2026-03-28T23:59:59.999+01:00", link: "outside"},
	{ts: "2026-03-29T00:00:00.000+01:00", link: "before_jump"},
	{ts: "2026-03-29T01:59:59.999+01:00", link: "before_jump"},
	{ts: "2026-03-29T03:00:00.000+02:00", link: "after_jump"},
	{ts: "2026-03-29T23:59:59.999+02:00", link: "after_jump"},
	{ts: "2026-03-30T00:00:00.000+02:00", link: "outside"},
}

// warsawFallBack surround 2026-10-25 in Europe/Warsaw, when 03:00+02
// becomes 02:00+01 and the hour from 02:00 happens twice.
var warsawFallBack = []click{
	{ts: "2026-10-24T23:59:59.999+02:00", link: "outside"},
	{ts: "2026-10-25T00:00:00.000+02:00", link: "edge"},
	{ts: "2026-10-25T02:30:00.000+02:00", link: "repeated_hour"},
	{ts: "2026-10-25T02:30:00.000+01:00", link: "repeated_hour"},
	{ts: "2026-10-25T23:59:59.999+01:00", link: "edge"},
	{ts: "2026-10-26T00:00:00.000+01:00", link: "outside"},
}

func TestCountsEvents(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, b := range backends() {
		custom := mustQuery(t)(CustomQuery(b.eventsCustom))
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range eventCases {
				t.Run(tt.name, func(t *testing.T) {
					db, dsn := b.new(t)
					insertClicks(t, db, tt.clicks)
					s := openStore(t, dsn)
					day := mustDate(t, tt.day)
					want := DayCounts{Date: day, Total: total(tt.want), Links: tt.want}
					for _, q := range []Query{events, custom} {
						got, err := s.Counts(t.Context(), q, day, mustZone(t, tt.tz))
						if err != nil {
							t.Fatalf("%s query: %v", q.Name(), err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("%s query: Counts(%s) mismatch (-want +got):\n%s", q.Name(), tt.day, diff)
						}
					}
				})
			}
		})
	}
}

func TestCountsDaily(t *testing.T) {
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	counters := []counter{
		{day: "2026-11-25", link: "a", clicks: 9},
		{day: "2026-11-26", link: "a", clicks: 5},
		{day: "2026-11-26", link: "b", clicks: 0},
		{day: "2026-11-26", link: "c", clicks: 1 << 40},
		{day: "2026-11-27", link: "a", clicks: 4},
	}
	tests := []struct {
		name string
		tz   string
		day  string
		want map[string]int64
	}{
		{"reads_the_rows_of_the_day", "Europe/Warsaw", "2026-11-26", map[string]int64{"a": 5, "b": 0, "c": 1 << 40}},
		{"zone_does_not_shift_the_day", "Pacific/Kiritimati", "2026-11-27", map[string]int64{"a": 4}},
		{"day_without_rows_counts_zero", "UTC", "2026-11-28", map[string]int64{}},
	}
	for _, b := range backends() {
		custom := mustQuery(t)(CustomQuery(b.dailyCustom))
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertCounters(t, db, counters)
			s := openStore(t, dsn)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					day := mustDate(t, tt.day)
					want := DayCounts{Date: day, Total: total(tt.want), Links: tt.want}
					for _, q := range []Query{daily, custom} {
						got, err := s.Counts(t.Context(), q, day, mustZone(t, tt.tz))
						if err != nil {
							t.Fatalf("%s query: %v", q.Name(), err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("%s query: Counts(%s) mismatch (-want +got):\n%s", q.Name(), tt.day, diff)
						}
					}
				})
			}
		})
	}
}

// TestCustomQuery checks how the rows of a custom query are read.
func TestCustomQuery(t *testing.T) {
	clicks := []click{
		{ts: "2026-11-26T08:00:00.000Z", link: "a"},
		{ts: "2026-11-26T09:00:00.000Z", link: "a"},
		{ts: "2026-11-26T10:00:00.000Z", link: "x:y"},
		{ts: "2026-11-26T11:00:00.000Z", link: "b"},
		{ts: "2026-11-27T08:00:00.000Z", link: "a"},
	}
	tests := []struct {
		name    string
		query   string // {in_day} and {sum_of_ones} are replaced per backend
		want    map[string]int64
		wantErr []string
	}{
		{
			name:  "rows_for_the_same_link_are_added_up",
			query: "SELECT link_id, 1 AS clicks FROM clicks WHERE {in_day}",
			want:  map[string]int64{"a": 2, "x:y": 1, "b": 1},
		},
		{
			name:  "columns_in_any_order_and_case",
			query: `SELECT count(*) AS "CLICKS", link_id AS "Link_ID" FROM clicks WHERE {in_day} GROUP BY link_id`,
			want:  map[string]int64{"a": 2, "x:y": 1, "b": 1},
		},
		{
			name:  "whole_numbers_of_another_type",
			query: "SELECT link_id, {sum_of_ones} AS clicks FROM clicks WHERE {in_day} GROUP BY link_id",
			want:  map[string]int64{"a": 2, "x:y": 1, "b": 1},
		},
		{
			name: "colons_in_literals_and_comments",
			query: `SELECT link_id, count(*) AS clicks -- a comment at 10:30 with :not_a_parameter
FROM clicks /* :nor_this */
WHERE link_id <> 'x:y' AND {in_day}
GROUP BY link_id`,
			want: map[string]int64{"a": 2, "b": 1},
		},
		{
			name:    "one_column",
			query:   "SELECT link_id FROM clicks WHERE {in_day}",
			wantErr: []string{"count clicks for 2026-11-26", "link_id and clicks", `1 column(s): "link_id"`},
		},
		{
			name:    "misnamed_column",
			query:   "SELECT link_id, count(*) AS n FROM clicks WHERE {in_day} GROUP BY link_id",
			wantErr: []string{"link_id and clicks", `"link_id", "n"`},
		},
		{
			name:    "extra_column",
			query:   "SELECT link_id, count(*) AS clicks, 1 AS source FROM clicks WHERE {in_day} GROUP BY link_id",
			wantErr: []string{"link_id and clicks", `"source"`},
		},
		{
			name:    "wrong_columns_fail_on_a_day_without_rows",
			query:   "SELECT link_id AS link, count(*) AS clicks FROM clicks WHERE 1 = 0 GROUP BY link_id",
			wantErr: []string{"link_id and clicks", `"link"`},
		},
		{
			name:    "null_link_id",
			query:   "SELECT NULL AS link_id, 1 AS clicks",
			wantErr: []string{"link_id is NULL", "COALESCE"},
		},
		{
			name:    "negative_clicks",
			query:   "SELECT 'a' AS link_id, -1 AS clicks",
			wantErr: []string{`link_id "a"`, "negative"},
		},
		{
			name:    "fractional_clicks",
			query:   "SELECT 'a' AS link_id, 1.5 AS clicks",
			wantErr: []string{"1.5", "not a whole number"},
		},
		{
			name:    "null_clicks",
			query:   "SELECT 'a' AS link_id, NULL AS clicks",
			wantErr: []string{"clicks is NULL"},
		},
		{
			name:    "link_id_not_text",
			query:   "SELECT 42 AS link_id, 1 AS clicks",
			wantErr: []string{"link_id is an integer", "cast it to text"},
		},
		{
			name:    "not_a_select",
			query:   "CREATE TEMP TABLE t (link_id text, clicks bigint)",
			wantErr: []string{"count clicks for 2026-11-26"},
		},
	}
	day := mustDate(t, "2026-11-26")
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, clicks)
			s := openStore(t, dsn)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					text := strings.NewReplacer("{in_day}", b.inDay, "{sum_of_ones}", b.sumOfOnes).Replace(tt.query)
					q := mustQuery(t)(CustomQuery(text))
					got, err := s.Counts(t.Context(), q, day, time.UTC)
					// EachCount reads and checks the same rows, a row at a time.
					each := map[string]int64{}
					eachErr := s.EachCount(t.Context(), q, day, time.UTC, func(id string, n int64) { each[id] += n })
					if tt.wantErr != nil {
						for _, err := range []error{err, eachErr} {
							errorContains(t, err, tt.wantErr...)
							if !errors.Is(err, ErrBadQuery) {
								t.Errorf("error %v is not ErrBadQuery: a retry would be attempted in vain", err)
							}
						}
						return
					}
					if err != nil || eachErr != nil {
						t.Fatalf("Counts: %v; EachCount: %v", err, eachErr)
					}
					want := DayCounts{Date: day, Total: total(tt.want), Links: tt.want}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Counts mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(tt.want, each); diff != "" {
						t.Errorf("EachCount mismatch (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

type writeCase struct {
	name      string
	query     string
	sqliteErr string // the error SQLite gives, when not "readonly database"
	mysqlErr  string // the error MariaDB gives, when not "READ ONLY transaction"
}

// TestQueriesCannotWrite runs custom queries that try to change the data:
// each must fail and leave every row as it was.
func TestQueriesCannotWrite(t *testing.T) {
	tests := []writeCase{
		{name: "delete_returning", query: "DELETE FROM clicks RETURNING link_id, 1 AS clicks"},
		{name: "update_returning", query: "UPDATE clicks SET link_id = 'hijacked' RETURNING link_id, 1 AS clicks", mysqlErr: "syntax"},
		{name: "insert_returning", query: "INSERT INTO clicks (ts, link_id) VALUES ('2026-11-26T12:00:00.000Z', 'forged') RETURNING link_id, 1 AS clicks"},
		{
			name:      "delete_in_a_cte",
			query:     "WITH gone AS (DELETE FROM clicks RETURNING link_id) SELECT link_id, count(*) AS clicks FROM gone GROUP BY link_id",
			sqliteErr: "syntax error", // SQLite has no data-modifying CTEs
			mysqlErr:  "syntax",       // nor has MySQL
		},
		{name: "update_daily_counters", query: "UPDATE click_counts SET clicks = clicks + 1 RETURNING link_id, clicks", mysqlErr: "syntax"},
		{name: "update_without_returning", query: "UPDATE click_counts SET clicks = clicks + 1", sqliteErr: "readonly database"},
		// DDL commits the transaction it runs in on MySQL: the session's
		// own read-only mode stops it.
		{name: "drop_table", query: "DROP TABLE clicks"},
		{name: "create_table", query: "CREATE TABLE forged (link_id text, clicks bigint)"},
	}
	day := mustDate(t, "2026-11-26")
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{
				{ts: "2026-11-26T08:00:00.000Z", link: "a", country: "PL"},
				{ts: "2026-11-26T09:00:00.000Z", link: "b"},
			})
			insertCounters(t, db, []counter{{day: "2026-11-26", link: "a", clicks: 3}})
			before := snapshot(t, db)
			s := openStore(t, dsn)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					q := mustQuery(t)(CustomQuery(tt.query))
					got, err := s.Counts(t.Context(), q, day, time.UTC)
					if err == nil {
						t.Errorf("Counts succeeded with %+v, want an error", got)
					} else if want := tt.wantErr(b.dialect); !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					} else if !errors.Is(err, ErrBadQuery) {
						t.Errorf("error %v is not ErrBadQuery", err)
					}
					if diff := cmp.Diff(before, snapshot(t, db)); diff != "" {
						t.Errorf("the data changed (-before +after):\n%s", diff)
					}
				})
			}
			// The parser refuses scripts; should one slip through, the
			// prepared statement (PostgreSQL) or the read-only connection
			// (SQLite) still stops it.
			t.Run("script_past_the_parser", func(t *testing.T) {
				script := namedQuery{parts: []string{"COMMIT; DELETE FROM clicks RETURNING link_id, 1 AS clicks"}}
				err := s.readOnly(t.Context(), func(tx *sqlx.Tx) error {
					return s.query(t.Context(), tx, script, nil, readAll)
				})
				if err == nil {
					t.Error("the script ran without error")
				}
				if diff := cmp.Diff(before, snapshot(t, db)); diff != "" {
					t.Errorf("the data changed (-before +after):\n%s", diff)
				}
			})
		})
	}
}

// wantErr is what the error of a write attempt says on a database d.
func (tt writeCase) wantErr(d dsn.Dialect) string {
	switch {
	case d == dsn.Postgres:
		return "read-only transaction"
	case d == dsn.MySQL && tt.mysqlErr != "":
		return tt.mysqlErr
	case d == dsn.MySQL:
		return "READ ONLY transaction"
	case tt.sqliteErr != "":
		return tt.sqliteErr
	}
	return "readonly database"
}

// table is the content of the reference tables, to compare before and
// after a query.
type table struct {
	Clicks   []string
	Counters []string
}

func snapshot(t *testing.T, db interface {
	Select(dest any, query string, args ...any) error
}) table {
	t.Helper()
	var tab table
	clicks := "SELECT link_id || ' ' || coalesce(country_code, '-') FROM clicks ORDER BY 1"
	counters := "SELECT link_id || ' ' || CAST(clicks AS TEXT) FROM click_counts ORDER BY 1"
	if d, ok := db.(interface{ DriverName() string }); ok && d.DriverName() == "mysql" {
		clicks = "SELECT CONCAT(link_id, ' ', coalesce(country_code, '-')) FROM clicks ORDER BY 1"
		counters = "SELECT CONCAT(link_id, ' ', clicks) FROM click_counts ORDER BY 1"
	}
	if err := db.Select(&tab.Clicks, clicks); err != nil {
		t.Fatalf("snapshot clicks: %v", err)
	}
	if err := db.Select(&tab.Counters, counters); err != nil {
		t.Fatalf("snapshot counters: %v", err)
	}
	return tab
}

func TestHourlyCounts(t *testing.T) {
	warsaw := mustZone(t, "Europe/Warsaw")
	kolkata := mustZone(t, "Asia/Kolkata")
	cet, cest := time.FixedZone("CET", 3600), time.FixedZone("CEST", 7200)
	tests := []struct {
		name   string
		loc    *time.Location
		day    string
		clicks []click
		starts []time.Time
		want   map[int]int64 // clicks per hour index; the others count 0
	}{
		{
			name:   "spring_forward_day_has_23_hours",
			loc:    warsaw,
			day:    "2026-03-29",
			clicks: warsawSpringForward,
			starts: append(hours(2026, 3, 29, cet, 0, 2), hours(2026, 3, 29, cest, 3, 24)...),
			want:   map[int]int64{0: 1, 1: 1, 2: 1, 22: 1},
		},
		{
			name:   "fall_back_day_has_25_hours",
			loc:    warsaw,
			day:    "2026-10-25",
			clicks: warsawFallBack,
			starts: append(hours(2026, 10, 25, cest, 0, 3), hours(2026, 10, 25, cet, 2, 24)...),
			want:   map[int]int64{0: 1, 2: 1, 3: 1, 24: 1},
		},
		{
			name: "half_hour_zone_hours_start_at_half_past_in_utc",
			loc:  kolkata,
			day:  "2026-11-27",
			clicks: []click{
				{ts: "2026-11-26T18:29:59.999Z", link: "a"},
				{ts: "2026-11-27T00:00:00.000+05:30", link: "a"},
				{ts: "2026-11-27T00:59:59.999+05:30", link: "a"},
				{ts: "2026-11-27T01:00:00.000+05:30", link: "a"},
				{ts: "2026-11-27T23:59:59.999+05:30", link: "a"},
				{ts: "2026-11-28T00:00:00.000+05:30", link: "a"},
			},
			starts: hours(2026, 11, 27, kolkata, 0, 24),
			want:   map[int]int64{0: 2, 1: 1, 23: 1},
		},
	}
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					db, dsn := b.new(t)
					insertClicks(t, db, tt.clicks)
					s := openStore(t, dsn)
					var want []HourCount
					for i, start := range tt.starts {
						want = append(want, HourCount{Start: start, Clicks: tt.want[i]})
					}
					got, err := s.HourlyCounts(t.Context(), events, mustDate(t, tt.day), tt.loc)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("HourlyCounts mismatch (-want +got):\n%s", diff)
					}
					for _, h := range got {
						if h.Start.Location() != tt.loc {
							t.Fatalf("hour %v is in %v, want %v", h.Start, h.Start.Location(), tt.loc)
						}
					}
				})
			}
		})
	}
}

// hours returns the starts of the hours from..to-1 of a day in a fixed
// zone (or a zone without DST).
func hours(year int, month time.Month, day int, loc *time.Location, from, to int) []time.Time {
	var starts []time.Time
	for h := from; h < to; h++ {
		starts = append(starts, time.Date(year, month, day, h, 0, 0, 0, loc))
	}
	return starts
}

func TestCountryCounts(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{
				{ts: "2026-10-25T00:00:00.000+02:00", link: "a", country: "PL"},
				{ts: "2026-10-25T02:30:00.000+01:00", link: "b", country: "PL"},
				{ts: "2026-10-25T12:00:00.000+01:00", link: "a", country: "DE"},
				{ts: "2026-10-25T23:59:59.999+01:00", link: "a"},
				{ts: "2026-10-26T00:00:00.000+01:00", link: "a", country: "FR"},
			})
			s := openStore(t, dsn)
			got, err := s.CountryCounts(t.Context(), events, mustDate(t, "2026-10-25"), mustZone(t, "Europe/Warsaw"))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"PL": 2, "DE": 1, "": 1}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CountryCounts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBreakdownsNeedTheEventsPreset(t *testing.T) {
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	custom := mustQuery(t)(CustomQuery("SELECT link_id, count(*) AS clicks FROM clicks GROUP BY link_id"))
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			_, dsn := b.new(t)
			s := openStore(t, dsn)
			day := mustDate(t, "2026-11-26")
			for _, q := range []Query{daily, custom} {
				if _, err := s.HourlyCounts(t.Context(), q, day, time.UTC); !errors.Is(err, ErrNotSupported) {
					t.Errorf("HourlyCounts with the %s query: error %v, want ErrNotSupported", q.Name(), err)
				}
				if _, err := s.CountryCounts(t.Context(), q, day, time.UTC); !errors.Is(err, ErrNotSupported) {
					t.Errorf("CountryCounts with the %s query: error %v, want ErrNotSupported", q.Name(), err)
				}
			}
		})
	}
}

func TestCountsWithoutQueryOrZone(t *testing.T) {
	_, dsn := newSQLite(t)
	s := openStore(t, dsn)
	day := mustDate(t, "2026-11-26")
	_, err := s.Counts(t.Context(), Query{}, day, time.UTC)
	errorContains(t, err, "count clicks for 2026-11-26", "PresetQuery")
	events := mustQuery(t)(PresetQuery(PresetEvents))
	_, err = s.Counts(t.Context(), events, day, nil)
	errorContains(t, err, "no time zone")
}

func total(links map[string]int64) int64 {
	var n int64
	for _, c := range links {
		n += c
	}
	return n
}

// classify marks what a retry cannot mend, and only that.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "42P01"}, true},  // undefined table
		{&pq.Error{Code: "42501"}, true},  // insufficient privilege
		{&pq.Error{Code: "22012"}, true},  // division by zero
		{&pq.Error{Code: "25006"}, true},  // write in a read-only transaction
		{&pq.Error{Code: "08006"}, false}, // connection failure
		{&pq.Error{Code: "57014"}, false}, // query cancelled (the deadline)
		{&pq.Error{Code: "40001"}, false}, // serialization failure
		{&pq.Error{Code: "53300"}, false}, // too many connections
		{errors.New("driver: bad connection"), false},
		{context.DeadlineExceeded, false},
	} {
		if got := errors.Is(classify(tt.err), ErrBadQuery); got != tt.want {
			t.Errorf("classify(%v) is ErrBadQuery: %v, want %v", tt.err, got, tt.want)
		}
	}
	if classify(nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}

// A wrong role or database is refused for good (ErrRefused); an
// unreachable server is not.
func TestOpenRefused(t *testing.T) {
	_, base := pgtest.New(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database_for_clickrecon"
	if _, err := Open(t.Context(), storeDSN(t, u.String()), Options{}); !errors.Is(err, ErrRefused) {
		t.Errorf("unknown database: error %v, want ErrRefused", err)
	}
	if _, err := Open(t.Context(), storeDSN(t, "postgres://recon@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=1"), Options{}); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("unreachable server: error %v, want one that is not ErrRefused", err)
	}
}
