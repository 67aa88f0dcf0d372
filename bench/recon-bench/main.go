// Command recon-bench measures what a whole clickrecon run costs against
// the cheapest correct store work for the same window (the floor), on a
// real PostgreSQL seeded with a reference schema and a fake Elido that
// serves the matching answers.
//
// It builds ./cmd/clickrecon (or takes -binary), drops the binaries from
// the page cache (a just-linked binary's peak RSS reads several MiB high:
// benchkit.DropPageCache), seeds a schema of its own in the database named by -dsn
// (PGTEST_DSN by default), and then runs the binary and the floor
// alternately, -pairs times each, the binary under
// /usr/bin/time -v for its peak RSS. It prints the median wall time of
// each, their ratio, the Elido requests per endpoint of one run, and the
// peak RSS. The schema is dropped at the end, also on Ctrl-C.
//
// Run it from the repository root; see BENCHMARKS.md for the cases and
// their commands.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/clickrecon/clickrecon/bench/internal/benchkit"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

const (
	workspace = "bench"
	apiKey    = "sk_bench_not_a_secret"
	lastDay   = "2026-11-20" // the window ends here: settled, within Elido's retention
)

type options struct {
	preset     string
	days       int
	links      int
	clicks     int // events: clicks per day; daily: unused
	differPct  float64
	differDays int
	// consecutive puts the differing days in one run ending the day
	// before the window's last (a backfill after a long outage);
	// eachDay makes the links that lost clicks others on each of them.
	consecutive bool
	eachDay     bool
	rate        int // ELIDO_RATE_LIMIT
	maxRequests int // RECON_DRILLDOWN_MAX_REQUESTS; 0: its default
	keep        bool
	pairs       int
	dsn         string
	binary      string
	oldBinary   string
	timeBin     string
	schema      string
	psql        string
	mysql       string // a mysql:// server: the store is MySQL or MariaDB
	client      string // the mysql client, for the MySQL floor in one client session
}

