// Command recon-bench measures what a whole clickrecon run costs against
// the cheapest correct store work for the same window (the floor), on a
// real PostgreSQL seeded with a reference schema and a fake Elido that
// serves the matching answers.
//
// It builds ./cmd/clickrecon (or takes -binary), drops the binaries from
// the page cache (a just-linked binary's peak RSS reads several MiB high:
// dropPageCache), seeds a schema of its own in the database named by -dsn
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
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/reconcile"
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
	flag.IntVar(&o.clicks, "clicks-per-day", 20000, "events: clicks per day (the issue's case: 300000 for 2.1M clicks over 7 days)")
	flag.Float64Var(&o.differPct, "differ-pct", 0, "percent of links that lost clicks in the store on -differ-days days (0: a clean window)")
	flag.IntVar(&o.differDays, "differ-days", 2, "days on which links lost clicks, when -differ-pct > 0")
	flag.BoolVar(&o.consecutive, "consecutive", false, "the differing days are consecutive, ending the day before the window's last (a backfill after an outage); default: spread over the window")
	flag.BoolVar(&o.eachDay, "each-day", false, "other links lose clicks on each differing day (the drill-down planner's worst case); default: the same links every day")
	flag.IntVar(&o.rate, "rate", 100000, "ELIDO_RATE_LIMIT of the runs")
	flag.IntVar(&o.maxRequests, "max-requests", 0, "RECON_DRILLDOWN_MAX_REQUESTS of the runs (0: its default); give both binaries room to drill every day to compare their reports")
	flag.BoolVar(&o.keep, "keep", false, "keep the schema seeded, for -schema in later cases (daily preset: a later case undoes this one's losses)")
	flag.IntVar(&o.pairs, "pairs", 3, "runs of the binary and of the floor, alternately")
	flag.StringVar(&o.dsn, "dsn", envOr("PGTEST_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server (a schema of its own is created and dropped)")
	flag.StringVar(&o.binary, "binary", "", "clickrecon binary to measure (default: go build ./cmd/clickrecon)")
	flag.StringVar(&o.oldBinary, "old-binary", "", "a second binary to measure in the same session, alternately (before/after)")
	flag.StringVar(&o.timeBin, "time", "/usr/bin/time", "GNU time, for the peak RSS (apt-get install time)")
	flag.StringVar(&o.schema, "schema", "", "reuse this schema, seeded by an earlier run with the same -preset, -days, -links and -clicks-per-day, and keep it (default: seed a new one and drop it)")
	flag.StringVar(&o.psql, "psql", "", "also measure the floor as the issue first did, in one psql session: this psql binary (e.g. /usr/lib/postgresql/15/bin/psql), its start and connection included")
	flag.StringVar(&o.mysql, "mysql", "", "measure a MySQL or MariaDB store instead: this mysql:// server (a database of its own is created and dropped), e.g. mysql://root@127.0.0.1:3306/test")
	flag.StringVar(&o.client, "mysql-client", "mysql", "with -mysql, also measure the floor in one session of this mysql client, its start and connection included")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "recon-bench:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, o options) error {
	switch {
	case o.preset != "events" && o.preset != "daily":
		return fmt.Errorf("-preset must be events or daily, got %q", o.preset)
	case o.days < 1 || o.links < 1 || o.pairs < 1 || o.clicks < 1:
		return errors.New("-days, -links, -pairs and -clicks-per-day must be at least 1")
	}
	if _, err := os.Stat(o.timeBin); err != nil {
		return fmt.Errorf("%s: %w (apt-get install time)", o.timeBin, err)
	}
	tmp, err := os.MkdirTemp("", "recon-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.binary == "" {
		o.binary = filepath.Join(tmp, "clickrecon")
		build := exec.CommandContext(ctx, "go", "build", "-o", o.binary, "./cmd/clickrecon")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/clickrecon (run from the repository root): %w", err)
		}
	}

	for _, bin := range []string{o.binary, o.oldBinary} {
		if bin == "" {
			continue
		}
		if err := dropPageCache(bin); err != nil {
			return fmt.Errorf("drop %s from the page cache: %w", bin, err)
		}
	}

	w := newWorld(o)
	var dsn, schema string
	var rows int64
	if o.mysql != "" {
		cleanup, err := w.setupMySQL(ctx, &dsn, &schema, &rows)
		defer cleanup()
		if err != nil {
			return err
		}
	} else {
		cleanup, err := w.setupPostgres(ctx, &dsn, &schema, &rows)
		defer cleanup()
		if err != nil {
			return err
		}
	}

	srv := elidotest.NewServer(workspace, apiKey, w.apiClicks())
	defer srv.Close()
	srv.SetDailyTotals("UTC", w.apiTotals())
	if o.preset == "daily" {
		if err := srv.SetModel(w.apiModel()); err != nil {
			return err
		}
	}

	env := append(os.Environ(),
		"ELIDO_API_KEY="+apiKey, "ELIDO_WORKSPACE_ID="+workspace, "ELIDO_API_BASE="+srv.URL(),
		"ELIDO_RATE_LIMIT="+strconv.Itoa(o.rate), "STORE_DSN="+dsn, "STORE_PRESET="+o.preset, "RECON_TZ=UTC",
		"RECON_MAX_DAYS=400", "RECON_REPORT_DIR="+filepath.Join(tmp, "reports"), "LOG_LEVEL=info", "LOG_FORMAT=json",
		"RECON_FORMAT=json")
	if o.maxRequests > 0 {
		env = append(env, "RECON_DRILLDOWN_MAX_REQUESTS="+strconv.Itoa(o.maxRequests))
	}
	args := []string{"run", "--from", w.first.Format(time.DateOnly), "--to", lastDay}

	type runner struct {
		name  string
		times []time.Duration
		rss   []int64
		cpu   []time.Duration
		store []time.Duration
		reqs  map[string]int
		run   func() (measured, map[string]int, error)
	}
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
			drilled, err := drilledParts(filepath.Join(tmp, "reports"))
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
	floorRunner := func(name string, floor func() (time.Duration, error)) *runner {
		return &runner{name: name, run: func() (measured, map[string]int, error) {
			took, err := floor()
			return measured{took: took}, nil, err
		}}
	}
	runners := []*runner{binaryRunner("clickrecon", o.binary)}
	if o.oldBinary != "" {
		runners = append(runners, binaryRunner("old clickrecon", o.oldBinary))
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
	for i := 0; i < o.pairs; i++ {
		for _, r := range slices.Concat(runners, floors) {
			m, reqs, err := r.run()
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", r.name, i+1, err)
			}
			r.times, r.rss, r.reqs = append(r.times, m.took), append(r.rss, m.rss), reqs
			r.cpu, r.store = append(r.cpu, m.cpu), append(r.store, m.store)
			fmt.Printf("  %-15s run %d: %8.3fs\n", r.name, i+1, m.took.Seconds())
		}
	}
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
	return nil
}

