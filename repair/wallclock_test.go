package repair_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// wallEngine is a store whose ts holds local wall-clock times: a
// PostgreSQL timestamp, a MariaDB DATETIME.
type wallEngine struct {
	name    string
	dialect dsn.Dialect
	server  func(testing.TB) (*sqlx.DB, string)
	schema  string
	// walls reads every row as "wall|link|country", sorted.
	walls string
}

var wallEngines = []wallEngine{
	{
		name:    "postgres_timestamp",
		dialect: dsn.Postgres,
		server:  pgtest.New,
		schema: `CREATE TABLE clicks (ts timestamp(3) NOT NULL, link_id text NOT NULL, country_code text);
CREATE INDEX clicks_ts_idx ON clicks (ts)`,
		walls: `SELECT to_char(ts, 'YYYY-MM-DD HH24:MI:SS.MS') || '|' || link_id || '|' || coalesce(country_code, '') FROM clicks`,
	},
	{
		name:    "mariadb_datetime",
		dialect: dsn.MySQL,
		server:  mysqltest.New,
		schema: `CREATE TABLE clicks (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, ts DATETIME(3) NOT NULL,
  link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, country_code CHAR(2) CHARACTER SET ascii NULL,
  KEY clicks_ts_idx (ts)) ENGINE = InnoDB`,
		walls: `SELECT CONCAT(DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.'), LPAD(FLOOR(MICROSECOND(ts) / 1000), 3, '0'), '|', link_id, '|', COALESCE(country_code, '')) FROM clicks`,
	},
}

// wallRow is a row as a wall-clock store holds it.
type wallRow struct{ wall, link, country string }

func (r wallRow) String() string { return r.wall + "|" + r.link + "|" + r.country }

// asWritten is clicks as a receiver writing wall-clock times in zone
// stores them.
func asWritten(clicks []elidotest.Click, zone *time.Location) []wallRow {
	out := make([]wallRow, len(clicks))
	for i, c := range clicks {
		out[i] = wallRow{store.WallKey(c.TS, zone), c.LinkID, c.CountryCode}
	}
	return out
}

