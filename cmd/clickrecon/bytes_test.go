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
