package repair_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// engines are the stores a repair writes into, for the tests that run the
// same repair on each: a world with the reference events schema, and how
// its rows are read back.
var engines = []struct {
	name  string
	world func(t *testing.T, elidoClicks, stored []elidotest.Click) world
	rows  func(w world, t *testing.T, d reconcile.Date) []string
}{
	{"postgres", newWorld, world.rows},
	{"mysql", newMySQLWorld, func(w world, t *testing.T, d reconcile.Date) []string { return mysqlRows(t, w, d) }},
}

// newMySQLWorld is newWorld on a MariaDB (or MySQL) store with the
// reference events schema.
func newMySQLWorld(t *testing.T, elidoClicks, stored []elidotest.Click) world {
	t.Helper()
	db, dsn := mysqltest.New(t)
	schema, err := os.ReadFile(filepath.Join("..", "sql", "store", "mysql", "events.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	if len(stored) > 0 {
		values := strings.TrimSuffix(strings.Repeat("(?, ?, NULLIF(?, '')),", len(stored)), ",")
		var args []any
		for _, c := range stored {
			args = append(args, c.TS.UTC(), c.LinkID, c.CountryCode)
		}
		if _, err := db.Exec("INSERT INTO clicks (ts, link_id, country_code) VALUES "+values, args...); err != nil {
			t.Fatal(err)
		}
	}
	ws := "ws_" + strings.ReplaceAll(t.Name(), "/", "_")
	srv := elidotest.NewServer(ws, testKey, elidoClicks)
	t.Cleanup(srv.Close)
	api, err := elido.New(elido.Config{BaseURL: srv.URL(), APIKey: testKey, WorkspaceID: ws, RatePerMinute: 6_000_000})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, dsn), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w, err := store.OpenWriter(t.Context(), dbtest.Parsed(t, store.ParseWriteDSN, dsn), "", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	q, err := store.PresetQuery(store.PresetEvents)
	if err != nil {
		t.Fatal(err)
	}
	return world{dsn: dsn, srv: srv, api: api, db: db, st: st, w: w, query: q}
}

// mysqlRows is world.rows on MySQL: the day's clicks as multiset does.
func mysqlRows(t *testing.T, w world, d reconcile.Date) []string {
	t.Helper()
	start, end := d.Bounds(time.UTC)
	rows, err := w.db.Query("SELECT DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f'), link_id, COALESCE(country_code, '') FROM clicks WHERE ts >= ? AND ts < ?", start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var text, link, country string
		if err := rows.Scan(&text, &link, &country); err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.999999", text)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s", ts.UTC().Format(time.RFC3339Nano), link, country))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A lost burst is restored exactly into MySQL, beside rows Elido never had
// (listed as surplus, never deleted), and a rerun plans and inserts
// nothing.
func TestMySQLLostBurstRestoredForeignRowsKeptRerunInsertsNothing(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	foreign := burst(hourOf(day1, 2).Add(40*time.Minute), 3, "lnk_own_server")
	elidoClicks := cat(background(day1), lost)
	w := newMySQLWorld(t, elidoClicks, cat(without(elidoClicks, lost), foreign))
	o := w.options(day1)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 {
		t.Fatalf("Apply = %+v; want the burst restored", res)
	}
	if diff := gocmp.Diff(multiset(cat(elidoClicks, foreign), day1), mysqlRows(t, w, day1)); diff != "" {
		t.Errorf("after the repair (-want +store):\n%s", diff)
	}
	again, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 0 {
		t.Errorf("rerun applied %+v, want nothing", res)
	}
	if diff := gocmp.Diff(multiset(cat(elidoClicks, foreign), day1), mysqlRows(t, w, day1)); diff != "" {
		t.Errorf("after the rerun (-want +store):\n%s", diff)
	}
}

// The writer's connection is killed (KILL) in the middle of a day's
// transaction: the day is absent, never half written, and the next repair
// writes it whole.
func TestMySQLConnectionKilledMidDayLeavesItWholeOrAbsent(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks := cat(background(day1), lost)
	w := newMySQLWorld(t, elidoClicks, without(elidoClicks, lost))
	o := w.options(day1)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	before := mysqlRows(t, w, day1)
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, func(_ reconcile.Date, n int) {
		if n != 30 {
			return
		}
		// InnoDB refreshes INNODB_TRX only when it was last read more than
		// 100ms ago: read it again until it shows the writer.
		var ids []int64
		for deadline := time.Now().Add(5 * time.Second); len(ids) != 1; time.Sleep(150 * time.Millisecond) {
			ids = nil
			if err := w.db.Select(&ids, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_rows_modified > 0 AND trx_mysql_thread_id IN (SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE())"); err != nil || time.Now().After(deadline) {
				t.Fatalf("writers in a transaction: %v (%v), want the repair's", ids, err)
			}
		}
		if _, err := w.db.Exec(fmt.Sprintf("KILL %d", ids[0])); err != nil {
			t.Fatal(err)
		}
	})
	if len(res) != 1 || res[0].Err == nil || res[0].Inserted != 0 {
		t.Fatalf("Apply = %+v; want the day failed with nothing written", res)
	}
	if diff := gocmp.Diff(before, mysqlRows(t, w, day1)); diff != "" {
		t.Errorf("the day is half written (-before +after):\n%s", diff)
	}
	again, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 {
		t.Errorf("second repair: %+v; want the day whole", res)
	}
	if diff := gocmp.Diff(multiset(elidoClicks, day1), mysqlRows(t, w, day1)); diff != "" {
		t.Errorf("after the second repair (-elido +store):\n%s", diff)
	}
}