// setupPostgres creates (or reuses) the schema on -dsn and seeds it; it
// sets the store's DSN, the schema and the rows written, and returns what
// drops the schema, to run whatever happens.
func (w *world) setupPostgres(ctx context.Context, dsnOut, schemaOut *string, rowsOut *int64) (func(), error) {
	o := w.o
	cleanups := []func(){}
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	admin, err := sql.Open("postgres", o.dsn)
	if err != nil {
		return cleanup, err
	}
	cleanups = append(cleanups, func() { admin.Close() })
	schema, reuse := o.schema, o.schema != ""
	if !reuse {
		schema = fmt.Sprintf("recon_bench_%d", os.Getpid())
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+pq.QuoteIdentifier(schema)); err != nil {
			return cleanup, fmt.Errorf("create schema %s: %w", schema, err)
		}
		cleanups = append(cleanups, func() {
			if o.keep && ctx.Err() == nil {
				fmt.Printf("kept schema %s: pass -schema %s to reuse it, and drop it when done\n", schema, schema)
				return
			}
			// A fresh context: Ctrl-C must not leave the schema behind.
			if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
				fmt.Fprintln(os.Stderr, "recon-bench: drop schema:", err)
			}
		})
	}
	dsn, err := withSearchPath(o.dsn, schema)
	if err != nil {
		return cleanup, err
	}
	started := time.Now()
	rows, err := w.seed(ctx, dsn, reuse)
	if err != nil {
		return cleanup, err
	}
	fmt.Printf("seeded %s: %d rows, %d days, %d links in %s (schema %s)\n", o.preset, rows, o.days, o.links,
		time.Since(started).Round(time.Second), schema)
	*dsnOut, *schemaOut, *rowsOut = dsn, schema, rows
	return cleanup, nil
}