func main() {
	var o options
	flag.StringVar(&o.preset, "preset", "events", "store preset: events (one row per click) or daily (a counter per link and day)")
	flag.IntVar(&o.days, "days", 7, "days in the window, ending "+lastDay)
	flag.IntVar(&o.links, "links", 1000, "links in the workspace")
	flag.IntVar(&o.clicks, "clicks-per-day", 20000, "events: clicks per day (the events target's case: 300000 for 2.1M clicks over 7 days)")
	flag.Float64Var(&o.differPct, "differ-pct", 0, "percent of links that lost clicks in the store on -differ-days days (0: a clean window)")
	flag.IntVar(&o.differDays, "differ-days", 2, "days on which links lost clicks, when -differ-pct > 0")
	flag.BoolVar(&o.consecutive, "consecutive", false, "the differing days are consecutive, ending the day before the window's last (a backfill after an outage); default: spread over the window")
	flag.BoolVar(&o.eachDay, "each-day", false, "other links lose clicks on each differing day (the drill-down planner's worst case); default: the same links every day")
	flag.IntVar(&o.rate, "rate", 100000, "ELIDO_RATE_LIMIT of the runs")
	flag.IntVar(&o.maxRequests, "max-requests", 0, "RECON_DRILLDOWN_MAX_REQUESTS of the runs (0: its default); give both binaries room to drill every day to compare their reports")
	flag.BoolVar(&o.keep, "keep", false, "keep the schema seeded, for -schema in later cases (daily preset: a later case undoes this one's losses)")
	flag.IntVar(&o.pairs, "pairs", 3, "runs of the binary and of the floor, alternately")
	flag.StringVar(&o.dsn, "dsn", benchkit.EnvOr("PGTEST_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server (a schema of its own is created and dropped)")
	flag.StringVar(&o.binary, "binary", "", "clickrecon binary to measure (default: go build ./cmd/clickrecon)")
	flag.StringVar(&o.oldBinary, "old-binary", "", "a second binary to measure in the same session, alternately (before/after)")
	flag.StringVar(&o.timeBin, "time", "/usr/bin/time", "GNU time, for the peak RSS (apt-get install time)")
	flag.StringVar(&o.schema, "schema", "", "reuse this schema, seeded by an earlier run with the same -preset, -days, -links and -clicks-per-day, and keep it (default: seed a new one and drop it)")
	flag.StringVar(&o.psql, "psql", "", "also measure the floor as the events target states it, in one psql session: this psql binary (e.g. /usr/lib/postgresql/15/bin/psql), its start and connection included")
	flag.StringVar(&o.mysql, "mysql", "", "measure a MySQL or MariaDB store instead: this mysql:// server (a database of its own is created and dropped), e.g. mysql://root@127.0.0.1:3306/test")
	flag.StringVar(&o.client, "mysql-client", "mysql", "with -mysql, also measure the floor in one session of this mysql client, its start and connection included")
	flag.Parse()
	benchkit.Main("recon-bench", func(ctx context.Context) error { return run(ctx, o) })
}

func run(ctx context.Context, o options) error {
	if err := o.check(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "recon-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.binary == "" {
		if o.binary, err = benchkit.Build(ctx, tmp); err != nil {
			return err
		}
	}
	for _, bin := range []string{o.binary, o.oldBinary} {
		if bin == "" {
			continue
		}
		if err := benchkit.DropPageCache(bin); err != nil {
			return fmt.Errorf("drop %s from the page cache: %w", bin, err)
		}
	}

	w := newWorld(o)
	var dsn, schema string
	var rows int64
	setup := w.setupPostgres
	if o.mysql != "" {
		setup = w.setupMySQL
	}
	cleanup, err := setup(ctx, &dsn, &schema, &rows)
	defer cleanup()
	if err != nil {
		return err
	}

	srv := elidotest.NewServer(workspace, apiKey, w.apiClicks())
	defer srv.Close()
	srv.SetDailyTotals("UTC", w.apiTotals())
	if o.preset == "daily" {
		if err := srv.SetModel(w.apiModel()); err != nil {
			return err
		}
	}

	reports := filepath.Join(tmp, "reports")
	env := runEnv(o, srv.URL(), dsn, reports)
	args := []string{"run", "--from", w.first.Format(time.DateOnly), "--to", lastDay}
	runners := binaryRunners(ctx, o, srv, args, env, reports)
	floors := w.floorRunners(ctx, dsn, schema)
	if err := measure(o.pairs, slices.Concat(runners, floors)); err != nil {
		return err
	}
	printCase(o, w, rows, runners, floors)
	return nil
}

// check reports whether the options describe a case that can be run,
// GNU time included.
func (o options) check() error {
	switch {
	case o.preset != "events" && o.preset != "daily":
		return fmt.Errorf("-preset must be events or daily, got %q", o.preset)
	case o.days < 1 || o.links < 1 || o.pairs < 1 || o.clicks < 1:
		return errors.New("-days, -links, -pairs and -clicks-per-day must be at least 1")
	}
	if _, err := os.Stat(o.timeBin); err != nil {
		return fmt.Errorf("%s: %w (apt-get install time)", o.timeBin, err)
	}
	return nil
}

// runEnv is the environment of a measured run: the fake Elido at api,
// the store at dsn, reports written under reports.
func runEnv(o options, api, dsn, reports string) []string {
	env := append(os.Environ(),
		"ELIDO_API_KEY="+apiKey, "ELIDO_WORKSPACE_ID="+workspace, "ELIDO_API_BASE="+api,
		"ELIDO_RATE_LIMIT="+strconv.Itoa(o.rate), "STORE_DSN="+dsn, "STORE_PRESET="+o.preset, "RECON_TZ=UTC",
		"RECON_MAX_DAYS=400", "RECON_REPORT_DIR="+reports, "LOG_LEVEL=info", "LOG_FORMAT=json",
		"RECON_FORMAT=json")
	if o.maxRequests > 0 {
		env = append(env, "RECON_DRILLDOWN_MAX_REQUESTS="+strconv.Itoa(o.maxRequests))
	}
	return env
}

// runner is one thing measured, a binary or a floor, and what its runs
// cost so far.
type runner struct {
	name  string
	times []time.Duration
	rss   []int64
	cpu   []time.Duration
	store []time.Duration
	reqs  map[string]int
	run   func() (measured, map[string]int, error)
}

// binaryRunners are the binary and, with -old-binary, the old one, each
// run with args and env. A run counts the Elido requests it made, and its
// report (under reports) must agree with the first run's in what the
// drill-down found.
func binaryRunners(ctx context.Context, o options, srv *elidotest.Server, args, env []string, reports string) []*runner {
	var firstReport []byte // the drilled parts of the first run's report
	binaryRunner := func(name, bin string) *runner {
		return &runner{name: name, run: func() (measured, map[string]int, error) {
			before := srv.Requests()
			m, err := runBinary(ctx, o.timeBin, bin, args, env)
			after := srv.Requests()
			for k, v := range before {
				after[k] -= v
			}
			if err != nil {
				return m, after, err
			}
			drilled, err := drilledParts(reports)
			switch {
			case err != nil:
				return m, after, err
			case firstReport == nil:
				firstReport = drilled
			case !bytes.Equal(firstReport, drilled):
				return m, after, fmt.Errorf("%s's report differs from the first run's in its days, links, countries or findings", name)
			}
			return m, after, nil
		}}
	}
	runners := []*runner{binaryRunner("clickrecon", o.binary)}
	if o.oldBinary != "" {
		runners = append(runners, binaryRunner("old clickrecon", o.oldBinary))
	}
	return runners
}

// floorRunners are the floors the case compares with: the floor in this
// process, the gap floor when days differ (PostgreSQL), and the floor in
// one session of the mysql client or psql when one is given.
func (w *world) floorRunners(ctx context.Context, dsn, schema string) []*runner {
	o := w.o
	floorRunner := func(name string, floor func() (time.Duration, error)) *runner {
		return &runner{name: name, run: func() (measured, map[string]int, error) {
			took, err := floor()
			return measured{took: took}, nil, err
		}}
	}
	floors := []*runner{floorRunner("floor", func() (time.Duration, error) {
		if o.mysql != "" {
			return w.floorMySQL(ctx, o.mysql, schema)
		}
		return w.floor(ctx, dsn)
	})}
	if o.mysql == "" && w.differing() > 0 {
		floors = append(floors, floorRunner("gap floor", func() (time.Duration, error) { return w.gapFloor(ctx, dsn) }))
	}
	if o.mysql != "" && o.client != "" {
		floors = append(floors, floorRunner("mysql floor", func() (time.Duration, error) {
			return w.mysqlClientFloor(ctx, o.client, o.mysql, schema)
		}))
	}
	if o.psql != "" && o.mysql == "" {
		floors = append(floors, floorRunner("psql floor", func() (time.Duration, error) {
			return w.psqlFloor(ctx, o.psql, o.dsn, schema)
		}))
	}
	return floors
}

// measure runs every runner in turn, pairs times, keeping what each run
// cost and printing its wall time.
func measure(pairs int, all []*runner) error {
	for i := 0; i < pairs; i++ {
		for _, r := range all {
			m, reqs, err := r.run()
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", r.name, i+1, err)
			}
			r.times, r.rss, r.reqs = append(r.times, m.took), append(r.rss, m.rss), reqs
			r.cpu, r.store = append(r.cpu, m.cpu), append(r.store, m.store)
			fmt.Printf("  %-15s run %d: %8.3fs\n", r.name, i+1, m.took.Seconds())
		}
	}
	return nil
}

