package repair_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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

// engine is a store a repair writes into, for the tests that run the same
// repair on each: how a database of it is made, filled and read, and what
// differs in how a test gets in the way of a repair under way.
type engine struct {
	// name names the subtests and the folder of the reference schema,
	// sql/store/<name>.
	name    string
	dialect dsn.Dialect
	// server returns a fresh, empty database of the test's own and its DSN.
	server func(testing.TB) (*sqlx.DB, string)
	// insert inserts clicks in one statement (an unknown country as NULL).
	insert func(t *testing.T, db sqlx.Execer, clicks []elidotest.Click)
	// rows is the store's clicks of a day as multiset writes them.
	rows func(t *testing.T, db *sqlx.DB, d reconcile.Date) []string
	// killWriter ends the connection of the repair's writer, which is in
	// the middle of its day's transaction.
	killWriter func(t *testing.T, db *sqlx.DB)
	// lockWaits counts the sessions (other than its own) that wait for the
	// lock a day's re-count takes on clicks.
	lockWaits string
	// sqlRunner returns what runs a repair.sql on w's store the way its
	// header tells an operator to, or skips t when it cannot.
	sqlRunner func(t *testing.T, w world) func(ctx context.Context, script string) error
	// sqlRefusal is what a repair.sql says when an hour fails its re-count.
	sqlRefusal string
}

var (
	postgresEngine = engine{
		name:       "postgres",
		dialect:    dsn.Postgres,
		server:     pgtest.New,
		insert:     insertRows,
		rows:       func(t *testing.T, db *sqlx.DB, d reconcile.Date) []string { return pgRows(t, db, d, "ts") },
		killWriter: pgKillWriter,
		lockWaits:  "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass('clicks')",
		sqlRunner: func(t *testing.T, w world) func(context.Context, string) error {
			return func(ctx context.Context, script string) error {
				_, err := w.db.ExecContext(ctx, script)
				if err != nil {
					w.db.Exec("ROLLBACK") // the failed script's transaction, if its connection kept it
				}
				return err
			}
		},
		sqlRefusal: "no longer holds the 5 clicks the repair was planned on",
	}
	mysqlEngine = engine{
		name:       "mysql",
		dialect:    dsn.MySQL,
		server:     mysqltest.New,
		insert:     mysqlInsertRows,
		rows:       mysqlRows,
		killWriter: mysqlKillWriter,
		// MariaDB does not list a transaction that has only read in
		// INNODB_TRX: the waiting locking read is found in PROCESSLIST.
		lockWaits: `SELECT count(*) FROM information_schema.PROCESSLIST
			WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' AND INFO LIKE '%LOCK IN SHARE MODE%'`,
		sqlRunner: func(t *testing.T, w world) func(context.Context, string) error {
			args := mysqlClient(t, w.dsn)
			return func(ctx context.Context, script string) error {
				if out, err := runMySQL(ctx, args, script); err != nil {
					return fmt.Errorf("%w: %s", err, out)
				}
				return nil
			}
		},
		sqlRefusal: "store changed since the plan: nothing written; plan again",
	}
	engines = []engine{postgresEngine, mysqlEngine}
)

