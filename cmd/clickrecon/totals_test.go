package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// brokenLinkQueries are custom per-link count queries, per backend, whose
// rows are not (link_id, clicks): they prepare, so the store's probe
// passes them, but any per-link read fails and says so in the log, naming
// the column, which is how the tests below see whether a run asked the
// store for per-link counts.
var brokenLinkQueries = map[string]string{
	"postgres": "SELECT link_id AS per_link_counts_never_read, count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to GROUP BY link_id",
	"sqlite":   "SELECT link_id AS per_link_counts_never_read, count(*) AS clicks FROM clicks WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY link_id",
}

// totalQueries count one day of the reference events table, per backend.
var totalQueries = map[string]string{
	"postgres": "SELECT count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to",
	"sqlite":   "SELECT count(*) AS clicks FROM clicks WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)",
}

// monthOfClicks is three clicks a day on two links, 2026-10-29 to
// 2026-11-28 (31 days in Europe/Warsaw).
func monthOfClicks() []elidotest.Click {
	var out []elidotest.Click
	start := utc("2026-10-29T09:00:00Z")
	for d := 0; d < 31; d++ {
		for i := 0; i < 3; i++ {
			out = append(out, elidotest.Click{
				TS:          start.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*time.Hour),
				LinkID:      fmt.Sprintf("lnk_%d", i%2),
				CountryCode: "PL",
			})
		}
	}
	return out
}

