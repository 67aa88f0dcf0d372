package store

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// The probe finds, before any day is read, a query that does not fit the
// store (its table or column is missing), and passes one that fits; it
// prepares the statements without running them.
func TestProbe(t *testing.T) {
	day, _ := reconcile.ParseDate("2026-10-25")
	loc, _ := time.LoadLocation("Europe/Warsaw")
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			// An events database: the daily preset's table is not there.
			if _, err := db.Exec("DROP TABLE click_counts"); err != nil {
				t.Fatal(err)
			}
			events, _ := PresetQuery(PresetEvents)
			daily, _ := PresetQuery(PresetDaily)
			noColumn, err := CustomQuery("SELECT link_id, count(*) AS clicks FROM clicks WHERE clicked_at >= :from GROUP BY link_id")
			if err != nil {
				t.Fatal(err)
			}
			custom, _ := CustomQuery(b.eventsCustom)
			badTotal, err := custom.WithTotal("SELECT count(*) FROM no_such_table WHERE " + b.inDay)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				name    string
				q       Query
				wantBad string // "" for none
			}{
				{"events_preset_fits", events, ""},
				{"custom_query_fits", custom, ""},
				{"daily_preset_on_an_events_database", daily, "click_counts"},
				{"custom_query_names_a_missing_column", noColumn, "clicked_at"},
				{"custom_total_query_names_a_missing_table", badTotal, "no_such_table"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					err := Probe(t.Context(), storeDSN(t, dsn), Options{}, tt.q, day, loc)
					switch {
					case tt.wantBad == "" && err != nil:
						t.Errorf("Probe: %v", err)
					case tt.wantBad != "" && (!errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), tt.wantBad)):
						t.Errorf("Probe: %v; want ErrBadQuery naming %s", err, tt.wantBad)
					}
				})
			}
		})
	}
}

// A query is prepared, never run: one that would take a minute (or
// write) costs the probe nothing.
func TestProbeDoesNotRunTheQuery(t *testing.T) {
	_, dsn := newPostgres("")(t)
	q, err := CustomQuery(`SELECT link_id, count(*) AS clicks FROM clicks, (SELECT pg_sleep(60)) AS slow
WHERE ts >= :from AND ts < :to GROUP BY link_id`)
	if err != nil {
		t.Fatal(err)
	}
	day, _ := reconcile.ParseDate("2026-10-25")
	started := time.Now()
	if err := Probe(t.Context(), storeDSN(t, dsn), Options{}, q, day, time.UTC); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 20*time.Second {
		t.Errorf("the probe took %s: it ran the query", took)
	}
}

// A database that does not exist is refused for good (ErrRefused), a
// server that does not answer is not: a retry may help.
func TestProbeOpenErrors(t *testing.T) {
	_, good := newPostgres("")(t)
	events, _ := PresetQuery(PresetEvents)
	day, _ := reconcile.ParseDate("2026-10-25")
	u, err := url.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database"
	noDB := u.String()
	if err := Probe(t.Context(), storeDSN(t, noDB), Options{}, events, day, time.UTC); !errors.Is(err, ErrRefused) {
		t.Errorf("missing database: %v, want ErrRefused", err)
	}
	down := "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2"
	if err := Probe(t.Context(), storeDSN(t, down), Options{}, events, day, time.UTC); err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrBadQuery) {
		t.Errorf("server down: %v, want an error a retry may mend", err)
	}
}