func wallStrings(rows []wallRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// wallWorld is a world on e whose ts holds wall-clock times in zone, read
// and written in it (STORE_TIMESTAMP_TZ).
type wallWorld struct {
	e    wallEngine
	dsn  string
	db   *sqlx.DB
	api  *elido.Client
	st   *store.Store
	w    *store.Writer
	q    store.Query
	zone *time.Location
}

func (e wallEngine) world(t *testing.T, zone *time.Location, elidoClicks []elidotest.Click, stored []wallRow) wallWorld {
	t.Helper()
	db, raw := e.server(t)
	for _, stmt := range strings.Split(e.schema, ";\n") {
		db.MustExec(stmt)
	}
	insert := "INSERT INTO clicks (ts, link_id, country_code) VALUES ($1, $2, NULLIF($3, ''))"
	if e.dialect == dsn.MySQL {
		insert = "INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, NULLIF(?, ''))"
	}
	for _, r := range stored {
		db.MustExec(insert, r.wall, r.link, r.country)
	}
	_, api := fakeElido(t, elidoClicks)
	o := store.Options{TimestampZone: zone}
	st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, raw), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w, err := store.OpenWriter(t.Context(), dbtest.Parsed(t, store.ParseWriteDSN, raw), "", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	q, err := store.PresetQuery(store.PresetEvents)
	if err != nil {
		t.Fatal(err)
	}
	return wallWorld{e: e, dsn: raw, db: db, api: api, st: st, w: w, q: q, zone: zone}
}

func (w wallWorld) rows(t *testing.T) []string {
	t.Helper()
	var out []string
	if err := w.db.Select(&out, w.e.walls); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// runSQL runs a repair.sql on w's store as its header tells an operator.
func (w wallWorld) runSQL(t *testing.T, script string) error {
	t.Helper()
	if w.e.dialect == dsn.MySQL {
		if out, err := runMySQL(t.Context(), mysqlClient(t, w.dsn), script); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	_, err := w.db.Exec(script)
	return err
}

func (w wallWorld) options(t *testing.T, days ...reconcile.Date) repair.Options {
	t.Helper()
	naive, err := w.st.Naive(t.Context(), w.q, reconcile.Window{From: days[0], To: days[len(days)-1], Loc: w.zone})
	if err != nil {
		t.Fatal(err)
	}
	if naive.WallZone() == nil {
		t.Fatalf("Naive = %+v: the store's ts is not seen as wall-clock times", naive)
	}
	_, end := days[len(days)-1].Bounds(w.zone)
	return repair.Options{
		Window: reconcile.Window{From: days[0], To: days[len(days)-1], Loc: w.zone},
		Settle: 2 * time.Hour,
		Now:    end.Add(24 * time.Hour),
		Query:  w.q,
		Wall:   naive.WallZone(),
	}
}

// hourDiffs are the hours of day that differ between Elido and the store,
// as the drill-down compares a wall-clock store's: "15:04 MST delta".
func (w wallWorld) hourDiffs(t *testing.T, d reconcile.Date) []string {
	t.Helper()
	api, err := w.api.HourlyTimeseries(t.Context(), d, w.zone, "")
	if err != nil {
		t.Fatal(err)
	}
	local, err := w.st.HourlyCounts(t.Context(), w.q, d, w.zone)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range reconcile.CompareHours(store.MergeShared(api, w.zone), store.MergeShared(local, w.zone)) {
		out = append(out, fmt.Sprintf("%s %+d", h.Start.In(w.zone).Format("15:04 MST"), h.Delta))
	}
	return out
}

// everyHour is n clicks in every hour of d in zone, over two links.
func everyHour(d reconcile.Date, zone *time.Location, n int) []elidotest.Click {
	start, end := d.Bounds(zone)
	var out []elidotest.Click
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		for i := range n {
			out = append(out, elidotest.Click{TS: h.Add(time.Duration(i)*11*time.Minute + 7*time.Millisecond),
				LinkID: fmt.Sprintf("lnk_%d", i%2), CountryCode: []string{"PL", ""}[i%2]})
		}
	}
	return out
}

func at(zone *time.Location, wall string, offset string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.000 -07:00", wall+" "+offset)
	if err != nil {
		panic(err)
	}
	return t.In(zone)
}

// The hour an autumn DST day repeats is one wall hour in the column: its
// clicks are put back only where the count of their exact wall time proves
// them lost, whichever of the two hours Elido has them in, and a click the
// store holds is never written again; the unambiguous hours of the day are
// repaired too, and the hourly comparison reports the lost hours only.
func TestRepeatedWallHourIsNeverWrittenTwice(t *testing.T) {
	warsaw := mustZone(t, "Europe/Warsaw")
	d := mustDate("2026-10-25")
	// The first 02:00–02:59 is CEST (+02:00), the second CET (+01:00).
	edgeFirst := elidotest.Click{TS: at(warsaw, "2026-10-25 02:00:00.000", "+02:00"), LinkID: "lnk_r", CountryCode: "PL"}
	edgeLast := elidotest.Click{TS: at(warsaw, "2026-10-25 02:59:59.999", "+02:00"), LinkID: "lnk_r", CountryCode: "PL"}
	twinCEST := elidotest.Click{TS: at(warsaw, "2026-10-25 02:30:00.000", "+02:00"), LinkID: "lnk_t", CountryCode: "DE"}
	twinCET := elidotest.Click{TS: at(warsaw, "2026-10-25 02:30:00.000", "+01:00"), LinkID: "lnk_t", CountryCode: "DE"}
	lostCEST := elidotest.Click{TS: at(warsaw, "2026-10-25 02:15:00.000", "+02:00"), LinkID: "lnk_x", CountryCode: ""}
	lost10 := elidotest.Click{TS: at(warsaw, "2026-10-25 10:20:00.000", "+01:00"), LinkID: "lnk_a", CountryCode: "PL"}
	lost15 := elidotest.Click{TS: at(warsaw, "2026-10-25 15:20:00.000", "+01:00"), LinkID: "lnk_b", CountryCode: "PL"}
	elidoClicks := cat(everyHour(d, warsaw, 3), []elidotest.Click{edgeFirst, edgeLast, twinCEST, twinCET, lostCEST, lost10, lost15})
	// The store lost one of the two clicks at wall time 02:30:00.000 (which
	// one cannot be told, nor matters), the CEST 02:15, and the 10:20 and
	// 15:20 clicks.
	stored := asWritten(without(elidoClicks, []elidotest.Click{twinCET, lostCEST, lost10, lost15}), warsaw)
	for _, e := range wallEngines {
		t.Run(e.name, func(t *testing.T) {
			w := e.world(t, warsaw, elidoClicks, stored)
			if diff := gocmp.Diff([]string{"02:00 CEST -2", "10:00 CET -1", "15:00 CET -1"}, w.hourDiffs(t, d)); diff != "" {
				t.Errorf("hours that differ (-want +got):\n%s", diff)
			}
			o := w.options(t, d)
			plans, err := repair.Plan(t.Context(), w.api, w.st, o)
			if err != nil {
				t.Fatal(err)
			}
			var add []string
			for _, c := range plans[0].Add() {
				add = append(add, store.WallKey(c.TS, warsaw)+"|"+c.LinkID)
			}
			slices.Sort(add)
			want := []string{"2026-10-25 02:15:00.000|lnk_x", "2026-10-25 02:30:00.000|lnk_t", "2026-10-25 10:20:00.000|lnk_a", "2026-10-25 15:20:00.000|lnk_b"}
			if diff := gocmp.Diff(want, add); diff != "" {
				t.Errorf("clicks planned (-want +got):\n%s", diff)
			}
			// repair.sql, run on a copy of the store, writes the same.
			var script strings.Builder
			if err := repair.WriteSQL(&script, plans, e.dialect); err != nil {
				t.Fatal(err)
			}
			copied := e.world(t, warsaw, elidoClicks, stored)
			if err := copied.runSQL(t, script.String()); err != nil {
				t.Fatalf("repair.sql: %v\n%s", err, script.String())
			}
			if diff := gocmp.Diff(wallStrings(asWritten(elidoClicks, warsaw)), copied.rows(t)); diff != "" {
				t.Errorf("the store after repair.sql (-want +got):\n%s", diff)
			}
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
			if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 4 || !res[0].Matches() {
				t.Fatalf("Apply = %+v", res)
			}
			if diff := gocmp.Diff(wallStrings(asWritten(elidoClicks, warsaw)), w.rows(t)); diff != "" {
				t.Errorf("the store after the repair, each wall time as often as Elido's clicks show it (-want +got):\n%s", diff)
			}
			// Planned again, nothing is left to write.
			again, err := repair.Plan(t.Context(), w.api, w.st, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(again[0].Add()); n != 0 || again[0].Skipped == "" {
				t.Errorf("planned again: %d clicks, skipped %q", n, again[0].Skipped)
			}
		})
	}
}

// Rows at wall times the spring DST day skips are read with the offset in
// force before the jump, in the hour after it, as PostgreSQL reads them:
// the hourly comparison reports only the hours that lost clicks, never an
// hour Elido does not have. The hour that holds such rows is not repaired
// (which click they stand for cannot be told), the unambiguous hours of
// the same day are.
func TestSkippedWallHourIsPlacedAndRefused(t *testing.T) {
	warsaw := mustZone(t, "Europe/Warsaw")
	d := mustDate("2026-03-29")
	var jumped []elidotest.Click // 03:10, 03:20, 03:30 CEST, which a receiver wrote as 02:10…02:30
	var asSkipped []wallRow
	for i := 1; i <= 3; i++ {
		c := elidotest.Click{TS: at(warsaw, fmt.Sprintf("2026-03-29 03:%d0:00.000", i), "+02:00"), LinkID: "lnk_s", CountryCode: "PL"}
		jumped = append(jumped, c)
		asSkipped = append(asSkipped, wallRow{fmt.Sprintf("2026-03-29 02:%d0:00.000", i), "lnk_s", "PL"})
	}
	lost10 := burst(at(warsaw, "2026-03-29 10:20:00.000", "+02:00"), 2, "lnk_a")
	lost15 := burst(at(warsaw, "2026-03-29 15:20:00.000", "+02:00"), 1, "lnk_b")
	lost03 := elidotest.Click{TS: at(warsaw, "2026-03-29 03:45:00.000", "+02:00"), LinkID: "lnk_s", CountryCode: "PL"}
	elidoClicks := cat(everyHour(d, warsaw, 3), jumped, lost10, lost15, []elidotest.Click{lost03})
	stored := append(asWritten(without(elidoClicks, jumped, lost10, lost15, []elidotest.Click{lost03}), warsaw), asSkipped...)
	for _, e := range wallEngines {
		t.Run(e.name, func(t *testing.T) {
			w := e.world(t, warsaw, elidoClicks, stored)
			if diff := gocmp.Diff([]string{"03:00 CEST -1", "10:00 CEST -2", "15:00 CEST -1"}, w.hourDiffs(t, d)); diff != "" {
				t.Errorf("hours that differ (-want +got):\n%s", diff)
			}
			o := w.options(t, d)
			plans, err := repair.Plan(t.Context(), w.api, w.st, o)
			if err != nil {
				t.Fatal(err)
			}
			var refused []string
			for _, h := range plans[0].Hours {
				if h.Refused != "" {
					refused = append(refused, h.From.In(warsaw).Format("15:04 MST")+": "+h.Refused)
				}
			}
			if len(refused) != 1 || !strings.HasPrefix(refused[0], "03:00 CEST: ") || !strings.Contains(refused[0], "Europe/Warsaw never shows (the first 2026-03-29 02:10:00.000)") {
				t.Errorf("refused hours: %q", refused)
			}
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
			if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 3 {
				t.Fatalf("Apply = %+v", res)
			}
			want := wallStrings(append(asWritten(without(elidoClicks, jumped, []elidotest.Click{lost03}), warsaw), asSkipped...))
			if diff := gocmp.Diff(want, w.rows(t)); diff != "" {
				t.Errorf("the store after the repair (-want +got):\n%s", diff)
			}
		})
	}
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