// setupMySQL is setupPostgres for -mysql: a database of its own.
func (w *world) setupMySQL(ctx context.Context, dsnOut, schemaOut *string, rowsOut *int64) (func(), error) {
	o := w.o
	admin, err := mysqlOpen(o.mysql, "", false)
	if err != nil {
		return func() {}, err
	}
	database, reuse := o.schema, o.schema != ""
	cleanup := func() { admin.Close() }
	if !reuse {
		database = fmt.Sprintf("recon_bench_%d", os.Getpid())
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+database); err != nil {
			return cleanup, fmt.Errorf("create database %s: %w", database, err)
		}
		cleanup = func() {
			if _, err := admin.ExecContext(context.Background(), "DROP DATABASE "+database); err != nil {
				fmt.Fprintln(os.Stderr, "recon-bench: drop database:", err)
			}
			admin.Close()
		}
	}
	dsn, err := mysqlDatabase(o.mysql, database)
	if err != nil {
		return cleanup, err
	}
	started := time.Now()
	rows, err := w.seedMySQL(ctx, o.mysql, database, reuse)
	if err != nil {
		return cleanup, err
	}
	fmt.Printf("seeded %s on MySQL: %d rows, %d days, %d links in %s (database %s)\n", o.preset, rows, o.days, o.links,
		time.Since(started).Round(time.Second), database)
	*dsnOut, *schemaOut, *rowsOut = dsn, database, rows
	return cleanup, nil
}

// drilledParts returns the days, links, countries and findings of the one
// report.json under dir, as JSON: what two drill-downs of the same night
// must agree on.
func drilledParts(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("want one report.json under %s, found %v (%v)", dir, files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]json.RawMessage{"days": rep["days"], "links": rep["links"], "countries": rep["countries"], "findings": rep["findings"]})
}

// measured is what one run cost: wall time, peak RSS in KiB, CPU (user
// and system) and the time its log says it spent reading the store.
type measured struct {
	took, cpu, store time.Duration
	rss              int64
}

// runBinary runs bin under GNU time and measures it. Exit 0 and 1 (gaps
// found) are both a completed run.
func runBinary(ctx context.Context, timeBin, bin string, args, env []string) (measured, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-v", bin}, args...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, nil, &stderr
	started := time.Now()
	err := cmd.Run()
	m := measured{took: time.Since(started)}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return m, fmt.Errorf("%s: %w\n%s", bin, err, stderr.String())
	}
	out := stderr.String()
	if dir := os.Getenv("RECON_BENCH_LOGS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, filepath.Base(bin)+".log"), stderr.Bytes(), 0o644)
	}
	rss := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(out)
	if rss == nil {
		return m, fmt.Errorf("no peak RSS in the output of %s:\n%s", timeBin, out)
	}
	m.rss, _ = strconv.ParseInt(rss[1], 10, 64)
	for _, re := range []string{`User time \(seconds\): ([0-9.]+)`, `System time \(seconds\): ([0-9.]+)`} {
		if f := regexp.MustCompile(re).FindStringSubmatch(out); f != nil {
			secs, _ := strconv.ParseFloat(f[1], 64)
			m.cpu += time.Duration(secs * float64(time.Second))
		}
	}
	// The store's reads, as the run logs them: the window's totals and
	// the drilled days' links.
	for _, f := range regexp.MustCompile(`"msg":"store (?:links )?read"[^\n]*"duration_ms":(\d+)`).FindAllStringSubmatch(out, -1) {
		ms, _ := strconv.ParseInt(f[1], 10, 64)
		m.store += time.Duration(ms) * time.Millisecond
	}
	return m, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func formatRequests(reqs map[string]int) string {
	keys := slices.Sorted(maps.Keys(reqs))
	var parts []string
	total := 0
	for _, k := range keys {
		if reqs[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, reqs[k]))
			total += reqs[k]
		}
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, " "))
}

