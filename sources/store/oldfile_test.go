package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// copyFixture copies testdata/name into a fresh folder and returns its path,
// so that a test may open it for writing without changing the fixture.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSQLiteStoreWrittenByModernc checks that a click store written with
// modernc.org/sqlite v1.62.0 (clickrecon's embedded SQLite before
// ncruces/go-sqlite3) is read and repaired alike: testdata/store-modernc.db
// holds the events and daily reference schemas, clicks written as text in
// the forms the schema documents, and clicks a Go writer on
// modernc.org/sqlite with _time_format=sqlite stored from time.Time values
// (2026-10-25 22:59:59.999+00:00).
func TestSQLiteStoreWrittenByModernc(t *testing.T) {
	path := copyFixture(t, "store-modernc.db")
	warsaw := mustZone(t, "Europe/Warsaw")
	day := mustDate(t, "2026-10-25") // 25 hours: the clocks go back
	s := openStore(t, "sqlite:"+path)

	events := mustQuery(t)(PresetQuery(PresetEvents))
	got, err := s.Counts(t.Context(), events, day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	want := DayCounts{Date: day, Total: 5, Links: map[string]int64{"lnk_a": 2, "lnk_b": 2, "lnk_c": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events Counts (-want +got):\n%s", diff)
	}
	got, err = s.Counts(t.Context(), mustQuery(t)(PresetQuery(PresetDaily)), day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	want = DayCounts{Date: day, Total: 9, Links: map[string]int64{"lnk_a": 7, "lnk_b": 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("daily Counts (-want +got):\n%s", diff)
	}

	from, to := day.Bounds(warsaw)
	clicks, err := s.Clicks(t.Context(), events, from, to)
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		t.Helper()
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	wantClicks := []Click{
		{TS: utc("2026-10-24T22:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: utc("2026-10-24T23:30:00.25Z"), LinkID: "lnk_a", CountryCode: "DE"},
		{TS: utc("2026-10-25T01:30:00Z"), LinkID: "lnk_b"},
		{TS: utc("2026-10-25T11:00:00.123Z"), LinkID: "lnk_b"},
		{TS: utc("2026-10-25T22:59:59.999Z"), LinkID: "lnk_c"},
	}
	slices.SortFunc(clicks, func(a, b Click) int { return a.TS.Compare(b.TS) })
	if diff := cmp.Diff(wantClicks, clicks); diff != "" {
		t.Errorf("Clicks (-want +got):\n%s", diff)
	}

	// Repair writes into the same file: the click goes in beside the old
	// rows and is counted with them.
	w := openWriter(t, "sqlite:"+path, Options{})
	hour := utc("2026-10-25T01:00:00Z")
	put := Click{TS: utc("2026-10-25T01:45:00.5Z"), LinkID: "lnk_c", CountryCode: "PL"}
	res, err := w.Insert(t.Context(), []HourCheck{{From: hour, To: hour.Add(time.Hour), Clicks: 1}},
		[]HourWrite{{From: hour, To: hour.Add(time.Hour), Clicks: []Click{put}}}, nil)
	if err != nil || res.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v; want 1 click inserted", res, err)
	}
	got, err = s.Counts(t.Context(), events, day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 6 || got.Links["lnk_c"] != 2 {
		t.Errorf("events Counts after the repair = %+v, want 6 clicks, 2 of lnk_c", got)
	}
}
