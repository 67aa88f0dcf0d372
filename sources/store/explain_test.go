package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// A day's total on the PostgreSQL reference schemas is a search of the ts
// index (events) or of the primary key (daily), never a scan of the whole
// table.
func TestPostgresTotalsUseTheIndex(t *testing.T) {
	db, _ := pgtest.New(t)
	applySchemas(t, db, "postgres")
	// 400 days of clicks and counters, so that a day is a small part of
	// each table and the planner has a choice to make.
	db.MustExec(`INSERT INTO clicks (ts, link_id)
		SELECT timestamptz '2025-11-01 00:00:00+00' + n * interval '10 minutes', 'l' || (n % 50)
		FROM generate_series(0, 400 * 144 - 1) AS n`)
	db.MustExec(`INSERT INTO click_counts (day, link_id, clicks)
		SELECT date '2025-11-01' + d, 'l' || l, d + l
		FROM generate_series(0, 399) AS d, generate_series(0, 199) AS l`)
	db.MustExec(`VACUUM ANALYZE clicks`)
	db.MustExec(`VACUUM ANALYZE click_counts`)

	s := &Store{dialect: dsn.Postgres}
	day := mustDate(t, "2026-11-26")
	loc := mustZone(t, "Europe/Warsaw")
	from, to := day.Bounds(loc)
	params := s.params(day, from, to, loc)
	for _, name := range []string{PresetEvents, PresetDaily} {
		q := mustQuery(t)(PresetQuery(name))
		text, args, err := q.total.postgres.bind(dsn.Postgres, params)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name+"_day", func(t *testing.T) { assertIndexPlan(t, db, name, text, args...) })
	}
	// The drill-down's per-link and per-country reads, grouped byte for
	// byte (COLLATE "C"), are a search of the ts index too.
	countries, err := countriesQuery(dsn.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for name, nq := range map[string]namedQuery{"links": mustQuery(t)(PresetQuery(PresetEvents)).postgres, "countries": countries} {
		text, args, err := nq.bind(dsn.Postgres, params)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("events_"+name, func(t *testing.T) { assertIndexPlan(t, db, PresetEvents, text, args...) })
	}
	// The daily preset reads a run of days in one statement, a range of
	// the primary key. For a year of a 400-day table the planner may
	// rightly prefer one sequential scan (so does the floor of
	// BENCHMARKS.md); what must not happen is a whole-table scan for a
	// short run, so the plan is checked for a week and for a run as long
	// as the job's chunks (31 days, under 8% of this table).
	chunk := mustQuery(t)(PresetQuery(PresetDaily)).total.chunk.postgres
	for _, n := range []int{7, 31} {
		text, args, err := chunk.bind(dsn.Postgres, map[string]any{"first": day.AddDays(1 - n).String(), "last": day.String()})
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("daily_%d_days", n), func(t *testing.T) { assertIndexPlan(t, db, PresetDaily, text, args...) })
	}
}

// assertIndexPlan fails t unless the plan of text reads the table of the
// preset through an index, and never scans it whole.
func assertIndexPlan(t *testing.T, db *sqlx.DB, preset, text string, args ...any) {
	t.Helper()
	table, index := "clicks", "clicks_ts_idx"
	if preset == PresetDaily {
		table, index = "click_counts", "click_counts_pkey"
	}
	var lines []string
	if err := db.Select(&lines, "EXPLAIN "+text, args...); err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	if strings.Contains(plan, "Seq Scan on "+table) {
		t.Errorf("plan scans %s whole:\n%s", table, plan)
	}
	if !strings.Contains(plan, "Index Only Scan using "+index) && !strings.Contains(plan, "Index Scan using "+index) && !strings.Contains(plan, "Bitmap Index Scan on "+index) {
		t.Errorf("plan does not use %s:\n%s", index, plan)
	}
}

// The daily preset's total on SQLite is a search of the primary key.
func TestSQLiteDailyTotalUsesThePrimaryKey(t *testing.T) {
	db, _ := newSQLite(t)
	s := &Store{dialect: dsn.SQLite}
	day := mustDate(t, "2026-11-26")
	from, to := day.Bounds(time.UTC)
	q := mustQuery(t)(PresetQuery(PresetDaily))
	text, args, err := q.total.sqlite.bind(dsn.SQLite, s.params(day, from, to, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	assertSQLitePlan(t, db, text, "SEARCH click_counts USING INDEX sqlite_autoindex_click_counts_1 (day=?)", args...)
}

// A run of days on SQLite is one range of the primary key: day is text,
// compared as text with the YYYY-MM-DD bounds.
func TestSQLiteDailyChunkUsesThePrimaryKey(t *testing.T) {
	db, _ := newSQLite(t)
	q := mustQuery(t)(PresetQuery(PresetDaily))
	text, args, err := q.total.chunk.sqlite.bind(dsn.SQLite, map[string]any{"first": "2026-11-01", "last": "2026-11-30"})
	if err != nil {
		t.Fatal(err)
	}
	assertSQLitePlan(t, db, text, "SEARCH click_counts USING INDEX sqlite_autoindex_click_counts_1 (day>? AND day<?)", args...)
}

// assertSQLitePlan fails t unless the query plan of text contains want.
func assertSQLitePlan(t *testing.T, db *sqlx.DB, text, want string, args ...any) {
	t.Helper()
	var plan []struct {
		ID, Parent, NotUsed int
		Detail              string
	}
	if err := db.Select(&plan, "EXPLAIN QUERY PLAN "+text, args...); err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, p := range plan {
		details = append(details, p.Detail)
	}
	got := strings.Join(details, "\n")
	if !strings.Contains(got, want) {
		t.Errorf("plan does not contain %q:\n%s", want, got)
	}
}

// Read in STORE_TIMESTAMP_TZ, each SQLite events query is still two range
// searches of the index on julianday(ts): one for text with an offset,
// one for wall-clock text, never a scan of the table.
func TestSQLiteZonedRangeUsesTheIndex(t *testing.T) {
	db, _ := newSQLite(t)
	s := &Store{dialect: dsn.SQLite, zone: mustZone(t, "Europe/Warsaw")}
	day := mustDate(t, "2026-10-25")
	from, to := day.Bounds(s.zone)
	for name, text := range map[string]string{"events": eventsSQLite, "span": spanSQLite, "countries": countriesSQLite} {
		t.Run(name, func(t *testing.T) {
			nq, err := s.liteQuery(text)
			if err != nil {
				t.Fatal(err)
			}
			bound, args, err := nq.bind(dsn.SQLite, s.params(day, from, to, s.zone))
			if err != nil {
				t.Fatal(err)
			}
			assertSQLitePlan(t, db, bound, "MULTI-INDEX OR", args...)
			assertSQLitePlan(t, db, bound, "INDEX clicks_ts_instant_idx (<expr>>? AND <expr><?)", args...)
		})
	}
}