// A clean window of up to 31 days costs exactly one /timeseries and one
// /summary, and the store's totals only: not one per-link count, which
// only a day that differs needs. The same run with a day that differs
// does read that day's per-link counts, which shows the check can fail.
func TestCleanRunReadsTotalsOnly(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite"} {
		for _, tt := range []struct {
			name  string
			lose  bool
			links bool // per-link counts read
		}{
			{"clean", false, false},
			{"one_day_differs", true, true},
		} {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				api := monthOfClicks()
				local := api
				if tt.lose {
					local = append(append([]elidotest.Click{}, api[:30]...), api[31:]...) // 2026-11-08 lost a click
				}
				f := newFixture(t, backend, api, local)
				dir := t.TempDir()
				linkFile, totalFile := filepath.Join(dir, "links.sql"), filepath.Join(dir, "total.sql")
				if err := os.WriteFile(linkFile, []byte(brokenLinkQueries[backend]), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(totalFile, []byte(totalQueries[backend]), 0o644); err != nil {
					t.Fatal(err)
				}
				f.env["STORE_QUERY_FILE"], f.env["STORE_TOTAL_QUERY_FILE"] = linkFile, totalFile
				r := f.run("--from", "2026-10-29", "--to", "2026-11-28")
				if r.code != exitOK {
					t.Fatalf("exit %d\n%s", r.code, r.stderr)
				}
				got := f.readReport()
				if got.Coverage.Days != 31 || got.Coverage.Unverifiable != 0 {
					t.Errorf("coverage %+v, want 31 verified days", got.Coverage)
				}
				if read := strings.Contains(r.stderr, "per_link_counts_never_read"); read != tt.links {
					t.Errorf("per-link counts read: %v, want %v\n%s", read, tt.links, r.stderr)
				}
				if tt.lose {
					if got.Coverage.Missing != 1 || len(got.Links) != 0 {
						t.Errorf("coverage %+v with %d link rows, want one missing day and no link rows without the store's links", got.Coverage, len(got.Links))
					}
					if text := findingText(got.Findings, "drilldown_incomplete"); !strings.Contains(text, "per-link counts could not be read") {
						t.Errorf("findings %+v, want a note that the store's per-link counts could not be read", got.Findings)
					}
					return
				}
				if got.Coverage.Match != 31 {
					t.Errorf("coverage %+v, want 31 matching days", got.Coverage)
				}
				if diff := cmp.Diff(map[string]int{"summary": 1, "timeseries": 1}, f.elido.Requests()); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// STORE_TIMESTAMP_TZ reaches the store: PostgreSQL reads a timestamp
// (without time zone) ts in it, and SQLite a ts written as text without an
// offset, over the autumn DST change too. Read as UTC, the same store has
// gaps that the drill-down says look like a shifted store.
func TestRunStoreTimestampZone(t *testing.T) {
	api := clicksAt("lnk_a", "2026-11-26T12:00:00Z", "2026-11-26T22:30:00Z") // 13:00 and 23:30 in Warsaw
	t.Run("sqlite_wall_clock_times", func(t *testing.T) {
		// 23:30 CEST on the 24th, 02:30 CEST (the first of the two), 23:30
		// CET on the 25th (25 hours), 13:00 CET on the 26th.
		api := clicksAt("lnk_a", "2026-10-24T21:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T22:30:00Z", "2026-10-26T12:00:00Z")
		f := newFixture(t, "sqlite", api, nil)
		db, dsn := newStoreDB(t, "sqlite", "events")
		// The reference schema wants an offset; this table was made
		// without one.
		for _, stmt := range []string{`DROP TABLE clicks`, `CREATE TABLE clicks (ts TEXT NOT NULL, link_id TEXT NOT NULL, country_code TEXT)`,
			`CREATE INDEX clicks_ts_instant_idx ON clicks (julianday(ts))`} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		for _, ts := range []string{"2026-10-24 23:30:00", "2026-10-25 02:30:00", "2026-10-25 23:30:00", "2026-10-26 13:00:00"} {
			if _, err := db.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, 'lnk_a', 'PL')`, ts); err != nil {
				t.Fatal(err)
			}
		}
		f.env["STORE_DSN"] = dsn
		for _, tt := range []struct {
			zone   string
			status []string
		}{
			{"UTC", []string{"missing", "match", "surplus"}},
			{"Europe/Warsaw", []string{"match", "match", "match"}},
		} {
			f.env["STORE_TIMESTAMP_TZ"] = tt.zone
			r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
			rep := f.readReport()
			var got []string
			for _, d := range rep.Days {
				got = append(got, string(d.Status))
			}
			if strings.Join(got, " ") != strings.Join(tt.status, " ") {
				t.Errorf("STORE_TIMESTAMP_TZ=%s: days %v, want %v (exit %d)\n%s", tt.zone, got, tt.status, r.code, r.stderr)
			}
		}
	})
	t.Run("sqlite_custom_query_refuses_a_zone", func(t *testing.T) {
		// A custom query compares ts with UTC instants in its own SQL:
		// refused before anything is read, rather than counted in the
		// wrong zone.
		f := newFixture(t, "sqlite", api, api)
		path := filepath.Join(t.TempDir(), "count.sql")
		if err := os.WriteFile(path, []byte(`SELECT link_id, count(*) AS clicks FROM clicks WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY link_id`), 0o600); err != nil {
			t.Fatal(err)
		}
		f.env["STORE_QUERY_FILE"], f.env["STORE_TIMESTAMP_TZ"] = path, "Europe/Warsaw"
		r := f.run("--date", "2026-11-26")
		if r.code != exitUsage || !strings.Contains(r.stderr, "STORE_TIMESTAMP_TZ=Europe/Warsaw on SQLite applies to the events preset only") {
			t.Errorf("exit %d, want 2 naming STORE_TIMESTAMP_TZ\n%s", r.code, r.stderr)
		}
		if n := f.elido.Requests()["timeseries"]; n != 0 {
			t.Errorf("%d requests to Elido before the refusal", n)
		}
	})
	t.Run("postgres_wall_clock_times", func(t *testing.T) {
		f := newFixture(t, "postgres", api, nil)
		db, dsn := newStoreDB(t, "postgres", "events")
		// A receiver that wrote Warsaw wall-clock times into a timestamp
		// column. Read as UTC, 23:30 would be 00:30 the next day in Warsaw.
		if _, err := db.Exec(`ALTER TABLE clicks ALTER COLUMN ts TYPE timestamp USING ts AT TIME ZONE 'UTC'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES ('2026-11-26 13:00:00', 'lnk_a', 'PL'), ('2026-11-26 23:30:00', 'lnk_a', 'PL')`); err != nil {
			t.Fatal(err)
		}
		f.env["STORE_DSN"] = dsn
		for _, tt := range []struct {
			zone   string
			status reconcile.Status
		}{
			{"UTC", "missing"},
			{"Europe/Warsaw", "match"},
		} {
			f.env["STORE_TIMESTAMP_TZ"] = tt.zone
			r := f.run("--date", "2026-11-26")
			if r.code != exitOK {
				t.Fatalf("%s: exit %d\n%s", tt.zone, r.code, r.stderr)
			}
			if got := f.readReport().Days[0].Status; got != tt.status {
				t.Errorf("STORE_TIMESTAMP_TZ=%s: status %s, want %s", tt.zone, got, tt.status)
			}
		}
	})
}