// database returns a fresh database of e with the reference events schema,
// and its DSN.
func (e engine) database(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	db, raw := e.server(t)
	schema, err := os.ReadFile(filepath.Join("..", "sql", "store", e.name, "events.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	return db, raw
}

// world is the fake Elido, a real store of an engine (read-only and
// writable roles alike, on one database) and the real clients for them.
type world struct {
	engine engine
	dsn    string // the store's, on its own database
	srv    *elidotest.Server
	api    *elido.Client
	db     *sqlx.DB
	st     *store.Store
	w      *store.Writer
	query  store.Query
}

// newWorld is a world on PostgreSQL.
func newWorld(t *testing.T, elidoClicks, stored []elidotest.Click) world {
	t.Helper()
	return postgresEngine.world(t, elidoClicks, stored)
}

// world returns a world on e whose Elido has elidoClicks and whose store
// the clicks stored.
func (e engine) world(t *testing.T, elidoClicks, stored []elidotest.Click) world {
	t.Helper()
	return e.worldAltered(t, nil, elidoClicks, stored)
}

// worldAltered is world on a reference schema changed by the statements
// alter, before the clicks are stored.
func (e engine) worldAltered(t *testing.T, alter []string, elidoClicks, stored []elidotest.Click) world {
	t.Helper()
	db, dsn := e.database(t)
	for _, stmt := range alter {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	e.insert(t, db, stored)
	srv, api := fakeElido(t, elidoClicks)
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
	return world{engine: e, dsn: dsn, srv: srv, api: api, db: db, st: st, w: w, query: q}
}

// fakeElido starts the fake Elido with clicks, in a workspace of t's own,
// and returns it and a client of it, without a rate limit to speak of.
func fakeElido(t *testing.T, clicks []elidotest.Click) (*elidotest.Server, *elido.Client) {
	t.Helper()
	ws := "ws_" + strings.ReplaceAll(t.Name(), "/", "_")
	srv := elidotest.NewServer(ws, testKey, clicks)
	t.Cleanup(srv.Close)
	api, err := elido.New(elido.Config{BaseURL: srv.URL(), APIKey: testKey, WorkspaceID: ws, RatePerMinute: 6_000_000})
	if err != nil {
		t.Fatal(err)
	}
	return srv, api
}

// lostBurst returns a world on e whose store lost a burst of 60 clicks in
// day1's 02:00 hour, the clicks Elido has, and the burst.
func (e engine) lostBurst(t *testing.T) (w world, elidoClicks, lost []elidotest.Click) {
	t.Helper()
	lost = burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks = cat(background(day1), lost)
	return e.world(t, elidoClicks, without(elidoClicks, lost)), elidoClicks, lost
}

// plan plans the repair of o on w.
func (w world) plan(t *testing.T, o repair.Options) []repair.DayPlan {
	t.Helper()
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// rows is the store's multiset of clicks for a day, sorted.
func (w world) rows(t *testing.T, d reconcile.Date) []string {
	t.Helper()
	return w.engine.rows(t, w.db, d)
}

// lockWaiter returns a channel closed once a session waits for the lock a
// day's re-count takes on clicks (polled every few milliseconds until stop
// is closed): the event the tests interleave on, not a guessed time.
func lockWaiter(t *testing.T, w world, stop <-chan struct{}) <-chan struct{} {
	waiting := make(chan struct{})
	go func() {
		for {
			var n int
			if err := w.db.Get(&n, w.engine.lockWaits); err != nil {
				t.Error(err)
				return
			}
			if n > 0 {
				close(waiting)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return waiting
}

// insertRows inserts clicks into PostgreSQL in one statement.
func insertRows(t *testing.T, db sqlx.Execer, clicks []elidotest.Click) {
	t.Helper()
	ts := make([]string, len(clicks))
	links := make([]string, len(clicks))
	countries := make([]string, len(clicks))
	for i, c := range clicks {
		ts[i], links[i], countries[i] = c.TS.UTC().Format(time.RFC3339Nano), c.LinkID, c.CountryCode
	}
	if _, err := db.Exec(`INSERT INTO clicks (ts, link_id, country_code)
SELECT ts, link, nullif(country, '') FROM unnest($1::timestamptz[], $2::text[], $3::text[]) AS c (ts, link, country)`,
		pq.Array(ts), pq.Array(links), pq.Array(countries)); err != nil {
		t.Fatal(err)
	}
}

// mysqlInsertRows is insertRows on MySQL.
func mysqlInsertRows(t *testing.T, db sqlx.Execer, clicks []elidotest.Click) {
	t.Helper()
	if len(clicks) == 0 {
		return
	}
	values := strings.TrimSuffix(strings.Repeat("(?, ?, NULLIF(?, '')),", len(clicks)), ",")
	var args []any
	for _, c := range clicks {
		args = append(args, c.TS.UTC(), c.LinkID, c.CountryCode)
	}
	if _, err := db.Exec("INSERT INTO clicks (ts, link_id, country_code) VALUES "+values, args...); err != nil {
		t.Fatal(err)
	}
}

// pgRows is a PostgreSQL store's clicks of a day, each click's instant
// read as the SQL expression ts.
func pgRows(t *testing.T, db *sqlx.DB, d reconcile.Date, ts string) []string {
	t.Helper()
	start, end := d.Bounds(time.UTC)
	var out []string
	rows, err := db.Query("SELECT "+ts+", link_id, coalesce(country_code, '') FROM clicks WHERE "+ts+" >= $1 AND "+ts+" < $2", start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ts time.Time
		var link, country string
		if err := rows.Scan(&ts, &link, &country); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s", ts.UTC().Format(time.RFC3339Nano), link, country))
	}
	slices.Sort(out)
	return out
}

// mysqlRows is a MySQL store's clicks of a day.
func mysqlRows(t *testing.T, db *sqlx.DB, d reconcile.Date) []string {
	t.Helper()
	start, end := d.Bounds(time.UTC)
	rows, err := db.Query("SELECT DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f'), link_id, COALESCE(country_code, '') FROM clicks WHERE ts >= ? AND ts < ?", start, end)
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

// pgKillWriter terminates (pg_terminate_backend) the backend that holds
// the repair's lock on clicks.
func pgKillWriter(t *testing.T, db *sqlx.DB) {
	t.Helper()
	var killed int
	if err := db.Get(&killed, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
WHERE relation = to_regclass('clicks') AND mode = 'ShareLock' AND granted`); err != nil || killed != 1 {
		t.Errorf("killed %d backends (%v), want the writer's", killed, err)
	}
}

// mysqlKillWriter kills (KILL) the connection whose transaction has
// inserted into the test's database.
func mysqlKillWriter(t *testing.T, db *sqlx.DB) {
	t.Helper()
	// InnoDB refreshes INNODB_TRX only when it was last read more than
	// 100ms ago: read it again until it shows the writer.
	var ids []int64
	for deadline := time.Now().Add(5 * time.Second); len(ids) != 1; time.Sleep(150 * time.Millisecond) {
		ids = nil
		if err := db.Select(&ids, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_rows_modified > 0 AND trx_mysql_thread_id IN (SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE())"); err != nil || time.Now().After(deadline) {
			t.Fatalf("writers in a transaction: %v (%v), want the repair's", ids, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("KILL %d", ids[0])); err != nil {
		t.Fatal(err)
	}
}
