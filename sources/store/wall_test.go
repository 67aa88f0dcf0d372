package store

import (
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
)

func wallOf(t *testing.T, s string) time.Time {
	t.Helper()
	w, err := time.Parse(wallLayout, s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The wall-clock rule: a repeated wall time is the later instant, a
// skipped one is read with the offset before the jump, in zones east and
// west of Greenwich (Go's own time.Date picks the earlier instant of a
// repeated New York hour, so the rule cannot be left to it).
func TestWallInstant(t *testing.T) {
	for _, tt := range []struct {
		zone, wall, want string
		skipped          bool
	}{
		{"Europe/Warsaw", "2026-10-25 01:59:59.999", "2026-10-24T23:59:59.999Z", false},
		{"Europe/Warsaw", "2026-10-25 02:00:00.000", "2026-10-25T01:00:00Z", false},
		{"Europe/Warsaw", "2026-10-25 02:59:59.999", "2026-10-25T01:59:59.999Z", false},
		{"Europe/Warsaw", "2026-10-25 03:00:00.000", "2026-10-25T02:00:00Z", false},
		{"Europe/Warsaw", "2026-03-29 01:59:59.999", "2026-03-29T00:59:59.999Z", false},
		{"Europe/Warsaw", "2026-03-29 02:30:00.000", "2026-03-29T01:30:00Z", true},
		{"Europe/Warsaw", "2026-03-29 03:30:00.000", "2026-03-29T01:30:00Z", false},
		{"America/New_York", "2026-11-01 01:30:00.000", "2026-11-01T06:30:00Z", false},
		{"America/New_York", "2026-03-08 02:30:00.000", "2026-03-08T07:30:00Z", true},
		{"America/New_York", "2026-03-08 03:30:00.000", "2026-03-08T07:30:00Z", false},
		{"Australia/Lord_Howe", "2026-04-05 01:45:00.000", "2026-04-04T15:15:00Z", false}, // repeated half hour: the later (+10:30)
		{"UTC", "2026-10-25 02:30:00.000", "2026-10-25T02:30:00Z", false},
	} {
		got, skipped := WallInstant(wallOf(t, tt.wall), mustZone(t, tt.zone))
		if got.UTC().Format(time.RFC3339Nano) != tt.want || skipped != tt.skipped {
			t.Errorf("WallInstant(%s, %s) = %s, %v; want %s, %v", tt.wall, tt.zone, got.UTC().Format(time.RFC3339Nano), skipped, tt.want, tt.skipped)
		}
	}
}

// wallBound is the first wall time the rule reads as the instant or
// later: a skipped hour goes with the hour after the jump, the two
// repeated hours' wall times with the second.
func TestWallBound(t *testing.T) {
	for _, tt := range []struct{ zone, at, want string }{
		{"Europe/Warsaw", "2026-03-29T01:00:00Z", "2026-03-29 02:00:00.000"}, // 03:00 CEST: the skipped 02:xx read as after it
		{"Europe/Warsaw", "2026-03-29T00:00:00Z", "2026-03-29 01:00:00.000"},
		{"Europe/Warsaw", "2026-03-29T02:00:00Z", "2026-03-29 04:00:00.000"},
		{"Europe/Warsaw", "2026-10-25T00:00:00Z", "2026-10-25 02:00:00.000"}, // the first 02:00 (CEST): nothing reads as inside it
		{"Europe/Warsaw", "2026-10-25T01:00:00Z", "2026-10-25 02:00:00.000"},
		{"Europe/Warsaw", "2026-10-25T02:00:00Z", "2026-10-25 03:00:00.000"},
		{"America/New_York", "2026-11-01T05:00:00Z", "2026-11-01 01:00:00.000"},
		{"America/New_York", "2026-11-01T06:00:00Z", "2026-11-01 01:00:00.000"},
		{"America/New_York", "2026-03-08T07:00:00Z", "2026-03-08 02:00:00.000"},
	} {
		at, err := time.Parse(time.RFC3339, tt.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := wallBound(at, mustZone(t, tt.zone)).Format(wallLayout); got != tt.want {
			t.Errorf("wallBound(%s, %s) = %s, want %s", tt.at, tt.zone, got, tt.want)
		}
	}
}

// PostgreSQL reads a timestamp in its session TimeZone by the same rule,
// which the MySQL and SQLite bounds are computed to follow, whatever span
// a zone repeats or skips (Troll's two hours, Chatham's hour at :45).
func TestWallInstantIsPostgreSQLs(t *testing.T) {
	db, _ := pgtest.New(t)
	for _, zone := range []string{"Europe/Warsaw", "America/New_York", "Australia/Lord_Howe", "Antarctica/Troll", "Pacific/Chatham"} {
		loc := mustZone(t, zone)
		for _, day := range []string{"2026-03-08", "2026-03-29", "2026-04-05", "2026-09-27", "2026-10-04", "2026-10-25", "2026-11-01"} {
			start, _ := mustDate(t, day).Bounds(time.UTC)
			for m := 0; m < 24*60; m += 15 {
				w := start.Add(time.Duration(m) * time.Minute)
				var pg time.Time
				if err := db.QueryRow("SELECT ($1::timestamp AT TIME ZONE $2)", w.Format(wallLayout), zone).Scan(&pg); err != nil {
					t.Fatal(err)
				}
				if got, _ := WallInstant(w, loc); !got.Equal(pg) {
					t.Fatalf("%s in %s: WallInstant %s, PostgreSQL %s", w.Format(wallLayout), zone, got.UTC(), pg.UTC())
				}
			}
		}
	}
}

// The hours an autumn day repeats are one row when merged; other days
// are left as they are.
func TestMergeShared(t *testing.T) {
	warsaw := mustZone(t, "Europe/Warsaw")
	start, end := mustDate(t, "2026-10-25").Bounds(warsaw)
	var hours []reconcile.HourCount
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		hours = append(hours, reconcile.HourCount{Start: h, Clicks: 1})
	}
	got := MergeShared(hours, warsaw)
	if len(got) != 24 || got[2].Clicks != 2 || !got[2].Start.Equal(start.Add(2*time.Hour)) || got[3].Clicks != 1 {
		t.Errorf("MergeShared = %v", got)
	}
	if got := MergeShared(hours, nil); len(got) != 25 {
		t.Errorf("MergeShared without a zone merged: %v", got)
	}
	// A repeated span other than one whole hour: every hour holding one
	// of its wall times, in either showing, is in the one row.
	for _, tt := range []struct {
		zone, day      string
		first, n, rows int // the merged row's index, its hours, the rows of the day
	}{
		{"Antarctica/Troll", "2026-10-25", 1, 4, 23},    // 01:00–02:59 twice: 01:00 +02 to 03:00 +00
		{"Pacific/Chatham", "2026-04-05", 2, 3, 23},     // 02:45–03:44 twice: 02:00 +1345 to 04:00 +1245
		{"Australia/Lord_Howe", "2026-04-05", 1, 2, 24}, // 01:30–01:59 twice
	} {
		zone := mustZone(t, tt.zone)
		start, end := mustDate(t, tt.day).Bounds(zone)
		var hours []reconcile.HourCount
		for h := start; h.Before(end); h = h.Add(time.Hour) {
			hours = append(hours, reconcile.HourCount{Start: h, Clicks: 1})
		}
		got := MergeShared(hours, zone)
		if len(got) != tt.rows || got[tt.first].Clicks != int64(tt.n) || !got[tt.first].Start.Equal(start.Add(time.Duration(tt.first)*time.Hour)) || got[tt.first+1].Clicks != 1 {
			t.Errorf("%s %s: MergeShared = %v", tt.zone, tt.day, got)
		}
	}
}

// Naive tells a column of wall-clock times from one of instants.
func TestNaive(t *testing.T) {
	day := mustDate(t, "2026-10-25")
	w := reconcile.Window{From: day, To: day, Loc: time.UTC}
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, tt := range []struct {
		name, column string
		new          func(*testing.T) (*sqlx.DB, string)
		want         string // Naive.Column; "" for instants
	}{
		{"postgres_timestamptz", "timestamptz", newPostgres(""), ""},
		{"postgres_timestamp", "timestamp(3)", newPostgres(""), "clicks.ts (timestamp(3) without time zone)"},
		{"mysql_datetime", "DATETIME(3)", newMySQL, "clicks.ts (DATETIME(3))"},
		{"mysql_timestamp", "TIMESTAMP(3) NULL", newMySQL, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, raw := tt.new(t)
			db.MustExec("ALTER TABLE clicks " + map[bool]string{true: "MODIFY ts " + tt.column, false: "ALTER COLUMN ts TYPE " + tt.column}[strings.HasPrefix(tt.name, "mysql")])
			s := openStore(t, raw)
			got, err := s.Naive(t.Context(), events, w)
			if err != nil {
				t.Fatal(err)
			}
			if got.Column != tt.want || (tt.want != "" && got.Zone != time.UTC) {
				t.Errorf("Naive = %+v, want column %q in UTC", got, tt.want)
			}
			if tt.want == "" && (got.Note() != "" || got.WallZone() != nil) {
				t.Errorf("a column of instants: note %q, wall zone %v", got.Note(), got.WallZone())
			}
		})
	}
}
