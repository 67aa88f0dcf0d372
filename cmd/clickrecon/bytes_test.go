package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// linkClicks are n clicks of link on 2026-11-26, a second apart from at.
func linkClicks(at time.Time, n int, link string) []elidotest.Click {
	out := make([]elidotest.Click, n)
	for i := range out {
		out[i] = elidotest.Click{TS: at.Add(time.Duration(i) * time.Second), LinkID: link, CountryCode: "PL"}
	}
	return out
}

// A store whose collation calls lnk_A and lnk_a, lnk_b and "lnk_b " equal
// (MariaDB's default utf8mb4_general_ci, unicode_ci, a nondeterministic
// ICU collation on PostgreSQL) is drilled into link by link as four
// links: the report blames exactly the two that lost clicks, with their
// own counts.
func TestRunLinksAreTheirBytes(t *testing.T) {
	at := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	lostA, lostB := linkClicks(at, 3, "lnk_A"), linkClicks(at.Add(time.Hour), 1, "lnk_b ")
	api := slices.Concat(linkClicks(at.Add(10*time.Minute), 4, "lnk_A"), lostA, linkClicks(at.Add(20*time.Minute), 11, "lnk_a"),
		linkClicks(at.Add(30*time.Minute), 2, "lnk_b"), linkClicks(at.Add(40*time.Minute), 2, "lnk_b "), lostB)
	stored := slices.Concat(api[:4], api[7:])
	stored = stored[:len(stored)-1]
	for _, tt := range []struct{ name, backend, alter string }{
		{"mariadb_utf8mb4_general_ci", "mysql", "ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL"},
		{"mariadb_utf8mb4_unicode_ci", "mysql", "ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL"},
		{"postgres_icu_nondeterministic", "postgres", "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false); " +
			"ALTER TABLE clicks ALTER COLUMN link_id TYPE text COLLATE ci"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.backend, api, nil)
			db, dsn := newStoreDB(t, tt.backend, "events")
			db.MustExec(tt.alter)
			for _, c := range stored {
				db.MustExec(db.Rebind("INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)"), c.TS, c.LinkID, c.CountryCode)
			}
			f.env["STORE_DSN"] = dsn
			r := f.run("--from", "2026-11-26", "--to", "2026-11-26")
			if r.code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			want := []report.Link{
				{Date: "2026-11-26", LinkID: "lnk_A", API: 7, Local: 4, Delta: -3, Status: "missing"},
				{Date: "2026-11-26", LinkID: "lnk_b ", API: 3, Local: 2, Delta: -1, Status: "missing"},
			}
			if diff := cmp.Diff(want, f.readReport().Links); diff != "" {
				t.Errorf("report links (-want +got):\n%s", diff)
			}
		})
	}
}

// A daily counter keyed by a collation that merges links has added two
// links' clicks together before clickrecon reads it: the day's per-link
// counts are left out, the report naming the column and its collation,
// and no link is blamed.
func TestRunDailyKeyThatMergesLinksIsNamed(t *testing.T) {
	at := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	api := slices.Concat(linkClicks(at, 7, "lnk_A"), linkClicks(at, 11, "lnk_a"))
	f := newFixture(t, "mysql", api, nil)
	db, dsn := newStoreDB(t, "mysql", "daily")
	db.MustExec("ALTER TABLE click_counts MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL")
	db.MustExec("INSERT INTO click_counts (day, link_id, clicks) VALUES ('2026-11-26', 'lnk_a', 15)") // lnk_A's 4 and lnk_a's 11
	f.env["STORE_DSN"], f.env["STORE_PRESET"] = dsn, "daily"
	r := f.run("--from", "2026-11-26", "--to", "2026-11-26")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	got := f.readReport()
	if len(got.Links) != 0 {
		t.Errorf("links %+v, want none blamed", got.Links)
	}
	var said bool
	for _, fd := range got.Findings {
		said = said || strings.Contains(fd.Message, "click_counts.link_id has collation utf8mb4_general_ci")
	}
	if !said {
		t.Errorf("findings %+v do not name the column and its collation", got.Findings)
	}
}

// A daily counter keyed by the engine's default collation where it merges
// links (MariaDB's utf8mb4_general_ci), a nondeterministic ICU collation
// or SQLite's NOCASE: only the links the column's collation calls equal
// (lnk_A and lnk_a, which the server is asked about) are refused, as one
// group with their delta together, even where one of them matches on its
// own; every other link gets its exact row.
func TestRunDailyCollationRefusesOnlyTheLinksItMerges(t *testing.T) {
	at := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	api := slices.Concat(linkClicks(at, 5, "lnk_A"), linkClicks(at, 3, "lnk_a"), linkClicks(at, 4, "lnk_x"),
		linkClicks(at, 2, "lnk_y"), linkClicks(at, 6, "lnk_z"))
	for _, tt := range []struct{ name, backend, alter, collation string }{
		{"mariadb_default_collation", "mysql", "ALTER TABLE click_counts MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL", "utf8mb4_general_ci"},
		{"postgres_icu_nondeterministic", "postgres", "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false); " +
			"ALTER TABLE click_counts ALTER COLUMN link_id TYPE text COLLATE ci", "ci"},
		{"sqlite_nocase", "sqlite", "DROP TABLE click_counts; CREATE TABLE click_counts (day TEXT NOT NULL, link_id TEXT NOT NULL, " +
			"clicks INTEGER NOT NULL, PRIMARY KEY (day, link_id COLLATE NOCASE))", "NOCASE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.backend, api, nil)
			db, dsn := newStoreDB(t, tt.backend, "daily")
			db.MustExec(tt.alter)
			// lnk_a's 3 clicks went into lnk_A's counter, which then lost
			// them; lnk_y lost one click; lnk_x and lnk_z are whole.
			for _, row := range []struct {
				link   string
				clicks int
			}{{"lnk_A", 5}, {"lnk_x", 4}, {"lnk_y", 1}, {"lnk_z", 6}} {
				db.MustExec(db.Rebind("INSERT INTO click_counts (day, link_id, clicks) VALUES ('2026-11-26', ?, ?)"), row.link, row.clicks)
			}
			f.env["STORE_DSN"], f.env["STORE_PRESET"] = dsn, "daily"
			r := f.run("--from", "2026-11-26", "--to", "2026-11-26")
			if r.code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			got := f.readReport()
			want := []report.Link{{Date: "2026-11-26", LinkID: "lnk_y", API: 2, Local: 1, Delta: -1, Status: "missing"}}
			if diff := cmp.Diff(want, got.Links); diff != "" {
				t.Errorf("report links (-want +got):\n%s", diff)
			}
			var merged []string
			for _, fd := range got.Findings {
				switch {
				case fd.Kind == "links_merged":
					merged = append(merged, fd.Message)
				case fd.Kind == "unexplained_remainder" || strings.Contains(fd.Message, "per-link counts could not be read"):
					t.Errorf("finding %s: %s", fd.Kind, fd.Message)
				}
			}
			if len(merged) != 1 || !strings.Contains(merged[0], `"lnk_A", "lnk_a"`) || !strings.Contains(merged[0], "-3") ||
				!strings.Contains(merged[0], "collation "+tt.collation) || strings.Contains(merged[0], "lnk_x") {
				t.Errorf("links_merged findings %q: want one naming lnk_A and lnk_a, their -3 together and the collation %s", merged, tt.collation)
			}
		})
	}
}
