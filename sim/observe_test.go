package sim

import (
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"

	"github.com/clickrecon/clickrecon/reconcile"
)

// observer reads and writes the store as the team's receiver does, past
// clickrecon and its gate, and lists what the databases hold.
type observer interface {
	insert(t *testing.T, cs []click)
	keys(t *testing.T, from, to time.Time) map[string]int
	tables(t *testing.T) []string
	repairDir(t *testing.T) string
}

type sqliteObserver struct {
	db               *sqlx.DB
	storeDir, hisDir string
	repair           string
}

func openSQLite(t *testing.T, path, storeDir, histDir string) observer {
	db, err := sqlx.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(readSchema(t, "sqlite")); err != nil {
		t.Fatal(err)
	}
	return &sqliteObserver{db: db, storeDir: storeDir, hisDir: histDir, repair: t.TempDir()}
}

func (o *sqliteObserver) insert(t *testing.T, cs []click) {
	insertAll(t, o.db, cs, func(c click) any { return c.ts.UTC().Format(time.RFC3339) })
}

func insertAll(t *testing.T, db *sqlx.DB, cs []click, ts func(click) any) {
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		var cc any = c.country
		if c.country == "" {
			cc = nil
		}
		if _, err := tx.Exec(db.Rebind("INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)"), ts(c), c.link, cc); err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func (o *sqliteObserver) keys(t *testing.T, from, to time.Time) map[string]int {
	rows, err := o.db.Query("SELECT ts, link_id, coalesce(country_code, '') FROM clicks WHERE julianday(ts) >= julianday(?) AND julianday(ts) < julianday(?)",
		from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	return readKeys(t, rows, func(v any) time.Time {
		s, _ := v.(string)
		s = strings.Replace(s, " ", "T", 1)
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("a ts in the store that is not RFC 3339: %q", s)
		}
		return ts
	})
}

func readKeys(t *testing.T, rows *sql.Rows, ts func(any) time.Time) map[string]int {
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var v any
		var link, country string
		if err := rows.Scan(&v, &link, &country); err != nil {
			t.Fatal(err)
		}
		out[click{ts: ts(v), link: link, country: country}.key()]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (o *sqliteObserver) tables(t *testing.T) []string {
	var out []string
	for _, db := range []struct {
		name string
		db   *sqlx.DB
	}{{"store", o.db}} {
		var names []string
		if err := db.db.Select(&names, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') ORDER BY name"); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out = append(out, db.name+" table "+n)
		}
	}
	out = append(out, sqliteFiles(t, "store", o.storeDir)...)
	out = append(out, sqliteFiles(t, "history", o.hisDir)...)
	sort.Strings(out)
	return out
}

// sqliteFiles lists the files of dir, which holds SQLite databases, as
// "<name> file <file>": SQLite's own companions of a file, which come and
// go, are left out, and the run lock's file (clickrecon's own) is named
// without its suffix.
func sqliteFiles(t *testing.T, name, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if strings.HasSuffix(n, "-wal") || strings.HasSuffix(n, "-shm") || strings.HasSuffix(n, "-journal") {
			continue
		}
		if i := strings.Index(n, ".lock-"); i > 0 {
			n = n[:i] + ".lock-*"
		}
		out = append(out, name+" file "+n)
	}
	return out
}

func (o *sqliteObserver) repairDir(*testing.T) string { return o.repair }

type pgObserver struct {
	db, hist *sqlx.DB
	repair   string
}

func (o *pgObserver) insert(t *testing.T, cs []click) {
	insertAll(t, o.db, cs, func(c click) any { return c.ts })
}

func (o *pgObserver) keys(t *testing.T, from, to time.Time) map[string]int {
	rows, err := o.db.Query("SELECT ts, link_id, coalesce(country_code, '') FROM clicks WHERE ts >= $1 AND ts < $2", from, to)
	if err != nil {
		t.Fatal(err)
	}
	return readKeys(t, rows, func(v any) time.Time { ts, _ := v.(time.Time); return ts.UTC() })
}

func (o *pgObserver) tables(t *testing.T) []string {
	var out []string
	for _, db := range []struct {
		name string
		db   *sqlx.DB
	}{{"store", o.db}, {"history", o.hist}} {
		var names []string
		if err := db.db.Select(&names, `SELECT c.relkind::text || ' ' || c.relname FROM pg_class c
			WHERE c.relnamespace = current_schema()::regnamespace ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out = append(out, db.name+" "+n)
		}
	}
	return out
}

func (o *pgObserver) repairDir(t *testing.T) string {
	if o.repair == "" {
		o.repair = t.TempDir()
	}
	return o.repair
}

// snapshot is the model's truth for a night's window as the run read it:
// each day's count at Elido and in the store.
type snapshot struct {
	days  []reconcile.Date
	api   map[reconcile.Date]int64
	local map[reconcile.Date]int64
	keys  map[string]int // the store's clicks of the window
}

func (s *sim) dayOf(ts time.Time) reconcile.Date { return reconcile.DateOf(ts.In(s.loc)) }

// snapshot reads the model's truth for the days since (the window's, and
// the days before it an alert may still be open on) at now.
func (s *sim) snapshot(w reconcile.Window, now time.Time, since reconcile.Date) snapshot {
	sn := snapshot{days: w.Days(), api: map[reconcile.Date]int64{}, local: map[reconcile.Date]int64{}}
	from, to := s.world.dayStart(since), s.world.dayStart(w.To.AddDays(1))
	for _, c := range s.world.visible(now, from) {
		if c.TS.Before(to) {
			sn.api[s.dayOf(c.TS)]++
		}
	}
	sn.keys = s.obs.keys(s.t, from, to)
	for k, n := range sn.keys {
		ts, _ := time.Parse(time.RFC3339, k[:strings.IndexByte(k, '|')])
		sn.local[s.dayOf(ts)] += int64(n)
	}
	return sn
}

// gap is a day's gap as the model knows it: its status and counts.
func (sn snapshot) gap(d reconcile.Date) (status string, api, local int64, isGap bool) {
	api, local = sn.api[d], sn.local[d]
	switch {
	case local < api:
		return "missing", api, local, true
	case local > api:
		return "surplus", api, local, true
	}
	return "match", api, local, false
}

// objectsOutside lists the objects written outside the reports' prefix.
func objectsOutside(objs []string) []string {
	var out []string
	for _, o := range objs {
		if !strings.HasPrefix(o, "/reports/nightly/") {
			out = append(out, o)
		}
	}
	return out
}

func filesIn(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir && err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// myObserver is a MariaDB store (the events schema's DATETIME(3) in UTC)
// beside a SQLite history.
type myObserver struct {
	db     *sqlx.DB
	hisDir string
	repair string
}

func (o *myObserver) insert(t *testing.T, cs []click) {
	insertAll(t, o.db, cs, func(c click) any { return c.ts.UTC().Format("2006-01-02 15:04:05") })
}

func (o *myObserver) keys(t *testing.T, from, to time.Time) map[string]int {
	rows, err := o.db.Query("SELECT DATE_FORMAT(ts, '%Y-%m-%dT%H:%i:%sZ'), link_id, coalesce(country_code, '') FROM clicks WHERE ts >= ? AND ts < ?",
		from.UTC().Format("2006-01-02 15:04:05"), to.UTC().Format("2006-01-02 15:04:05"))
	if err != nil {
		t.Fatal(err)
	}
	return readKeys(t, rows, func(v any) time.Time {
		var s string
		switch v := v.(type) {
		case []byte:
			s = string(v)
		case string:
			s = v
		}
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("a ts in the store that is not a time: %q", s)
		}
		return ts
	})
}

func (o *myObserver) tables(t *testing.T) []string {
	var names []string
	if err := o.db.Select(&names, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1"); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		out = append(out, "store table "+n)
	}
	out = append(out, sqliteFiles(t, "history", o.hisDir)...)
	sort.Strings(out)
	return out
}

func (o *myObserver) repairDir(*testing.T) string { return o.repair }
