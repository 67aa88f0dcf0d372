package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
)

// zoneClicks are instants around 2026-10-25 (Warsaw's 25-hour day, CET
// from 01:00Z): three on it in Europe/Warsaw, two on it in UTC.
var zoneClicks = []string{
	"2026-10-24T21:30:00Z", // 2026-10-24 23:30 CEST: the day before in both
	"2026-10-24T22:30:00Z", // 2026-10-25 00:30 CEST; still the 24th in UTC
	"2026-10-25T12:00:00Z",
	"2026-10-25T22:30:00Z", // 2026-10-25 23:30 CET
	"2026-10-26T00:30:00Z", // the day after in both
}

// A custom query written as its author runs it in a session of their own
// zone (date_trunc('day', ts), ts::date on a timestamptz) counts the days
// of RECON_TZ: clickrecon runs it in a session whose TimeZone is RECON_TZ,
// whatever the role's or database's own, and says so. The presets,
// whose sessions stay in UTC, count the same days. With STORE_TIMESTAMP_TZ
// set, the custom query's session runs in that zone, and says it.
func TestPostgresCustomQueryRunsInTheRunsZone(t *testing.T) {
	db, base := pgtest.New(t)
	db.MustExec(`CREATE TABLE clicks (ts timestamptz NOT NULL, link_id text NOT NULL, country_code text)`)
	for _, ts := range zoneClicks {
		db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES ($1, 'lnk_a')`, ts)
	}
	warsaw := mustZone(t, "Europe/Warsaw")
	day := mustDate(t, "2026-10-25")
	truncDay := mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM clicks WHERE date_trunc('day', ts) = :day::date GROUP BY link_id`))
	castDay := mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM clicks WHERE ts::date = :day::date GROUP BY link_id`))
	withTotal, err := castDay.WithTotal(`SELECT count(*) AS clicks FROM clicks WHERE ts::date = :day::date`)
	if err != nil {
		t.Fatal(err)
	}
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, tt := range []struct {
		name    string
		opts    Options
		want    int64
		said    string // what the custom query's assumption names
		presets int64
	}{
		{"recon_tz", Options{}, 3, "Europe/Warsaw (RECON_TZ)", 3},
		{"store_timestamp_tz", Options{TimestampZone: mustZone(t, "UTC")}, 2, "UTC (STORE_TIMESTAMP_TZ)", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.Context(), storeDSN(t, withSessionZone(t, base, "Asia/Tokyo")), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			for name, q := range map[string]Query{"date_trunc": truncDay, "cast": castDay, "with_total": withTotal} {
				got, err := s.Counts(t.Context(), q, day, warsaw)
				if err != nil {
					t.Fatal(err)
				}
				if got.Total != tt.want {
					t.Errorf("%s: Counts = %d, want %d", name, got.Total, tt.want)
				}
				totals, err := s.Totals(t.Context(), q, []reconcile.Date{day}, warsaw)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(reconcile.Known(tt.want), totals[day]); diff != "" {
					t.Errorf("%s: Totals (-want +got):\n%s", name, diff)
				}
				as, err := s.Assumptions(t.Context(), q, warsaw)
				if err != nil {
					t.Fatal(err)
				}
				if len(as) != 1 || as[0].Kind != AssumedQueryZone || !strings.Contains(as[0].Message, tt.said) {
					t.Errorf("%s: Assumptions = %+v; want one that names %s", name, as, tt.said)
				}
			}
			got, err := s.Counts(t.Context(), events, day, warsaw)
			if err != nil || got.Total != tt.presets {
				t.Errorf("events preset: Counts = %d, %v; want %d", got.Total, err, tt.presets)
			}
			if as, err := s.Assumptions(t.Context(), events, warsaw); err != nil || len(as) != 0 {
				t.Errorf("events preset: Assumptions = %+v, %v; want none", as, err)
			}
		})
	}
}

// On MariaDB a custom query runs in a session whose time_zone is RECON_TZ
// when the server has its time-zone tables: DATE(ts) of a TIMESTAMP is
// then the day in that zone, and :from and :to are its wall-clock times.
// Without them (MariaDB's default) it cannot, and an offset would be
// wrong on either side of a DST change: the query runs in UTC, as
// before, and the assumption says so loudly, naming the tables to load.
func TestMySQLCustomQueryZoneNeedsTheTimeZoneTables(t *testing.T) {
	db, dsn := newMySQL(t)
	db.MustExec(`CREATE TABLE zclicks (ts TIMESTAMP(3) NOT NULL, link_id VARCHAR(64) NOT NULL)`)
	db.MustExec(`SET time_zone = '+00:00'`)
	for _, ts := range zoneClicks {
		db.MustExec(`INSERT INTO zclicks (ts, link_id) VALUES (?, 'lnk_a')`, strings.TrimSuffix(strings.Replace(ts, "T", " ", 1), "Z"))
	}
	var loaded bool
	if err := db.Get(&loaded, `SELECT CONVERT_TZ('2026-01-01 00:00:00', '+00:00', 'Europe/Warsaw') IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	warsaw := mustZone(t, "Europe/Warsaw")
	day := mustDate(t, "2026-10-25")
	s := openStore(t, dsn)
	for name, q := range map[string]Query{
		"date":   mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM zclicks WHERE DATE(ts) = :day GROUP BY link_id`)),
		"bounds": mustQuery(t)(CustomQuery(`SELECT link_id, count(*) AS clicks FROM zclicks WHERE ts >= :from AND ts < :to GROUP BY link_id`)),
	} {
		got, err := s.Counts(t.Context(), q, day, warsaw)
		if err != nil {
			t.Fatal(err)
		}
		as, err := s.Assumptions(t.Context(), q, warsaw)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 1 || as[0].Kind != AssumedQueryZone {
			t.Fatalf("%s: Assumptions = %+v; want the query's zone said", name, as)
		}
		msg := as[0].Message
		switch {
		case loaded:
			if got.Total != 3 || !strings.Contains(msg, "Europe/Warsaw (RECON_TZ)") || strings.Contains(msg, "time-zone tables") {
				t.Errorf("%s: Counts = %d (want 3), said %q", name, got.Total, msg)
			}
		case name == "date":
			// In UTC, as before: DATE(ts) is the UTC day.
			if got.Total != 2 {
				t.Errorf("%s: Counts = %d, want the 2 of the UTC day", name, got.Total)
			}
		default:
			// :from and :to are the day's instants, in UTC.
			if got.Total != 3 {
				t.Errorf("%s: Counts = %d, want 3", name, got.Total)
			}
		}
		if !loaded && (!strings.Contains(msg, "time-zone tables") || !strings.Contains(msg, "UTC") || !strings.Contains(msg, "Europe/Warsaw")) {
			t.Errorf("%s: said %q; want it to say loudly that the zone tables are missing and the query runs in UTC", name, msg)
		}
	}
}
