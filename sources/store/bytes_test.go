package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/reconcile"
)

// collation is a store whose text columns users declared with a collation
// of their own (the server's default, often): alter changes the events
// schema's link_id and country_code, daily the daily schema's link_id.
type collation struct {
	name    string
	coll    string // the collation, as the catalog names it
	backend func(t *testing.T) (*sqlx.DB, string)
	events  []string // statements that give clicks its columns
	daily   []string // statements that give click_counts its link_id
	// merges says the collation tells apart fewer strings than their
	// bytes do: a daily counter keyed by it has merged links.
	merges bool
}

// pgICU creates, in the test's own schema, a nondeterministic ICU
// collation: case-insensitive (level 2), and, as every nondeterministic
// collation, blind to Unicode normalisation (NFC and NFD are equal).
const pgICU = `CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`

func collations() []collation {
	my := func(coll string, merges bool) collation {
		return collation{
			name:    "mysql_" + coll,
			coll:    coll,
			backend: newMySQL,
			events: []string{"ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE " + coll + " NOT NULL, " +
				"MODIFY country_code VARCHAR(8) CHARACTER SET utf8mb4 COLLATE " + coll + " NULL"},
			daily:  []string{"ALTER TABLE click_counts MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE " + coll + " NOT NULL"},
			merges: merges,
		}
	}
	pg := func(name, coll string, merges bool, create ...string) collation {
		return collation{
			name:    "postgres_" + name,
			coll:    name,
			backend: newPostgres(""),
			events: append(append([]string{}, create...), "ALTER TABLE clicks ALTER COLUMN link_id TYPE text COLLATE "+coll,
				"ALTER TABLE clicks ALTER COLUMN country_code TYPE text COLLATE "+coll),
			daily:  append(append([]string{}, create...), "ALTER TABLE click_counts ALTER COLUMN link_id TYPE text COLLATE "+coll),
			merges: merges,
		}
	}
	lite := func(coll string, merges bool) collation {
		return collation{
			name:    "sqlite_" + coll,
			coll:    coll,
			backend: newSQLite,
			events: []string{"DROP TABLE clicks",
				"CREATE TABLE clicks (ts TEXT NOT NULL, link_id TEXT COLLATE " + coll + " NOT NULL, country_code TEXT COLLATE " + coll + ")",
				"CREATE INDEX clicks_ts_idx ON clicks (julianday(ts))"},
			daily: []string{"DROP TABLE click_counts",
				"CREATE TABLE click_counts (day TEXT NOT NULL, link_id TEXT COLLATE " + coll + " NOT NULL, clicks INTEGER NOT NULL, PRIMARY KEY (day, link_id))"},
			merges: merges,
		}
	}
	return []collation{
		my("utf8mb4_general_ci", true),
		my("utf8mb4_unicode_ci", true),
		my("utf8mb4_bin", true), // PAD SPACE: 'lnk_b' = 'lnk_b '
		my("utf8mb4_general_nopad_ci", true),
		my("utf8mb4_nopad_bin", false),
		pg("default", `"default"`, false),
		pg("C", `"C"`, false),
		pg("ci", "ci", true, pgICU),
		lite("BINARY", false),
		lite("NOCASE", true),
		lite("RTRIM", true),
	}
}

// fourLinks are links that differ only by case, by trailing spaces or by
// Unicode normalisation, with countries that differ only by case, on
// 2026-11-26 in UTC: every one is a link of its own.
var fourLinks = func() []click {
	var out []click
	add := func(n int, link, country string) {
		for range n {
			out = append(out, click{ts: "2026-11-26T12:00:00.000Z", link: link, country: country})
		}
	}
	add(4, "lnk_A", "DE")
	add(11, "lnk_a", "de")
	add(2, "lnk_b", "")
	add(3, "lnk_b ", "DE ")
	add(1, "caf\u00e9", "PL")  // NFC
	add(5, "cafe\u0301", "PL") // NFD
	return out
}()

// withFourLinks returns a store of c's events schema holding fourLinks.
func (c collation) withFourLinks(t *testing.T) *Store {
	t.Helper()
	db, dsn := c.backend(t)
	for _, stmt := range c.events {
		db.MustExec(stmt)
	}
	insertClicks(t, db, fourLinks)
	return openStore(t, dsn)
}

