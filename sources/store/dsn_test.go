package store

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notADatabase := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notADatabase, []byte("these are not the clicks you are looking for\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dsn     string
		want    []string // substrings of the error
		secrets []string // must not appear in the error
		retry   bool     // a retry may mend it: not ErrRefused
	}{
		{
			name:    "postgres_unreachable",
			dsn:     "postgres://app:s3cr3t-pw@127.0.0.1:1/clicks?sslmode=disable",
			want:    []string{"open store postgres://app:xxxxx@127.0.0.1:1/clicks"},
			secrets: []string{"s3cr3t-pw"},
			retry:   true,
		},
		{
			name:    "postgres_unknown_database",
			dsn:     "postgres://postgres:s3cr3t-pw@127.0.0.1:5432/no_such_database_here?sslmode=disable",
			want:    []string{"open store postgres://postgres:xxxxx@127.0.0.1:5432/no_such_database_here"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "postgres_password_in_query",
			dsn:     "postgresql://app@127.0.0.1:1/clicks?password=s3cr3t-pw&sslmode=disable",
			want:    []string{"password=xxxxx"},
			secrets: []string{"s3cr3t-pw"},
			retry:   true,
		},
		{
			name:    "postgres_percent_encoded_password",
			dsn:     "postgres://app:s3cr3t%40pw@127.0.0.1:1/clicks?sslmode=disable",
			want:    []string{"app:xxxxx@"},
			secrets: []string{"s3cr3t@pw", "s3cr3t%40pw"},
			retry:   true,
		},
		{
			name:    "postgres_malformed_url",
			dsn:     "postgres://app:s3cr#3t-pw@127.0.0.1/clicks",
			want:    []string{"malformed PostgreSQL STORE_DSN", "percent-encoded"},
			secrets: []string{"s3cr", "3t-pw"},
		},
		{
			name:    "postgres_bad_option",
			dsn:     "postgres://app:s3cr3t-pw@127.0.0.1/clicks?sslmode=sometimes",
			want:    []string{"sslmode"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "postgres_port_out_of_range",
			dsn:     "postgres://app:s3cr3t-pw@127.0.0.1:99999/clicks?sslmode=disable",
			want:    []string{"port 99999"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "unsupported_scheme",
			dsn:     "sqlserver://app:s3cr3t-pw@db/clicks",
			want:    []string{`scheme "sqlserver"`, "postgres://", "postgresql://", "sqlite:PATH"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "key_value_dsn",
			dsn:     "host=db user=app password=s3cr3t-pw",
			want:    []string{"postgres://", "sqlite:PATH"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "not_a_dsn_at_all",
			dsn:     "s3cr3t-pw",
			want:    []string{"postgres://", "sqlite:PATH"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name: "sqlite_missing_file",
			dsn:  "sqlite:" + filepath.Join(dir, "missing.db"),
			want: []string{filepath.Join(dir, "missing.db"), "does not exist", "check STORE_DSN"},
		},
		{
			name: "sqlite_directory",
			dsn:  "sqlite:" + dir,
			want: []string{"is a directory"},
		},
		{
			name: "sqlite_not_a_database",
			dsn:  "sqlite:" + notADatabase,
			want: []string{"is not a SQLite database"},
		},
		{
			name: "sqlite_without_path",
			dsn:  "sqlite:",
			want: []string{"names no file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A DSN that does not parse is refused by ParseDSN, where
			// the command validates it, before anything is opened.
			st, err := ParseDSN(tt.dsn)
			opened := err == nil
			if opened {
				var s *Store
				if s, err = Open(t.Context(), st, Options{}); err == nil {
					s.Close()
					t.Fatal("Open succeeded, want an error")
				}
			}
			errorContains(t, err, tt.want...)
			if opened && isConfig(err) == tt.retry {
				t.Errorf("error %v: marked as a configuration mistake %v, want %v", err, isConfig(err), !tt.retry)
			}
			for _, secret := range tt.secrets {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q shows the secret %q", err, secret)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("opening a missing SQLite file created it (stat: %v)", err)
	}
}

func TestOpenSQLite(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	day := mustDate(t, "2026-11-26")
	want := DayCounts{Date: day, Total: 1, Links: map[string]int64{"a": 1}}
	tests := []struct {
		name string
		file string
		dsn  func(path string) string
		wal  bool
	}{
		{name: "absolute_path", file: "clicks.db", dsn: func(p string) string { return "sqlite:" + p }},
		{name: "url_style_path", file: "clicks.db", dsn: func(p string) string { return "sqlite://" + p }},
		{name: "reserved_characters_in_the_path", file: "my clicks #1?mode=rw%20.db", dsn: func(p string) string { return "sqlite:" + p }},
		{name: "wal_database_closed_by_its_writer", file: "clicks.db", dsn: func(p string) string { return "sqlite:" + p }, wal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			// A file: URI, as a plain name would lose what follows a '?'.
			db, err := sqlx.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
			if err != nil {
				t.Fatal(err)
			}
			if tt.wal {
				if _, err := db.Exec("PRAGMA journal_mode = WAL"); err != nil {
					t.Fatal(err)
				}
			}
			applySchemas(t, db, "sqlite")
			insertClicks(t, db, []click{{ts: "2026-11-26T10:00:00.000Z", link: "a"}})
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			s := openStore(t, tt.dsn(path))
			got, err := s.Counts(t.Context(), events, day, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Counts mismatch (-want +got):\n%s", diff)
			}
			entries, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), tt.file) {
					t.Errorf("opening the store created %s", e.Name())
				}
			}
		})
	}
}

// TestSQLiteRangeUsesTheIndex checks that the SQLite range queries are
// index searches on julianday(ts), not table scans.
func TestSQLiteRangeUsesTheIndex(t *testing.T) {
	db, _ := newSQLite(t)
	s := &Store{dialect: dsn.SQLite}
	day := mustDate(t, "2026-11-26")
	from, to := day.Bounds(time.UTC)
	span, err := spanQuery(dsn.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	countries, err := countriesQuery(dsn.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for name, nq := range map[string]namedQuery{"events": events.sqlite, "span": span, "countries": countries} {
		t.Run(name, func(t *testing.T) {
			text, args, err := nq.bind(dsn.SQLite, s.params(day, from, to, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
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
			if !strings.Contains(strings.Join(details, "\n"), "INDEX clicks_ts_instant_idx (<expr>>? AND <expr><?)") {
				t.Errorf("plan does not use clicks_ts_instant_idx:\n%s", strings.Join(details, "\n"))
			}
		})
	}
}

// TestSQLiteReferenceSchema checks that the SQLite reference schema refuses
// rows it would otherwise count wrongly, and takes the forms it documents.
func TestSQLiteReferenceSchema(t *testing.T) {
	tests := []struct {
		name   string
		insert string
		args   []any
		ok     bool
	}{
		{"utc_with_milliseconds", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-28T23:59:58.123Z"}, true},
		{"offset_and_space", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-29 00:59:58.123+01:00"}, true},
		{"whole_seconds", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-28T23:59:58-08:00"}, true},
		{"go_time_written_by_modernc", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{time.Date(2026, 11, 28, 23, 59, 58, 123e6, time.UTC)}, false},
		{"no_offset", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-28T23:59:58.123"}, false},
		{"offset_without_colon", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-28T23:59:58.123+0100"}, false},
		{"lower_case_z", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2026-11-28t23:59:58z"}, false},
		{"unix_seconds", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{int64(1795910398)}, false},
		{"julian_day_number", "INSERT INTO clicks (ts, link_id) VALUES (?, 'a')", []any{"2461373.5"}, false},
		{"null_link", "INSERT INTO clicks (ts, link_id) VALUES (?, NULL)", []any{"2026-11-28T23:59:58.123Z"}, false},
		{"counter", "INSERT INTO click_counts (day, link_id, clicks) VALUES (?, 'a', 3)", []any{"2026-11-28"}, true},
		{"day_not_zero_padded", "INSERT INTO click_counts (day, link_id, clicks) VALUES (?, 'a', 3)", []any{"2026-11-8"}, false},
		{"day_that_does_not_exist", "INSERT INTO click_counts (day, link_id, clicks) VALUES (?, 'a', 3)", []any{"2026-02-30"}, false},
		{"day_with_time", "INSERT INTO click_counts (day, link_id, clicks) VALUES (?, 'a', 3)", []any{"2026-11-28T00:00:00Z"}, false},
		{"negative_counter", "INSERT INTO click_counts (day, link_id, clicks) VALUES ('2026-11-28', 'a', ?)", []any{int64(-1)}, false},
		{"fractional_counter", "INSERT INTO click_counts (day, link_id, clicks) VALUES ('2026-11-28', 'a', ?)", []any{1.5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := newSQLite(t)
			_, err := db.Exec(tt.insert, tt.args...)
			if tt.ok && err != nil {
				t.Errorf("insert refused: %v", err)
			}
			if !tt.ok && err == nil {
				t.Error("insert accepted, want it refused")
			}
		})
	}
}

// TestSQLiteGoTimesWrittenByModernc checks the writer setup the SQLite
// reference schema recommends for Go: modernc.org/sqlite with
// _time_format=sqlite stores time.Time values that the schema accepts and
// the store counts on the right day.
func TestSQLiteGoTimesWrittenByModernc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clicks.db")
	db, err := sqlx.Open("sqlite", path+"?_time_format=sqlite")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	applySchemas(t, db, "sqlite")
	warsaw := mustZone(t, "Europe/Warsaw")
	for _, c := range []struct {
		ts   time.Time
		link string
	}{
		{time.Date(2026, 10, 24, 23, 59, 59, 999e6, warsaw), "before"},
		{time.Date(2026, 10, 25, 0, 0, 0, 0, warsaw), "in"},
		{time.Date(2026, 10, 25, 23, 59, 59, 999e6, warsaw).UTC(), "in"},
		{time.Date(2026, 10, 26, 0, 0, 0, 0, warsaw), "after"},
	} {
		if _, err := db.Exec("INSERT INTO clicks (ts, link_id) VALUES (?, ?)", c.ts, c.link); err != nil {
			t.Fatalf("insert %v: %v", c.ts, err)
		}
	}
	s := openStore(t, "sqlite:"+path)
	day := mustDate(t, "2026-10-25")
	got, err := s.Counts(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	want := DayCounts{Date: day, Total: 2, Links: map[string]int64{"in": 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Counts mismatch (-want +got):\n%s", diff)
	}
}
