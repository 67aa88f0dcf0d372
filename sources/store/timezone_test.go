package store

import (
	"errors"
	"net/url"
	"strings"
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
	s, err := Open(t.Context(), storeDSN(t, withSessionZone(t, base, "Asia/Tokyo")), Options{TimestampZone: ny})
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

// On SQLite, STORE_TIMESTAMP_TZ is the zone of ts text written without
// an offset: such a row is local wall-clock time, and its day and hour are
// the zone's, DST days of 23 and 25 hours included. Text with an offset
// or Z is read as written.
func TestSQLiteTimestampZone(t *testing.T) {
	db, dsn := newLooseSQLite(t) // the reference schema wants an offset
	for _, ts := range []string{
		"2026-10-24 23:30:00",       // 10-24, an hour before midnight in Warsaw
		"2026-10-25 00:00:00",       // Warsaw midnight (CEST): 10-25
		"2026-10-25 02:30:00",       // the hour that happens twice: 10-25
		"2026-10-25 23:59:59",       // 10-25 (CET)
		"2026-10-26 00:00:00",       // 10-26
		"2026-10-25T22:30:00Z",      // as written: 23:30 CET, 10-25
		"2026-10-25T23:30:00+01:00", // as written: 10-25
		"2026-10-24T23:30:00+00:00", // as written: 01:30 CEST, 10-25
		"2026-03-28 23:30:00",       // 03-28
		"2026-03-29 01:30:00",       // 03-29 (CET)
		"2026-03-29 03:30:00",       // 03-29 (CEST), an hour after 01:30 CET
		"2026-03-29 23:30:00",       // 03-29
	} {
		db.MustExec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, 'a', 'PL')`, ts)
	}
	waw := mustZone(t, "Europe/Warsaw")
	s, err := Open(t.Context(), storeDSN(t, dsn), Options{TimestampZone: waw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	q := mustQuery(t)(PresetQuery(PresetEvents))
	tests := []struct {
		name  string
		day   string
		want  int64
		hours int
	}{
		{"day_before_autumn", "2026-10-24", 1, 24},
		{"autumn_dst_day_has_25_hours", "2026-10-25", 6, 25},
		{"day_after_autumn", "2026-10-26", 1, 24},
		{"day_before_spring", "2026-03-28", 1, 24},
		{"spring_dst_day_has_23_hours", "2026-03-29", 3, 23},
	}
	var days []reconcile.Date
	for _, tt := range tests {
		days = append(days, mustDate(t, tt.day))
	}
	totals, err := s.Totals(t.Context(), q, days, waw)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			day := mustDate(t, tt.day)
			if got := totals[day]; got.Err != nil || got.Clicks != tt.want {
				t.Errorf("Totals: %d (%v), want %d", got.Clicks, got.Err, tt.want)
			}
			counts, err := s.Counts(t.Context(), q, day, waw)
			if err != nil || counts.Total != tt.want || counts.Links["a"] != tt.want {
				t.Errorf("Counts: %+v (%v), want %d", counts, err, tt.want)
			}
			countries, err := s.CountryCounts(t.Context(), q, day, waw)
			if err != nil || countries["PL"] != tt.want {
				t.Errorf("CountryCounts: %v (%v), want PL %d", countries, err, tt.want)
			}
			hours, err := s.HourlyCounts(t.Context(), q, day, waw)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, h := range hours {
				sum += h.Clicks
			}
			if len(hours) != tt.hours || sum != tt.want {
				t.Errorf("HourlyCounts: %d hours holding %d clicks, want %d holding %d", len(hours), sum, tt.hours, tt.want)
			}
		})
	}
	// The wall-clock 02:30 of the autumn day is counted in the second
	// 02:00 (CET, 01:00 UTC): the first one cannot be told from it.
	hours, err := s.HourlyCounts(t.Context(), q, mustDate(t, "2026-10-25"), waw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{ // by the hour's start in UTC
		"10-24 22:00": 1, // 00:00 CEST: the wall-clock midnight
		"10-24 23:00": 1, // 01:00 CEST: 23:30+00:00
		"10-25 01:00": 1, // 02:00 CET: the wall-clock 02:30
		"10-25 22:00": 3, // 23:00 CET: 22:30Z, 23:30+01:00 and the wall-clock 23:59:59
	}
	for _, h := range hours {
		at := h.Start.UTC().Format("01-02 15:04")
		if h.Clicks != want[at] {
			t.Errorf("hour %s (%s UTC): %d clicks, want %d", h.Start.Format("15:04 MST"), at, h.Clicks, want[at])
		}
	}
	// Without the zone, the wall-clock texts are read as UTC: the day
	// holds other clicks.
	utc, err := Open(t.Context(), storeDSN(t, dsn), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer utc.Close()
	counts, err := utc.Counts(t.Context(), q, mustDate(t, "2026-10-24"), waw)
	if err != nil || counts.Total != 0 {
		t.Errorf("read as UTC: %d (%v), want 0: 23:30 is 01:30 the next day in Warsaw", counts.Total, err)
	}
}

// A custom query compares ts with :from and :to, UTC instants, in its
// own SQL: on SQLite, clickrecon cannot make it read ts in another zone,
// and says so rather than count in the wrong one. Repair, which places
// clicks exactly in time, does not read such a store either.
func TestSQLiteTimestampZoneRefusesCustomQueries(t *testing.T) {
	_, dsn := newLooseSQLite(t)
	waw := mustZone(t, "Europe/Warsaw")
	s, err := Open(t.Context(), storeDSN(t, dsn), Options{TimestampZone: waw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	q := mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM clicks WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY link_id`))
	day := mustDate(t, "2026-10-25")
	_, err = s.Counts(t.Context(), q, day, waw)
	errorContains(t, err, "STORE_TIMESTAMP_TZ", "events preset")
	totals, _ := s.Totals(t.Context(), q, []reconcile.Date{day}, waw)
	if err := totals[day].Err; err == nil || !strings.Contains(err.Error(), "STORE_TIMESTAMP_TZ") {
		t.Errorf("Totals: %v, want an error naming STORE_TIMESTAMP_TZ", err)
	}
	from := time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)
	_, err = s.Clicks(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), from, from.Add(time.Hour))
	errorContains(t, err, "STORE_TIMESTAMP_TZ")
}

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

// CheckZone refuses, before anything is read, what the zone cannot apply
// to: a custom query on SQLite, and repair of a SQLite store.
func TestCheckZone(t *testing.T) {
	_, lite := newLooseSQLite(t)
	pg := "postgres://recon@127.0.0.1:5432/test"
	events := mustQuery(t)(PresetQuery(PresetEvents))
	custom := mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM clicks GROUP BY link_id`))
	waw := mustZone(t, "Europe/Warsaw")
	tests := []struct {
		name   string
		dsn    string
		q      Query
		zone   *time.Location
		repair bool
		want   string
	}{
		{"sqlite_events", lite, events, waw, false, ""},
		{"sqlite_custom", lite, custom, waw, false, "events preset only"},
		{"sqlite_repair", lite, events, waw, true, "repair does not read"},
		{"sqlite_utc_custom", lite, custom, time.UTC, false, ""},
		{"postgres_custom", pg, custom, waw, false, ""},
		{"postgres_repair", pg, events, waw, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckZone(storeDSN(t, tt.dsn), tt.q, tt.zone, tt.repair)
			if tt.want == "" {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			errorContains(t, err, "STORE_TIMESTAMP_TZ=Europe/Warsaw", tt.want)
		})
	}
}
