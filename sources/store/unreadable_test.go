package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// newLooseSQLite creates a SQLite events table the way a user may have
// made it before the reference schema: no CHECK on ts, no type, so epoch
// numbers, times without an offset and garbage get in.
func newLooseSQLite(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clicks.db")
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.MustExec(`CREATE TABLE clicks (ts, link_id TEXT NOT NULL, country_code TEXT)`)
	db.MustExec(`CREATE INDEX clicks_ts_instant_idx ON clicks (julianday(ts))`)
	return db, "sqlite:" + path
}

// Rows whose click time cannot be read are counted and reported, never
// dropped; a time without an offset is read as UTC.
func TestSQLiteUnreadableTimes(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	day := mustDate(t, "2026-11-26")
	tests := []struct {
		name       string
		ts         []any
		wantTotal  int64
		unreadable int64
	}{
		{
			name:      "rfc3339_and_utc_without_offset_are_read",
			ts:        []any{"2026-11-26T10:00:00Z", "2026-11-26T10:00:00+01:00", "2026-11-26 10:00:00", "2026-11-26T23:59:59.999", "2026-11-27 00:00:00"},
			wantTotal: 4,
		},
		{
			name:       "epoch_seconds",
			ts:         []any{"2026-11-26T10:00:00Z", int64(1795910398), "1795910398"},
			wantTotal:  1,
			unreadable: 2,
		},
		{
			name:       "epoch_milliseconds",
			ts:         []any{int64(1795910398000)},
			unreadable: 1,
		},
		{
			name:       "garbage_and_null",
			ts:         []any{"2026-11-26T10:00:00Z", "yesterday", "2026-11-26T10:00:00+0100", nil, ""},
			wantTotal:  1,
			unreadable: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, dsn := newLooseSQLite(t)
			for _, ts := range tt.ts {
				db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES (?, 'a')`, ts)
			}
			s := openStore(t, dsn)
			got, err := s.Counts(t.Context(), events, day, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != tt.wantTotal {
				t.Errorf("Counts total = %d, want %d", got.Total, tt.wantTotal)
			}
			err = s.CheckTimes(t.Context(), events)
			if tt.unreadable == 0 {
				if err != nil {
					t.Fatalf("CheckTimes: %v, want nil", err)
				}
				return
			}
			var ue *UnreadableError
			if !errors.As(err, &ue) {
				t.Fatalf("CheckTimes: %v, want an UnreadableError", err)
			}
			if diff := cmp.Diff(&UnreadableError{Rows: tt.unreadable}, ue); diff != "" {
				t.Errorf("UnreadableError mismatch (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrBadQuery) {
				t.Errorf("error %v is not ErrBadQuery: a retry cannot mend it", err)
			}
			errorContains(t, err, "could belong to any day", "julianday(ts) IS NULL")
		})
	}
}

// The reference schemas cannot hold an unreadable time; on PostgreSQL a
// NULL ts in a table that allows it is one.
func TestCheckTimes(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{{ts: "2026-11-26T10:00:00.000Z", link: "a"}})
			s := openStore(t, dsn)
			if err := s.CheckTimes(t.Context(), events); err != nil {
				t.Errorf("CheckTimes on the reference schema: %v", err)
			}
		})
	}
	t.Run("postgres_null_ts", func(t *testing.T) {
		db, dsn := pgtest.New(t)
		db.MustExec(`CREATE TABLE clicks (ts timestamptz, link_id text NOT NULL, country_code text)`)
		db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES (now(), 'a'), (NULL, 'a'), (NULL, 'b')`)
		s := openStore(t, dsn)
		var ue *UnreadableError
		if err := s.CheckTimes(t.Context(), events); !errors.As(err, &ue) || ue.Rows != 2 {
			t.Errorf("CheckTimes: %v, want 2 unreadable rows", err)
		}
	})
	t.Run("other_queries_have_nothing_to_check", func(t *testing.T) {
		db, dsn := newLooseSQLite(t)
		db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES ('garbage', 'a')`)
		s := openStore(t, dsn)
		for _, q := range []Query{mustQuery(t)(PresetQuery(PresetDaily)), mustQuery(t)(CustomQuery("SELECT link_id, count(*) AS clicks FROM clicks GROUP BY link_id"))} {
			if err := s.CheckTimes(t.Context(), q); err != nil {
				t.Errorf("CheckTimes with the %s query: %v, want nil", q.Name(), err)
			}
		}
	})
}

// The check for unreadable times is an index search, not a table scan.
func TestSQLiteUnreadableCheckUsesTheIndex(t *testing.T) {
	db, _ := newSQLite(t)
	var plan []struct {
		ID, Parent, NotUsed int
		Detail              string
	}
	if err := db.Select(&plan, "EXPLAIN QUERY PLAN "+unreadableSQLite); err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, p := range plan {
		details = append(details, p.Detail)
	}
	if got := strings.Join(details, "\n"); !strings.Contains(got, "INDEX clicks_ts_instant_idx") {
		t.Errorf("plan does not use clicks_ts_instant_idx:\n%s", got)
	}
}
