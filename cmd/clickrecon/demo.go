package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon"
	"github.com/clickrecon/clickrecon/internal/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The demo's world: a workspace in Warsaw over four days around the end of
// summer time, so one of the days has 25 hours.
const (
	demoWorkspace = "ws_demo"
	demoKey       = "demo-key-not-a-secret"
	demoZone      = "Europe/Warsaw"
	demoFrom      = "2026-10-23"
	demoTo        = "2026-10-26"
)

// cmdDemo runs the real pipeline against a simulated Elido API on
// loopback and an embedded SQLite store that lost some clicks and
// recorded others twice. It reads no variable but LOG_LEVEL and
// LOG_FORMAT, needs no network and no secret.
func cmdDemo(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	vars := map[string]string{
		"RECON_REPORT_DIR": "clickrecon-demo",
		"RECON_TZ":         demoZone,
		"LOG_FORMAT":       "text",
		"LOG_LEVEL":        "warn",
	}
	for _, name := range []string{"LOG_LEVEL", "LOG_FORMAT"} {
		if v, ok := env.Lookup(name); ok {
			vars[name] = v
		}
	}
	c, err := parseArgs(ctx, "demo", args, envconfig.MapLookuper(vars), stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := c.validateCommon(); err != nil {
		return usageExit(stderr, err)
	}
	loc, err := loadZone(c.TZ)
	if err != nil {
		return usageExit(stderr, err)
	}
	from, _ := reconcile.ParseDate(demoFrom)
	to, _ := reconcile.ParseDate(demoTo)
	w := reconcile.Window{From: from, To: to, Loc: loc}
	bar := job.NewBar(stderr)
	log := newLogger(bar, c.LogFormat, c.LogLevel)

	elidoClicks, storeClicks := demoClicks(w)
	srv := elidotest.NewServer(demoWorkspace, demoKey, elidoClicks)
	defer srv.Close()

	tmp, err := os.MkdirTemp("", "clickrecon-demo-*")
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}
	defer os.RemoveAll(tmp)
	dbPath := filepath.Join(tmp, "clicks.db")
	if err := buildDemoStore(ctx, dbPath, storeClicks); err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: build the demo store: %v\n", err)
		return exitIncomplete
	}

	runKey := report.RunKey(demoWorkspace, w, "demo")
	log = log.With("run_key", runKey)
	client, err := elido.New(elido.Config{BaseURL: srv.URL(), APIKey: demoKey, WorkspaceID: demoWorkspace, RatePerMinute: 6000, Logger: log}, d.elido...)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}
	query, err := store.PresetQuery("events")
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}

	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if c.Format == "text" {
		fmt.Fprintf(stdout, "clickrecon demo: a simulated Elido API on %s and an embedded SQLite store of %d clicks\n"+
			"(Elido counted %d; the store lost a burst of webhook deliveries on %s and recorded a retried batch twice on %s).\n\n",
			srv.URL(), len(storeClicks), len(elidoClicks), from.AddDays(1), from.AddDays(2))
	}
	o := c.options(w)
	o.WorkspaceID, o.RunKey, o.StoreID = demoWorkspace, runKey, report.StoreID("demo")
	o.StoreDSN, o.Query = "sqlite:"+dbPath, query
	o.Retention = 0 // the demo's days are fixed; they never age out of the simulated Elido
	code, _ := runJob(ctx, o, job.Deps{Elido: client, Log: log, Now: d.now, Progress: bar}, c.failOn(), nil, c.Format, true, stdout)
	return code
}

// demoClicks makes a few days of realistic traffic (busy afternoons, quiet
// nights, a campaign burst at night) and the store's view of it: the
// burst's middle was lost while the webhook receiver was down, and a batch
// was processed twice by a handler that is not idempotent.
func demoClicks(w reconcile.Window) (elidoClicks, storeClicks []elidotest.Click) {
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
			perHour := 8 + 30*max(0, 6-abs(hour-15))/6 // peaks mid-afternoon
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
		lost := !c.TS.Before(outageStart) && c.TS.Before(outageEnd) && c.LinkID == "lnk_spring_sale"
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// buildDemoStore creates an SQLite click store from the reference events
// schema, as a user adopting it would.
func buildDemoStore(ctx context.Context, path string, clicks []elidotest.Click) error {
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
