package main

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func (w *world) floorText() string {
	text := "SELECT day, sum(clicks) FROM click_counts WHERE day BETWEEN $1 AND $2 GROUP BY day"
	if w.o.preset == "events" {
		text = fmt.Sprintf("%d per-day SELECT count(*) FROM clicks WHERE ts >= $1 AND ts < $2", w.o.days)
	}
	if w.o.mysql != "" {
		text = strings.NewReplacer("$1", "?", "$2", "?").Replace(text)
	}
	return text
}

// psqlFloor is the floor's statements in one new psql process, as the
// floor was first measured: its start and connection count, as the
// binary's do. The bounds are literals; each day's count is checked.
func (w *world) psqlFloor(ctx context.Context, psql, rawDSN, schema string) (time.Duration, error) {
	u, err := url.Parse(rawDSN)
	if err != nil {
		return 0, err
	}
	q := u.Query()
	q.Set("options", "-csearch_path="+schema) // libpq has no search_path parameter
	u.RawQuery = q.Encode()
	var script strings.Builder
	switch w.o.preset {
	case "events":
		for d := 0; d < w.o.days; d++ {
			from := w.first.AddDate(0, 0, d)
			fmt.Fprintf(&script, "SELECT count(*) FROM clicks WHERE ts >= '%s' AND ts < '%s';\n",
				from.Format(time.RFC3339), from.AddDate(0, 0, 1).Format(time.RFC3339))
		}
	case "daily":
		fmt.Fprintf(&script, "SELECT day, sum(clicks) FROM click_counts WHERE day BETWEEN '%s' AND '%s' GROUP BY day;\n",
			w.first.Format(time.DateOnly), lastDay)
	}
	cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", u.String(), "-f", "-")
	cmd.Stdin = strings.NewReader(script.String())
	started := time.Now()
	out, err := cmd.Output()
	took := time.Since(started)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", psql, err)
	}
	if n := len(strings.Fields(string(out))); n != w.o.days {
		return 0, fmt.Errorf("the psql floor read %d days, want %d:\n%s", n, w.o.days, out)
	}
	return took, nil
}

// floor is the cheapest correct store work for the window: what any
// reconciliation has to ask the store, in one new session.
func (w *world) floor(ctx context.Context, dsn string) (time.Duration, error) {
	started := time.Now()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	err = w.floorOn(ctx, db, floorQueries{
		day:    "SELECT count(*) FROM clicks WHERE ts >= $1 AND ts < $2",
		window: "SELECT day, sum(clicks) FROM click_counts WHERE day BETWEEN $1 AND $2 GROUP BY day",
	})
	return time.Since(started), err
}

// gapFloor is the floor of a night with gaps: the window's totals and
// each differing day's per-link counts, every row read, in one new
// session: what any per-link drill-down has to ask the store.
func (w *world) gapFloor(ctx context.Context, dsn string) (time.Duration, error) {
	started := time.Now()
	if _, err := w.floor(ctx, dsn); err != nil {
		return 0, err
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	query := "SELECT link_id, clicks FROM click_counts WHERE day = $1"
	if w.o.preset == "events" {
		query = "SELECT link_id, count(*) FROM clicks WHERE ts >= $1 AND ts < $2 GROUP BY link_id"
	}
	for _, d := range slices.Sorted(maps.Keys(w.lost)) {
		day := w.first.AddDate(0, 0, d)
		args := []any{day.Format(time.DateOnly)}
		if w.o.preset == "events" {
			args = []any{day, day.AddDate(0, 0, 1)}
		}
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		n := 0
		for rows.Next() {
			var id string
			var clicks int64
			if err := rows.Scan(&id, &clicks); err != nil {
				rows.Close()
				return 0, err
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, fmt.Errorf("the gap floor read no link of day %s", day.Format(time.DateOnly))
		}
	}
	return time.Since(started), nil
}

// floorQueries are the floor's statements in a driver's placeholders: a
// day's count of the events preset, and the daily preset's window.
type floorQueries struct{ day, window string }

// floorOn runs the floor's statements on db, on one connection, and
// checks that every day of the window was read.
func (w *world) floorOn(ctx context.Context, db *sql.DB, q floorQueries) error {
	db.SetMaxOpenConns(1)
	var got []int64
	switch w.o.preset {
	case "events":
		for d := 0; d < w.o.days; d++ {
			var n int64
			from := w.first.AddDate(0, 0, d)
			if err := db.QueryRowContext(ctx, q.day, from, from.AddDate(0, 0, 1)).Scan(&n); err != nil {
				return err
			}
			got = append(got, n)
		}
	case "daily":
		rows, err := db.QueryContext(ctx, q.window,
			w.first.Format(time.DateOnly), lastDay)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var day any // a date, as each driver gives it
			var n int64
			if err := rows.Scan(&day, &n); err != nil {
				return err
			}
			got = append(got, n)
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	if len(got) != w.o.days {
		return fmt.Errorf("the floor read %d days, want %d", len(got), w.o.days)
	}
	return nil
}
