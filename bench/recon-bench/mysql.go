package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// The MySQL or MariaDB case (-mysql): the same world, seeded from
// sql/store/mysql into a database of its own, and the floor as seven
// per-day count(*) in one session: in this process, and in one mysql
// client process (its start and connection included), as an operator
// would run it.

// mysqlOpen opens a pool on the server of rawDSN, a mysql:// URL, using
// database (none when empty), allowed several statements per Exec (a
// schema file) when multi is set.
func mysqlOpen(rawDSN, database string, multi bool) (*sql.DB, error) {
	t, err := dsn.Parse(rawDSN, dsn.Options{Name: "-mysql", MySQL: true})
	if err != nil {
		return nil, err
	}
	c := t.MySQLConfig.Clone()
	c.DBName, c.MultiStatements = database, multi
	c.Params = map[string]string{"time_zone": "'+00:00'"}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// mysqlDatabase returns rawDSN naming database.
func mysqlDatabase(rawDSN, database string) (string, error) {
	u, err := url.Parse(rawDSN)
	if err != nil {
		return "", fmt.Errorf("-mysql: %w", err)
	}
	u.Path = "/" + database
	return u.String(), nil
}

// seedMySQL creates the reference schema in database and fills it as seed
// does PostgreSQL, then analyzes the table. It returns the rows written.
func (w *world) seedMySQL(ctx context.Context, rawDSN, database string, reuse bool) (int64, error) {
	db, err := mysqlOpen(rawDSN, database, true)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one session: its variables hold for every statement
	schema, err := os.ReadFile(filepath.Join("sql", "store", "mysql", w.o.preset+".sql"))
	if err != nil {
		return 0, fmt.Errorf("read the reference schema (run from the repository root): %w", err)
	}
	table := map[string]string{"events": "clicks", "daily": "click_counts"}[w.o.preset]
	if !reuse {
		if _, err := db.ExecContext(ctx, string(schema)); err != nil {
			return 0, fmt.Errorf("create the reference schema: %w", err)
		}
		// The sequences are recursive CTEs, which MySQL and MariaDB bound
		// at 1000 levels unless told, each with its own variable.
		for _, set := range []string{"SET SESSION cte_max_recursion_depth = 100000000", "SET SESSION max_recursive_iterations = 100000000"} {
			if _, err := db.ExecContext(ctx, set); err != nil && !strings.Contains(err.Error(), "1193") { // unknown variable
				return 0, err
			}
		}
		first := w.first.Format("2006-01-02 15:04:05")
		var seed string
		var args []any
		switch w.o.preset {
		case "events":
			// The same placement as eventLink, eventTime and countries.
			seed = `INSERT INTO clicks (ts, link_id, country_code)
WITH RECURSIVE d (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n + 1 < ?),
     i (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < ?)
SELECT TIMESTAMPADD(MICROSECOND, i.n * 86400000000 DIV ?, TIMESTAMPADD(DAY, d.n, CAST(? AS DATETIME(3)))),
       CONCAT('lnk_', LPAD((i.n * 7919 + d.n) % ?, 6, '0')),
       ELT(1 + i.n % 4, 'PL', 'DE', 'US', 'FR')
FROM d CROSS JOIN i`
			args = []any{w.o.days, w.o.clicks, w.o.clicks, first, w.o.links}
		case "daily":
			seed = `INSERT INTO click_counts (day, link_id, clicks)
WITH RECURSIVE d (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n + 1 < ?),
     l (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM l WHERE n + 1 < ?)
SELECT DATE_ADD(CAST(? AS DATE), INTERVAL d.n DAY), CONCAT('lnk_', LPAD(l.n, 6, '0')), 1 + l.n % 5
FROM d CROSS JOIN l`
			args = []any{w.o.days, w.o.links, w.first.Format(time.DateOnly)}
		}
		if _, err := db.ExecContext(ctx, seed, args...); err != nil {
			return 0, fmt.Errorf("seed %s: %w", table, err)
		}
	}
	every := w.every()
	for d := range w.lost {
		day := w.first.AddDate(0, 0, d)
		var err error
		switch w.o.preset {
		case "events": // the lost links lose every click of the day
			_, err = db.ExecContext(ctx, `DELETE FROM clicks WHERE ts >= ? AND ts < ? AND CAST(SUBSTRING(link_id, 5) AS UNSIGNED) % ? = ?`,
				day, day.AddDate(0, 0, 1), every, w.shift[d])
		case "daily": // the lost links lose one click of the day
			_, err = db.ExecContext(ctx, `UPDATE click_counts SET clicks = clicks - 1 WHERE day = ? AND CAST(SUBSTRING(link_id, 5) AS UNSIGNED) % ? = ?`,
				day.Format(time.DateOnly), every, w.shift[d])
		}
		if err != nil {
			return 0, fmt.Errorf("seed %s: %w", table, err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		return 0, fmt.Errorf("analyze %s: %w", table, err)
	}
	var rows int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows)
	return rows, err
}

// floorMySQL is floor on MySQL: the window's per-day counts in one new
// session of this process.
func (w *world) floorMySQL(ctx context.Context, rawDSN, database string) (time.Duration, error) {
	started := time.Now()
	db, err := mysqlOpen(rawDSN, database, false)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	err = w.floorOn(ctx, db, floorQueries{
		day:    "SELECT count(*) FROM clicks WHERE ts >= ? AND ts < ?",
		window: "SELECT day, sum(clicks) FROM click_counts WHERE day BETWEEN ? AND ? GROUP BY day",
	})
	return time.Since(started), err
}

// mysqlClientFloor is the floor's statements in one new mysql client
// process, its start and connection included, as the binary's are. The
// bounds are literals; each day's count is checked.
func (w *world) mysqlClientFloor(ctx context.Context, client, rawDSN, database string) (time.Duration, error) {
	t, err := dsn.Parse(rawDSN, dsn.Options{Name: "-mysql", MySQL: true})
	if err != nil {
		return 0, err
	}
	c := t.MySQLConfig
	host, port, ok := strings.Cut(c.Addr, ":")
	if !ok || c.Net != "tcp" {
		return 0, fmt.Errorf("-mysql-client needs a host and port in -mysql")
	}
	var script strings.Builder
	switch w.o.preset {
	case "events":
		for d := 0; d < w.o.days; d++ {
			from := w.first.AddDate(0, 0, d)
			fmt.Fprintf(&script, "SELECT count(*) FROM clicks WHERE ts >= '%s' AND ts < '%s';\n",
				from.Format(time.DateTime), from.AddDate(0, 0, 1).Format(time.DateTime))
		}
	case "daily":
		fmt.Fprintf(&script, "SELECT day, sum(clicks) FROM click_counts WHERE day BETWEEN '%s' AND '%s' GROUP BY day;\n",
			w.first.Format(time.DateOnly), lastDay)
	}
	cmd := exec.CommandContext(ctx, client, "--batch", "--skip-column-names", "-h", host, "-P", port, "-u", c.User, database)
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+c.Passwd)
	cmd.Stdin = strings.NewReader(script.String())
	started := time.Now()
	out, err := cmd.Output()
	took := time.Since(started)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", client, err)
	}
	if n := len(strings.Split(strings.TrimSpace(string(out)), "\n")); n != w.o.days {
		return 0, fmt.Errorf("the mysql client floor read %d days, want %d:\n%s", n, w.o.days, out)
	}
	return took, nil
}