// withSearchPath returns dsn with its connections' search_path set to
// schema, which lib/pq passes on as a run-time parameter.
func withSearchPath(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("-dsn: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// world is the workspace both sides describe: the same clicks, less those
// the store lost on the differing days.
type world struct {
	o     options
	first time.Time // the window's first day, UTC midnight
	lost  map[int]bool
	// shift is which links lost clicks on a differing day: those whose
	// number is shift[day] modulo every.
	shift map[int]int
}

func newWorld(o options) *world {
	last, _ := time.Parse(time.DateOnly, lastDay)
	w := &world{o: o, first: last.AddDate(0, 0, -(o.days - 1)), lost: map[int]bool{}, shift: map[int]int{}}
	if o.differPct > 0 {
		n := min(o.differDays, o.days)
		for i := 1; i <= n; i++ {
			d := i * o.days / (n + 1)
			if o.consecutive {
				d = max(o.days-1-n, 0) + i - 1
			}
			w.lost[d] = true
			if o.eachDay {
				w.shift[d] = (i - 1) % w.every()
			}
		}
	}
	return w
}

func (w *world) differing() int { return len(w.lost) }

// every is how far apart the links that lost clicks are: 1 in every.
func (w *world) every() int {
	if w.o.differPct <= 0 {
		return 0
	}
	return max(int(100/w.o.differPct), 1)
}

func linkID(n int) string { return fmt.Sprintf("lnk_%06d", n) }

// eventLink and eventTime place the i-th click of a day, as the seeding
// SQL does.
func (w *world) eventLink(d, i int) int { return (i*7919 + d) % w.o.links }
func (w *world) eventTime(d, i int) time.Time {
	return w.first.AddDate(0, 0, d).Add(time.Duration(int64(i)*86_400_000_000/int64(w.o.clicks)) * time.Microsecond)
}

// dailyClicks is link n's counter on any day.
func dailyClicks(n int) int64 { return int64(1 + n%5) }

var countries = []string{"PL", "DE", "US", "FR"}

// apiClicks are the clicks of the differing days of the events preset,
// which the drill-down reads per link, country and hour; the other days
// are served as totals, and the daily preset's differing days by a model
// (apiModel).
func (w *world) apiClicks() []elidotest.Click {
	var out []elidotest.Click
	for d := range w.lost {
		if w.o.preset == "events" {
			for i := 0; i < w.o.clicks; i++ {
				out = append(out, elidotest.Click{TS: w.eventTime(d, i), LinkID: linkID(w.eventLink(d, i)), CountryCode: countries[i%4]})
			}
		}
	}
	return out
}

// apiModel is Elido's count of each link on the differing days of the
// daily preset: 30 days of 100k links are 9 M clicks, never held.
func (w *world) apiModel() elidotest.Model {
	m := elidotest.Model{TZ: "UTC", Count: func(_ reconcile.Date, n int) int64 { return dailyClicks(n) }}
	for d := range w.lost {
		m.Days = append(m.Days, reconcile.DateOf(w.first.AddDate(0, 0, d)))
	}
	for n := 0; n < w.o.links; n++ {
		m.Links = append(m.Links, linkID(n))
	}
	return m
}

// apiTotals are Elido's counts of the days that do not differ.
func (w *world) apiTotals() map[string]int64 {
	var perDay int64
	switch w.o.preset {
	case "events":
		perDay = int64(w.o.clicks)
	case "daily":
		for n := 0; n < w.o.links; n++ {
			perDay += dailyClicks(n)
		}
	}
	out := map[string]int64{}
	for d := 0; d < w.o.days; d++ {
		if !w.lost[d] {
			out[w.first.AddDate(0, 0, d).Format(time.DateOnly)] = perDay
		}
	}
	return out
}

// seed creates the reference schema and fills it; the table is analyzed
// and vacuumed so the planner and the visibility map are as a night's
// would be. It returns the rows written.
//
// A reused schema is not filled again; only the lost clicks are taken
// out of it, which a clean run of the same schema then sees too.
func (w *world) seed(ctx context.Context, dsn string, reuse bool) (int64, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	schema, err := os.ReadFile(filepath.Join("sql", "store", "postgres", w.o.preset+".sql"))
	if err != nil {
		return 0, fmt.Errorf("read the reference schema (run from the repository root): %w", err)
	}
	if !reuse {
		if _, err := db.ExecContext(ctx, string(schema)); err != nil {
			return 0, fmt.Errorf("create the reference schema: %w", err)
		}
	}
	type stmt struct {
		text string
		args []any
	}
	var table string
	var stmts []stmt
	switch w.o.preset {
	case "events":
		table = "clicks"
		// The same placement as eventLink, eventTime and countries.
		stmts = append(stmts, stmt{`INSERT INTO clicks (ts, link_id, country_code)
SELECT $1::timestamptz + make_interval(days => d) + make_interval(secs => (i::bigint * 86400000000 / $3) / 1000000.0),
       'lnk_' || lpad(((i::bigint * 7919 + d) % $4)::text, 6, '0'),
       (ARRAY['PL','DE','US','FR'])[1 + i % 4]
FROM generate_series(0, $2 - 1) d, generate_series(0, $3 - 1) i`, []any{w.first, w.o.days, w.o.clicks, w.o.links}})
	case "daily":
		table = "click_counts"
		stmts = append(stmts, stmt{`INSERT INTO click_counts (day, link_id, clicks)
SELECT $1::date + d, 'lnk_' || lpad(n::text, 6, '0'), 1 + n % 5
FROM generate_series(0, $2 - 1) d, generate_series(0, $3 - 1) n`, []any{w.first.Format(time.DateOnly), w.o.days, w.o.links}})
	}
	if reuse {
		stmts = nil
		if w.o.preset == "daily" {
			// Undo an earlier case's losses: every counter back to its seed.
			stmts = append(stmts, stmt{`UPDATE click_counts SET clicks = 1 + substr(link_id, 5)::int % 5 WHERE clicks <> 1 + substr(link_id, 5)::int % 5`, nil})
		}
	}
	every := w.every()
	for _, d := range slices.Sorted(maps.Keys(w.lost)) {
		day := w.first.AddDate(0, 0, d)
		switch w.o.preset {
		case "events": // the lost links lose every click of the day
			stmts = append(stmts, stmt{`DELETE FROM clicks WHERE ts >= $1 AND ts < $2 AND substr(link_id, 5)::int % $3 = $4`,
				[]any{day, day.AddDate(0, 0, 1), every, w.shift[d]}})
		case "daily": // the lost links lose one click of the day
			stmts = append(stmts, stmt{`UPDATE click_counts SET clicks = clicks - 1 WHERE day = $1 AND substr(link_id, 5)::int % $2 = $3`,
				[]any{day.Format(time.DateOnly), every, w.shift[d]}})
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s.text, s.args...); err != nil {
			return 0, fmt.Errorf("seed %s: %w", table, err)
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
		return 0, fmt.Errorf("vacuum %s: %w", table, err)
	}
	var rows int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows)
	return rows, err
}

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
