package store

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
)

// withSessionZone returns dsn with the server-side default TimeZone of its
// sessions set to zone, as a database or role setting would.
func withSessionZone(t *testing.T, dsn, zone string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c TimeZone="+zone)
	u.RawQuery = q.Encode()
	return u.String()
}

// A click store whose ts is a timestamp without time zone holding UTC
// instants counts the same whatever the database's own TimeZone, and so
// does a timestamptz one.
func TestPostgresTimestampColumnIgnoresTheDatabaseTimeZone(t *testing.T) {
	naive := []string{
		"2026-11-25 23:59:59.999", // the day before, in UTC
		"2026-11-26 00:00:00",     // the day's first instant
		"2026-11-26 03:30:00",     // still 2026-11-25 in New York
		"2026-11-26 23:30:00",     // already 2026-11-27 in Warsaw
		"2026-11-27 00:00:00",     // the next day
	}
	events := mustQuery(t)(PresetQuery(PresetEvents))
	day := mustDate(t, "2026-11-26")
	for _, column := range []string{"timestamp", "timestamptz"} {
		t.Run(column, func(t *testing.T) {
			db, base := pgtest.New(t)
			db.MustExec(`CREATE TABLE clicks (ts ` + column + ` NOT NULL, link_id text NOT NULL, country_code text)`)
			db.MustExec(`CREATE INDEX clicks_ts_idx ON clicks (ts)`)
			for _, ts := range naive {
				// A timestamptz column gets the same instants, written in UTC.
				db.MustExec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (($1::timestamp AT TIME ZONE 'UTC'), 'a', 'PL')`, ts)
			}
			for _, zone := range []string{"UTC", "America/New_York", "Pacific/Kiritimati"} {
				t.Run(zone, func(t *testing.T) {
					s := openStore(t, withSessionZone(t, base, zone))
					got, err := s.Counts(t.Context(), events, day, time.UTC)
					if err != nil {
						t.Fatal(err)
					}
					want := DayCounts{Date: day, Total: 3, Links: map[string]int64{"a": 3}}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Counts mismatch (-want +got):\n%s", diff)
					}
					totals, err := s.Totals(t.Context(), events, []reconcile.Date{day.AddDays(-1), day, day.AddDays(1)}, time.UTC)
					if err != nil {
						t.Fatal(err)
					}
					wantTotals := map[reconcile.Date]reconcile.Reading{day.AddDays(-1): reconcile.Known(1), day: reconcile.Known(3), day.AddDays(1): reconcile.Known(1)}
					if diff := cmp.Diff(wantTotals, totals); diff != "" {
						t.Errorf("Totals mismatch (-want +got):\n%s", diff)
					}
					countries, err := s.CountryCounts(t.Context(), events, day, time.UTC)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(map[string]int64{"PL": 3}, countries); diff != "" {
						t.Errorf("CountryCounts mismatch (-want +got):\n%s", diff)
					}
					hours, err := s.HourlyCounts(t.Context(), events, day, time.UTC)
					if err != nil {
						t.Fatal(err)
					}
					byHour := map[int]int64{}
					for _, h := range hours {
						if h.Clicks != 0 {
							byHour[h.Start.Hour()] = h.Clicks
						}
					}
					if diff := cmp.Diff(map[int]int64{0: 1, 3: 1, 23: 1}, byHour); diff != "" {
						t.Errorf("HourlyCounts mismatch (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

// A user whose timestamp column holds local wall-clock times names their
// zone, and the day is counted in it whatever the database's TimeZone.
func TestPostgresTimestampZoneOption(t *testing.T) {
	db, base := pgtest.New(t)
	db.MustExec(`CREATE TABLE clicks (ts timestamp NOT NULL, link_id text NOT NULL, country_code text)`)
	for _, ts := range []string{
		"2026-11-25 23:59:59", // New York, the day before
		"2026-11-26 00:00:00", // New York midnight: 05:00 UTC
		"2026-11-26 23:59:59",
		"2026-11-27 00:00:00",
	} {
		db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES ($1, 'a')`, ts)
	}
	ny := mustZone(t, "America/New_York")
	s, err := OpenWith(t.Context(), withSessionZone(t, base, "Asia/Tokyo"), Options{TimestampZone: ny})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	day := mustDate(t, "2026-11-26")
	got, err := s.Counts(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), day, ny)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DayCounts{Date: day, Total: 2, Links: map[string]int64{"a": 2}}, got); diff != "" {
		t.Errorf("Counts mismatch (-want +got):\n%s", diff)
	}
}