// A link is its bytes: the per-link and per-country counts of the events
// preset keep apart what the column's collation would merge.
func TestEventsCountsAreByteWise(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	wantLinks := map[string]int64{"lnk_A": 4, "lnk_a": 11, "lnk_b": 2, "lnk_b ": 3, "caf\u00e9": 1, "cafe\u0301": 5}
	wantCountries := map[string]int64{"DE": 4, "de": 11, "": 2, "DE ": 3, "PL": 6}
	for _, c := range collations() {
		t.Run(c.name, func(t *testing.T) {
			s := c.withFourLinks(t)
			day, loc := mustDate(t, "2026-11-26"), mustZone(t, "UTC")
			got, err := s.Counts(t.Context(), events, day, loc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantLinks, got.Links); diff != "" {
				t.Errorf("per-link counts (-want +got):\n%s", diff)
			}
			countries, err := s.CountryCounts(t.Context(), events, day, loc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantCountries, countries); diff != "" {
				t.Errorf("per-country counts (-want +got):\n%s", diff)
			}
		})
	}
}

// A daily counter keyed by a collation that is not byte-wise has merged
// the links it calls equal before clickrecon reads them: its rows are read
// as they are, and the server says which links of the day its collation
// calls equal to another (MergedLinks), naming the column and its
// collation; a byte-wise key merges none. The links asked about are the
// day's that differ (lnk_a, "lnk_b ", lnk_x, lnk_y); lnk_A and lnk_b are
// the store's own rows.
func TestDailyMergedLinksAreAskedOfTheServer(t *testing.T) {
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	caseBlind := []string{"lnk_A", "lnk_a"}
	padSpace := []string{"lnk_b", "lnk_b "}
	both := []string{"LNK_B ", "lnk_b", "lnk_b "}
	want := map[string][][]string{
		"mysql_utf8mb4_general_ci":       {both, caseBlind},
		"mysql_utf8mb4_unicode_ci":       {both, caseBlind},
		"mysql_utf8mb4_bin":              {padSpace},
		"mysql_utf8mb4_general_nopad_ci": {caseBlind}, // "LNK_B " is not lnk_b: NO PAD
		"postgres_ci":                    {caseBlind},
		"sqlite_NOCASE":                  {caseBlind},
		"sqlite_RTRIM":                   {padSpace},
	}
	for _, c := range collations() {
		t.Run(c.name, func(t *testing.T) {
			db, dsn := c.backend(t)
			for _, stmt := range c.daily {
				db.MustExec(stmt)
			}
			insertCounters(t, db, []counter{{day: "2026-11-26", link: "lnk_A", clicks: 15}, {day: "2026-11-26", link: "lnk_b", clicks: 5},
				{day: "2026-11-26", link: "lnk_x", clicks: 1}, {day: "2026-11-25", link: "lnk_X", clicks: 2}})
			s := openStore(t, dsn)
			day := mustDate(t, "2026-11-26")
			got, err := s.Counts(t.Context(), daily, day, mustZone(t, "UTC"))
			if err != nil || got.Links["lnk_A"] != 15 || got.Links["lnk_b"] != 5 {
				t.Fatalf("Counts = %v, %v; want the rows as stored", got.Links, err)
			}
			m, err := s.MergedLinks(t.Context(), daily, day, []string{"lnk_a", "lnk_b ", "LNK_B ", "lnk_x", "lnk_y"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[c.name], m.Groups); diff != "" {
				t.Errorf("merged links (-want +got):\n%s", diff)
			}
			if c.merges != (m.Column != "") {
				t.Errorf("column %q; merges %v", m.Column, c.merges)
			}
			if c.merges && m.Column != "click_counts.link_id has collation "+c.coll {
				t.Errorf("column %q, want click_counts.link_id and its collation %s", m.Column, c.coll)
			}
		})
	}
}

// A CHAR link_id drops trailing spaces: lnk_b and "lnk_b " come back as
// one link, which no query can undo. Per-link counts and a repair's read of
// clicks are refused, naming the column and its type.
func TestCharLinkIDIsRefused(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, c := range []collation{
		{name: "mysql", backend: newMySQL, events: []string{"ALTER TABLE clicks MODIFY link_id CHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL"}},
		{name: "postgres", backend: newPostgres(""), events: []string{"ALTER TABLE clicks ALTER COLUMN link_id TYPE char(32)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.withFourLinks(t)
			day, loc := mustDate(t, "2026-11-26"), mustZone(t, "UTC")
			_, err := s.Counts(t.Context(), events, day, loc)
			if !errors.Is(err, ErrNotByteWise) {
				t.Fatalf("Counts: %v, want ErrNotByteWise", err)
			}
			errorContains(t, err, "clicks.link_id is ", "CHAR", "trailing spaces")
			from, to := day.Bounds(loc)
			if _, err := s.Clicks(t.Context(), events, from, to); !errors.Is(err, ErrNotByteWise) {
				t.Fatalf("Clicks: %v, want ErrNotByteWise", err)
			}
			// The day's total does not depend on the links.
			totals, err := s.Totals(t.Context(), events, []reconcile.Date{day}, loc)
			if err != nil || totals[day].Clicks != int64(len(fourLinks)) {
				t.Fatalf("Totals = %v, %v; want %d", totals, err, len(fourLinks))
			}
		})
	}
}

// The byte-wise drill-down reads keep to the ts index on MariaDB: the
// day is a range of clicks_ts_idx, grouped afterwards, as before.
func TestMySQLByteWiseDrillDownUsesTheIndex(t *testing.T) {
	db, raw := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	// 100 days of a click every 3 minutes, so that a day is 1% of the table.
	db.MustExec(`INSERT INTO clicks (ts, link_id, country_code)
SELECT TIMESTAMP '2026-09-01 00:00:00' + INTERVAL n * 3 MINUTE, CONCAT('lnk_', n % 97), ELT(1 + n % 3, 'PL', 'DE', NULL)
FROM (SELECT a.i + 10 * b.i + 100 * c.i + 1000 * d.i + 10000 * e.i AS n
      FROM (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a,
           (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b,
           (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c,
           (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d,
           (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) e) AS seq`)
	db.MustExec("ANALYZE TABLE clicks")
	s := openStore(t, raw)
	day, loc := mustDate(t, "2026-11-26"), mustZone(t, "Europe/Warsaw")
	from, to := day.Bounds(loc)
	params := s.params(day, from, to, loc)
	countries, err := countriesQuery(s.dialect)
	if err != nil {
		t.Fatal(err)
	}
	for name, nq := range map[string]namedQuery{"links": mustQuery(t)(PresetQuery(PresetEvents)).mysql, "countries": countries} {
		text, args, err := nq.bind(s.dialect, params)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Queryx("EXPLAIN "+text, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			row := map[string]any{}
			if err := rows.MapScan(row); err != nil {
				t.Fatal(err)
			}
			key, typ, extra := str(row["key"]), str(row["type"]), str(row["Extra"])
			t.Logf("%s: type %s, key %s, rows %s, extra %s", name, typ, key, str(row["rows"]), extra)
			if key != "clicks_ts_idx" || typ != "range" {
				t.Errorf("%s plan: key %q, type %q, extra %q; want a range of clicks_ts_idx", name, key, typ, extra)
			}
		}
		rows.Close()
	}
}

// The characters a repair plan says a MySQL column cannot hold are those
// the server itself cannot convert into its character set: every
// character up to U+2FFF, and a few beyond, converted by MariaDB in one
// statement, agrees with mysqlCharsetHolds.
func TestMySQLCharsetHoldsAsTheServerConverts(t *testing.T) {
	db, _ := mysqltest.New(t)
	var in []rune
	for r := rune(1); r < 0x3000; r++ {
		if r != '?' && (r < 0xD800 || r > 0xDFFF) {
			in = append(in, r)
		}
	}
	in = append(in, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF)
	for _, charset := range []string{"latin1", "utf8mb3", "ascii", "ucs2"} {
		var out string
		if err := db.Get(&out, "SELECT CONVERT(CONVERT(CONVERT(? USING utf8mb4) USING "+charset+") USING utf8mb4)", string(in)); err != nil {
			t.Fatal(err)
		}
		back := []rune(out)
		if len(back) != len(in) {
			t.Fatalf("%s: %d characters back for %d", charset, len(back), len(in))
		}
		holds := mysqlCharsetHolds(charset)
		var wrong []string
		for i, r := range in {
			if server := back[i] == r; server != holds(r) {
				wrong = append(wrong, fmt.Sprintf("U+%04X (server %v)", r, server))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s: mysqlCharsetHolds disagrees with the server on %d characters: %v", charset, len(wrong), wrong[:min(len(wrong), 20)])
		}
	}
}