// printCase prints the case and, for each floor, its median and each
// binary's medians against it, peak RSS and Elido requests.
func printCase(o options, w *world, rows int64, runners, floors []*runner) {
	store := "postgres"
	if o.mysql != "" {
		store = "mysql"
	}
	fmt.Printf("\ncase: store=%s preset=%s days=%d links=%d rows=%d differ-pct=%g differ-days=%d consecutive=%v each-day=%v rate=%d pairs=%d\n",
		store, o.preset, o.days, o.links, rows, o.differPct, w.differing(), o.consecutive, o.eachDay, o.rate, o.pairs)
	for i, f := range floors {
		floor := median(f.times)
		what, how := w.floorText(), "in this process, one session"
		switch {
		case f.name == "gap floor":
			what += fmt.Sprintf(", then each of the %d differing days' per-link rows", w.differing())
		case i > 0 && o.mysql != "":
			how = "in one mysql client session, its start included"
		case i > 0:
			how = "in one psql session, its start included"
		}
		fmt.Printf("%s (%s, %s): median %.3fs\n", f.name, what, how, floor.Seconds())
		for _, r := range runners {
			m := median(r.times)
			fmt.Printf("%s: median %.3fs = %.2fx the %s; store time median %.3fs = %.2fx; CPU median %.3fs; peak RSS %.1f MiB (max of %d runs); API requests per run %s\n",
				r.name, m.Seconds(), m.Seconds()/floor.Seconds(), f.name, median(r.store).Seconds(), median(r.store).Seconds()/floor.Seconds(),
				median(r.cpu).Seconds(), float64(slices.Max(r.rss))/1024, len(r.rss), formatRequests(r.reqs))
		}
	}
}
