// Package demo is the world "clickrecon demo" runs in: a simulated Elido
// API on loopback and an embedded SQLite store, over four days in Warsaw
// around the end of summer time (one of them has 25 hours), where the
// store lost a burst of webhook deliveries and recorded a batch twice.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// The demo's workspace, key and days.
const (
	Workspace = "ws_demo"
	Key       = "demo-key-not-a-secret"
	Zone      = "Europe/Warsaw"
	From      = "2026-10-23"
	To        = "2026-10-26"
)

// World is a running demo: Elido's side on a loopback server, the store's
// in a temporary SQLite file.
type World struct {
	Window      reconcile.Window
	Elido       *elidotest.Server
	StoreDSN    string
	ElidoClicks []elidotest.Click // the clicks Elido counted
	StoreClicks []elidotest.Click // the clicks the store holds
	dir         string
}

// Start builds the demo's world with its days in loc. Close removes it.
func Start(ctx context.Context, loc *time.Location) (*World, error) {
	from, _ := reconcile.ParseDate(From)
	to, _ := reconcile.ParseDate(To)
	w := reconcile.Window{From: from, To: to, Loc: loc}
	elidoClicks, storeClicks := Clicks(w)
	dir, err := os.MkdirTemp("", "clickrecon-demo-*")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "clicks.db")
	if err := buildStore(ctx, path, storeClicks); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build the demo store: %w", err)
	}
	return &World{
		Window:      w,
		Elido:       elidotest.NewServer(Workspace, Key, elidoClicks),
		StoreDSN:    "sqlite:" + path,
		ElidoClicks: elidoClicks,
		StoreClicks: storeClicks,
		dir:         dir,
	}, nil
}

// Close stops the simulated API and removes the store.
func (w *World) Close() {
	w.Elido.Close()
	os.RemoveAll(w.dir)
}

// Clicks makes a few days of realistic traffic (busy afternoons, quiet
// nights, a campaign burst at night) and the store's view of it: the
// burst's middle was lost while the webhook receiver was down, and a batch
// was processed twice by a handler that is not idempotent.
func Clicks(w reconcile.Window) (elidoClicks, storeClicks []elidotest.Click) {
	rng := rand.New(rand.NewPCG(20261023, 1))
	links := []string{"lnk_spring_sale", "lnk_newsletter", "lnk_docs", "lnk_pricing", "lnk_blog"}
	countries := []string{"PL", "PL", "PL", "DE", "DE", "CZ", "GB", "US", ""}
	click := func(ts time.Time, link string) elidotest.Click {
		return elidotest.Click{TS: ts.UTC(), LinkID: link, CountryCode: countries[rng.IntN(len(countries))]}
	}
	for _, d := range w.Days() {
		start, end := d.Bounds(w.Loc)
		for t := start; t.Before(end); t = t.Add(time.Hour) {
			hour := t.In(w.Loc).Hour()
			perHour := 8 + 30*max(0, 6-max(hour-15, 15-hour))/6 // peaks mid-afternoon
			for i := 0; i < perHour+rng.IntN(8); i++ {
				ts := t.Add(time.Duration(rng.Int64N(int64(time.Hour))))
				elidoClicks = append(elidoClicks, click(ts, links[rng.IntN(len(links))]))
			}
		}
	}
	// A click exactly at midnight belongs to the day it starts.
	elidoClicks = append(elidoClicks, click(w.To.Start(w.Loc), "lnk_docs"))

	// Day 2, 02:05-02:45: a newsletter burst; the receiver was down
	// 02:10-02:40 and Elido's retries gave up.
	burstStart := w.From.AddDays(1).Start(w.Loc).Add(2*time.Hour + 5*time.Minute)
	outageStart, outageEnd := burstStart.Add(5*time.Minute), burstStart.Add(35*time.Minute)
	for i := 0; i < 80; i++ {
		elidoClicks = append(elidoClicks, click(burstStart.Add(time.Duration(i)*30*time.Second), "lnk_spring_sale"))
	}
	sort.Slice(elidoClicks, func(i, j int) bool { return elidoClicks[i].TS.Before(elidoClicks[j].TS) })

	// Day 3 (25 hours), 14:00: a batch of 12 deliveries processed twice.
	dupStart := w.From.AddDays(2).Start(w.Loc).Add(15 * time.Hour)
	dups := 0
	for _, c := range elidoClicks {
		// A receiver that is down loses every delivery, whatever its link.
		lost := !c.TS.Before(outageStart) && c.TS.Before(outageEnd)
		if lost {
			continue
		}
		storeClicks = append(storeClicks, c)
		if dups < 12 && !c.TS.Before(dupStart) {
			storeClicks = append(storeClicks, c)
			dups++
		}
	}
	return elidoClicks, storeClicks
}

// buildStore creates an SQLite click store from the reference events
// schema, as a user adopting it would.
func buildStore(ctx context.Context, path string, clicks []elidotest.Click) error {
	schema, err := clickrecon.SQL.ReadFile("sql/store/sqlite/events.sql")
	if err != nil {
		return err
	}
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, string(schema)); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PreparexContext(ctx, `INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, c := range clicks {
		if _, err := stmt.ExecContext(ctx, c.TS.UTC().Format("2006-01-02T15:04:05.000Z"), c.LinkID, c.CountryCode); err != nil {
			return err
		}
	}
	return tx.Commit()
}
