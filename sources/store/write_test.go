package store

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// Clicks reads an hour's rows on every backend as UTC instants, whatever
// offset a row was written with, and NULL countries as "".
func TestClicksReadsAnHour(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{
				{"2026-10-24T02:00:00.000Z", "lnk_a", "PL"},
				{"2026-10-24T04:59:59.999+02:00", "lnk_b", ""}, // 02:59:59.999Z
				{"2026-10-24T03:00:00.000Z", "lnk_c", "DE"},    // the next hour
				{"2026-10-24T01:59:59.999Z", "lnk_c", "DE"},    // the hour before
			})
			s := openStore(t, dsn)
			q := mustQuery(t)(PresetQuery(PresetEvents))
			from := time.Date(2026, 10, 24, 2, 0, 0, 0, time.UTC)
			got, err := s.Clicks(t.Context(), q, from, from.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b Click) int { return a.TS.Compare(b.TS) })
			want := []Click{
				{from, "lnk_a", "PL", "", false},
				{from.Add(time.Hour - time.Millisecond), "lnk_b", "", "", false},
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("Clicks (-want +got):\n%s", diff)
			}
			if _, err := s.Clicks(t.Context(), mustQuery(t)(PresetQuery(PresetDaily)), from, from.Add(time.Hour)); !errors.Is(err, ErrNotSupported) {
				t.Errorf("daily preset: err %v, want ErrNotSupported", err)
			}
		})
	}
}

// The Writer inserts in one transaction after the check, refuses when an
// hour's count moved, and takes a custom insert with named parameters.
func TestWriterInsert(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			if _, err := db.Exec("ALTER TABLE clicks ADD COLUMN source text"); err != nil {
				t.Fatal(err)
			}
			insertClicks(t, db, []click{{"2026-10-24T02:00:00.000Z", "lnk_a", "PL"}})
			from := time.Date(2026, 10, 24, 2, 0, 0, 0, time.UTC)
			hour := []HourCheck{{From: from, To: from.Add(time.Hour), Clicks: 1}}
			lost := []Click{{from.Add(1500 * time.Millisecond), "x'); DROP TABLE clicks; --", "", "", false}, {from.Add(time.Second), "lnk_b", "DE", "", false}}

			w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "INSERT INTO clicks (ts, link_id, country_code, source) VALUES (:ts, :link_id, :country_code, 'repair')", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			stale := []HourCheck{{From: from, To: from.Add(time.Hour), Clicks: 0}}
			write := []HourWrite{{From: from, To: from.Add(time.Hour), Clicks: lost}}
			if got, err := w.Insert(t.Context(), stale, write, nil); !errors.Is(err, ErrChanged) || got.Inserted != 0 {
				t.Fatalf("stale check: %+v, %v; want ErrChanged", got, err)
			}
			if got, err := w.Insert(t.Context(), hour, write, nil); err != nil || got.Inserted != 2 || got.Refused[0] != nil {
				t.Fatalf("Insert: %+v, %v", got, err)
			}
			s := openStore(t, dsn)
			got, err := s.Clicks(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), from, from.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || !slices.ContainsFunc(got, func(c Click) bool { return c == lost[0] }) {
				t.Errorf("after Insert: %v", got)
			}
			var repaired int
			if err := db.Get(&repaired, "SELECT count(*) FROM clicks WHERE source = 'repair'"); err != nil || repaired != 2 {
				t.Errorf("%d rows with the custom insert's source (%v), want 2", repaired, err)
			}

			_, err = OpenWriter(t.Context(), storeWriteDSN(t, dsn), "INSERT INTO clicks (ts, link_id) VALUES (:ts, :link)", Options{})
			if err == nil || !strings.Contains(err.Error(), "unknown parameter :link") || !errors.Is(err, ErrRefused) {
				t.Errorf("unknown parameter: %v", err)
			}
		})
	}
}