// The timestamp zone is a PostgreSQL session setting; SQLite reads a ts
// without an offset as UTC and cannot be told otherwise.
func TestSQLiteRefusesATimestampZone(t *testing.T) {
	_, dsn := newSQLite(t)
	_, err := OpenWith(t.Context(), dsn, Options{TimestampZone: mustZone(t, "America/New_York")})
	errorContains(t, err, "STORE_TIMESTAMP_TZ", "PostgreSQL")
	if !isConfig(err) {
		t.Errorf("error %v is not marked as a configuration mistake", err)
	}
	s, err := OpenWith(t.Context(), dsn, Options{TimestampZone: time.UTC})
	if err != nil {
		t.Fatalf("UTC: %v", err)
	}
	s.Close()
}

// isConfig reports whether err is marked as a mistake in the store's
// configuration, which a retry cannot mend.
func isConfig(err error) bool { return errors.Is(err, ErrRefused) }

// The daily preset's one statement over many days runs with JIT on, and
// the statements run once per day without, unless the DSN chose: the
// statements below stand in for the preset's and report the setting they
// ran under, 1 for on.
func TestPostgresChunkStatementRunsWithJIT(t *testing.T) {
	_, base := pgtest.New(t)
	const jitOn = "CASE current_setting('jit') WHEN 'on' THEN 1 ELSE 0 END"
	q := mustQuery(t)(PresetQuery(PresetDaily))
	chunk, err := parseNamedWith("SELECT :first AS day, "+jitOn+" AS clicks", chunkParam, useChunk)
	if err != nil {
		t.Fatal(err)
	}
	q.total.chunk = &chunkQuery{postgres: chunk}
	perDay := mustQuery(t)(q.WithTotal("SELECT " + jitOn + " AS clicks WHERE :day <> ''"))
	days := daysAround(t, "2026-11-25")
	for _, tt := range []struct {
		name, param         string
		wantChunk, wantEach int64
	}{
		{"store_chooses", "", 1, 0},
		{"dsn_off_kept", "off", 0, 0},
		{"dsn_on_kept", "on", 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dsn := base
			if tt.param != "" {
				dsn += "&jit=" + tt.param
			}
			s := openStore(t, dsn)
			got, err := s.Totals(t.Context(), q, days, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if r := got[days[0]]; r.Clicks != tt.wantChunk {
				t.Errorf("the chunk statement ran with jit %d, want %d", r.Clicks, tt.wantChunk)
			}
			each, err := s.Totals(t.Context(), perDay, days, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range days {
				if each[d].Clicks != tt.wantEach {
					t.Errorf("%s's statement ran with jit %d, want %d", d, each[d].Clicks, tt.wantEach)
				}
			}
		})
	}
}

// The store's PostgreSQL sessions run without JIT compilation, which a
// per-day count pays for at every run and never earns back, unless the
// DSN asks for it.
func TestPostgresSessionsRunWithoutJIT(t *testing.T) {
	_, base := pgtest.New(t)
	for _, tt := range []struct {
		name, param, want string
	}{
		{"default_off", "", "off"},
		{"dsn_keeps_its_own", "on", "on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dsn := base
			if tt.param != "" {
				dsn += "&jit=" + tt.param
			}
			s := openStore(t, dsn)
			var got string
			if err := s.db.QueryRowContext(t.Context(), "SHOW jit").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("jit = %q, want %q", got, tt.want)
			}
		})
	}
}
