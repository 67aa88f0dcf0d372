// Command fleet-bench measures a fleet's night as the Kubernetes Indexed
// Job of the fleet component runs it, against a run of one workspace
// alone: whether a workspace costs more in a fleet, and whether the
// shared history and report folder hold up under the fleet's parallel
// writes.
//
// It builds ./cmd/clickrecon (or takes -binary) and drops it from the page
// cache, then starts one fake Elido for -workspaces workspaces (each its
// own id, API key and fake of sources/elidotest behind one address, a
// rate limit per key of -key-limit requests a calendar minute answering
// 429 beyond it) with a week of clicks each, every -gap-every-th workspace's
// store having lost one hour of them. On the PostgreSQL server of -dsn
// (PGTEST_DSN by default) it creates a schema per workspace with the
// reference events table and the clicks its receiver kept, and one for
// the shared history (clickrecon migrate). It writes each workspace's key
// and store DSN to files, a fleet file naming them with one of four
// zones, and runs `clickrecon run --workspace-index I` for every I, at
// most -parallel at once, each under /usr/bin/time -v, in the nightly
// default window (the last three complete days in the workspace's zone).
// The baseline is the same binary run alone, without RECON_FLEET_FILE,
// for one workspace with a gap and one without, -baseline times each,
// half before the fleet and half after.
//
// It then checks every workspace's report (one, under its own folder of
// the shared RECON_REPORT_DIR, its days' counts and statuses those of the
// fake's and the store's clicks), its exit code (1 where its store has a
// gap, RECON_FAIL_ON=warn; else 0), that the fake answered no 429 and
// that the history holds one run per workspace; and prints the fleet's
// per-workspace wall time, CPU and peak RSS against the baseline's.
// Every schema is dropped at the end, also on Ctrl-C.
//
// Run it from the repository root; see BENCHMARKS.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/bench/internal/benchkit"
)

type options struct {
	workspaces int
	parallel   int
	baseline   int
	gapEvery   int
	perHour    int
	keyLimit   int
	rate       int
	dsn        string
	binary     string
	timeBin    string
	logs       string
}

func main() {
	var o options
	flag.IntVar(&o.workspaces, "workspaces", 200, "workspaces in the fleet")
	flag.IntVar(&o.parallel, "parallel", 10, "runs at once (the Indexed Job's parallelism)")
	flag.IntVar(&o.baseline, "baseline", 5, "runs alone (no fleet file) of the baseline's workspaces, each: half before the fleet, half after")
	flag.IntVar(&o.gapEvery, "gap-every", 5, "every n-th workspace's store lost an hour of clicks (0: none)")
	flag.IntVar(&o.perHour, "clicks-per-hour", 20, "clicks an hour, on average, in each workspace")
	flag.IntVar(&o.keyLimit, "key-limit", 60, "requests a minute the fake Elido allows each API key (the smallest plan's)")
	flag.IntVar(&o.rate, "rate", 60, "ELIDO_RATE_LIMIT of the runs")
	flag.StringVar(&o.dsn, "dsn", benchkit.EnvOr("PGTEST_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server for the stores and the history (schemas of their own are created and dropped)")
	flag.StringVar(&o.binary, "binary", "", "clickrecon binary to measure (default: go build ./cmd/clickrecon)")
	flag.StringVar(&o.timeBin, "time", "/usr/bin/time", "GNU time, for the peak RSS (apt-get install time)")
	flag.StringVar(&o.logs, "logs", "", "keep each run's log and GNU time's lines in this folder (NAME.log in the fleet, NAME-alone-N.log alone)")
	flag.Parse()
	benchkit.Main("fleet-bench", func(ctx context.Context) error { return run(ctx, o) })
}

// run measures the fleet's night against its baseline: the clickrecon
// binary made ready, the world set up (setUp), the baseline's first half,
// the fleet run as the Indexed Job runs it (night), the baseline's second
// half, then the figures and the checks.
func run(ctx context.Context, o options) error {
	if err := o.check(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fleet-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := o.ready(ctx, tmp); err != nil {
		return err
	}
	b, cleanup, err := setUp(ctx, o, tmp)
	defer cleanup()
	if err != nil {
		return err
	}
	if err := b.baseline((o.baseline + 1) / 2); err != nil {
		return err
	}
	n, err := b.night()
	if err != nil {
		return err
	}
	if err := b.baseline(o.baseline / 2); err != nil {
		return err
	}
	return b.report(n)
}

// check says which flag is out of its range.
func (o options) check() error {
	switch {
	case o.workspaces < 2 || o.parallel < 1 || o.baseline < 1 || o.perHour < 1 || o.keyLimit < 1 || o.rate < 1:
		return errors.New("-workspaces must be at least 2; -parallel, -baseline, -clicks-per-hour, -key-limit and -rate at least 1")
	case o.gapEvery < 0 || o.gapEvery == 1:
		return errors.New("-gap-every must be 0 (no gap) or at least 2 (the baseline needs a workspace without)")
	}
	if _, err := os.Stat(o.timeBin); err != nil {
		return fmt.Errorf("%s: %w (apt-get install time)", o.timeBin, err)
	}
	return nil
}

// ready builds the binary into tmp unless -binary names one, and drops
// it from the page cache.
func (o *options) ready(ctx context.Context, tmp string) error {
	if o.binary == "" {
		var err error
		if o.binary, err = benchkit.Build(ctx, tmp); err != nil {
			return err
		}
	}
	if err := benchkit.DropPageCache(o.binary); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", o.binary, err)
	}
	return nil
}

// bench is one measurement: its world, the fake Elido, the shared
// environment and the baseline's runs so far.
type bench struct {
	ctx        context.Context
	o          options
	tmp        string
	ws         []*workspace
	elido      *fake
	historyDSN string
	secrets    string
	reports    string
	fleetFile  string
	shared     []string
	// base are the workspaces measured alone: one with a gap (the
	// first), one without (the second); baseRuns their runs.
	base     []*workspace
	baseRuns [][]measured
}

// setUp makes the world: the workspaces, the fake Elido, the stores and
// the history (migrated), the fleet file and its secrets.
func setUp(ctx context.Context, o options, tmp string) (*bench, func(), error) {
	started := time.Now()
	b := &bench{ctx: ctx, o: o, tmp: tmp, ws: newWorkspaces(o.workspaces, o.gapEvery, o.perHour, started),
		secrets: filepath.Join(tmp, "secrets"), reports: filepath.Join(tmp, "reports")}
	elido, err := startFake(b.ws, o.keyLimit)
	if err != nil {
		return nil, func() {}, err
	}
	b.elido = elido
	historyDSN, cleanStores, err := stores(ctx, o.dsn, fmt.Sprintf("fleet_bench_%d_", os.Getpid()), b.ws)
	cleanup := func() { cleanStores(); elido.close() }
	if err != nil {
		return nil, cleanup, err
	}
	b.historyDSN = historyDSN
	clicks := 0
	for _, w := range b.ws {
		clicks += len(w.elido)
	}
	fmt.Printf("world: %d workspaces, %d clicks (a week each, about %d an hour), %d with a lost hour; stores seeded in %s\n",
		len(b.ws), clicks, o.perHour, countGaps(b.ws), time.Since(started).Round(time.Second))
	if b.fleetFile, err = writeFleet(tmp, b.secrets, o.dsn, b.ws); err != nil {
		return nil, cleanup, err
	}
	b.shared = append(os.Environ(),
		"ELIDO_API_BASE="+elido.url, "ELIDO_RATE_LIMIT="+strconv.Itoa(o.rate),
		"HISTORY_DSN="+historyDSN, "RECON_FAIL_ON=warn", "LOG_LEVEL=info", "LOG_FORMAT=json", "RECON_FORMAT=json")
	if m, err := runBinary(ctx, o.timeBin, o.binary, []string{"migrate"}, b.shared); err != nil || m.exit != 0 {
		return nil, cleanup, fmt.Errorf("clickrecon migrate: %v (exit %d)\n%s", err, m.exit, m.stderr)
	}
	b.base = []*workspace{b.ws[0], b.ws[1]}
	b.baseRuns = make([][]measured, len(b.base))
	return b, cleanup, nil
}

// baseline runs each of the baseline's workspaces alone, times times, as
// a deployment of one workspace would run it.
func (b *bench) baseline(times int) error {
	for range times {
		for i, w := range b.base {
			env := append(w.soleEnv(b.shared, b.secrets), "RECON_REPORT_DIR="+filepath.Join(b.tmp, "alone", w.name))
			m, err := runBinary(b.ctx, b.o.timeBin, b.o.binary, []string{"run"}, env)
			if err != nil {
				return err
			}
			if err := b.o.keepLog(fmt.Sprintf("%s-alone-%d", w.name, len(b.baseRuns[i])+1), m); err != nil {
				return err
			}
			if m.exit != w.wantExit() {
				return fmt.Errorf("%s alone exited %d, want %d:\n%s", w.name, m.exit, w.wantExit(), tail(m.stderr))
			}
			b.baseRuns[i] = append(b.baseRuns[i], m)
		}
	}
	return nil
}

// nightOf is what the fleet's night gave: its runs and time, the fake's
// counts of its requests, and what the history recorded of it.
type nightOf struct {
	runs                                  []measured
	took                                  time.Duration
	requests, limited, maxPerMinute       int
	limitedBefore                         int
	recorded, recordedWs, recordedMissing int64
}

// night runs the fleet as the Indexed Job runs it.
func (b *bench) night() (nightOf, error) {
	var n nightOf
	before, err := lastRun(b.ctx, b.historyDSN)
	if err != nil {
		return n, err
	}
	reqBefore, limitedBefore, _ := b.elido.counts()
	fleetEnv := slices.Concat(b.shared, []string{"RECON_FLEET_FILE=" + b.fleetFile, "RECON_FLEET_SIZE=" + strconv.Itoa(len(b.ws)), "RECON_REPORT_DIR=" + b.reports})
	if n.runs, n.took, err = runFleet(b.ctx, b.o, b.ws, fleetEnv); err != nil {
		return n, err
	}
	reqAfter, limitedAfter, maxPerMinute := b.elido.counts()
	n.requests, n.limited, n.maxPerMinute, n.limitedBefore = reqAfter-reqBefore, limitedAfter-limitedBefore, maxPerMinute, limitedBefore
	n.recorded, n.recordedWs, n.recordedMissing, err = historyRuns(b.ctx, b.historyDSN, before)
	return n, err
}

// report prints the figures and checks the night: every report, exit
// code and history row as a run alone gives, and no 429.
func (b *bench) report(n nightOf) error {
	ws := b.ws
	problems := checkFleet(ws, n.runs, b.reports)
	if n.limited > 0 {
		problems = append(problems, fmt.Sprintf("the fake answered %d requests of the fleet with 429", n.limited))
	}
	if n.recorded != int64(len(ws)) || n.recordedWs != int64(len(ws)) || n.recordedMissing != int64(countGaps(ws)) {
		problems = append(problems, fmt.Sprintf("the history recorded %d runs of %d workspaces with %d days missing, want %d, %d and %d",
			n.recorded, n.recordedWs, n.recordedMissing, len(ws), len(ws), countGaps(ws)))
	}
	printTable(b.o, ws, b.base, b.baseRuns, n.runs, n.took)
	fmt.Printf("fake Elido: %d requests from the fleet (%.1f a workspace), 429s answered: %d (all session: %d), most requests of one key in a minute: %d of %d\n",
		n.requests, float64(n.requests)/float64(len(ws)), n.limited, n.limitedBefore+n.limited, n.maxPerMinute, b.o.keyLimit)
	fmt.Printf("history: %d runs recorded by the fleet, of %d workspaces, %d days missing among them\n", n.recorded, n.recordedWs, n.recordedMissing)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Println("FAIL:", p)
		}
		return fmt.Errorf("%d checks failed", len(problems))
	}
	fmt.Printf("checks: every report, exit code and history row as a run alone gives; no 429\n")
	return nil
}

func countGaps(ws []*workspace) (n int) {
	for _, w := range ws {
		if w.gap {
			n++
		}
	}
	return n
}

// wantExit is what a run of w alone exits with: 1 for its store's gap
// (RECON_FAIL_ON=warn), else 0.
func (w *workspace) wantExit() int {
	if w.gap {
		return 1
	}
	return 0
}

// writeFleet writes each workspace's key and store DSN to files under
// secrets and the fleet file naming them, and returns the fleet file's
// path.
func writeFleet(dir, secrets, dsn string, ws []*workspace) (string, error) {
	if err := os.MkdirAll(secrets, 0o700); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# fleet-bench: one entry per workspace, its secrets in files\n")
	for _, w := range ws {
		storeDSN, err := benchkit.WithSearchPath(dsn, w.schema)
		if err != nil {
			return "", err
		}
		for name, value := range map[string]string{w.name + "-elido-api-key": w.key, w.name + "-store-dsn": storeDSN} {
			if err := os.WriteFile(filepath.Join(secrets, name), []byte(value+"\n"), 0o600); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(&b, "\n[%s]\nELIDO_WORKSPACE_ID = %s\nELIDO_API_KEY_FILE = %s\nSTORE_DSN_FILE = %s\nRECON_TZ = %s\n",
			w.name, w.id, filepath.Join(secrets, w.name+"-elido-api-key"), filepath.Join(secrets, w.name+"-store-dsn"), w.zone)
	}
	path := filepath.Join(dir, "fleet.ini")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// soleEnv is the environment of w run alone: the shared variables and
// its entry's, as variables.
func (w *workspace) soleEnv(shared []string, secrets string) []string {
	return slices.Concat(shared, []string{"ELIDO_WORKSPACE_ID=" + w.id, "ELIDO_API_KEY_FILE=" + filepath.Join(secrets, w.name+"-elido-api-key"),
		"STORE_DSN_FILE=" + filepath.Join(secrets, w.name+"-store-dsn"), "RECON_TZ=" + w.zone})
}

// runFleet runs every index of the fleet, at most o.parallel at once,
// and returns each run's measure (by index) and the whole's wall time.
func runFleet(ctx context.Context, o options, ws []*workspace, env []string) ([]measured, time.Duration, error) {
	out := make([]measured, len(ws))
	errs := make([]error, len(ws))
	next := make(chan int)
	var wg sync.WaitGroup
	started := time.Now()
	for range o.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = runBinary(ctx, o.timeBin, o.binary, []string{"run", "--workspace-index", strconv.Itoa(i)}, env)
				if errs[i] == nil {
					errs[i] = o.keepLog(ws[i].name, out[i])
				}
			}
		}()
	}
	for i := range ws {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, time.Since(started), errors.Join(errs...)
}

// keepLog writes a run's stderr to -logs, when given.
func (o options) keepLog(name string, m measured) error {
	if o.logs == "" {
		return nil
	}
	if err := os.MkdirAll(o.logs, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.logs, name+".log"), m.stderr, 0o644)
}

// checkFleet compares each workspace's run with what a run of it alone
// gives: its exit code, and its one report under its own folder, whose
// days hold the fake's and the store's counts and the status they make.
func checkFleet(ws []*workspace, runs []measured, reports string) []string {
	var problems []string
	bad := func(w *workspace, format string, args ...any) {
		problems = append(problems, w.name+": "+fmt.Sprintf(format, args...))
	}
	dirs, _ := filepath.Glob(filepath.Join(reports, "*"))
	if len(dirs) != len(ws) {
		problems = append(problems, fmt.Sprintf("%d folders in the report folder, want one per workspace (%d)", len(dirs), len(ws)))
	}
	for i, w := range ws {
		if runs[i].exit != w.wantExit() {
			bad(w, "exit %d, want %d:\n%s", runs[i].exit, w.wantExit(), tail(runs[i].stderr))
			continue
		}
		files, _ := filepath.Glob(filepath.Join(reports, w.name, "*", "report.json"))
		if len(files) != 1 {
			bad(w, "want one report.json under its folder, found %d", len(files))
			continue
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			bad(w, "%v", err)
			continue
		}
		var rep struct {
			WorkspaceID string `json:"workspace_id"`
			Window      struct {
				TZ string `json:"tz"`
			} `json:"window"`
			Days []struct {
				Date   string `json:"date"`
				API    *int64 `json:"api"`
				Local  *int64 `json:"local"`
				Status string `json:"status"`
			} `json:"days"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			bad(w, "report.json: %v", err)
			continue
		}
		if rep.WorkspaceID != w.id || rep.Window.TZ != w.zone || len(rep.Days) != 3 {
			bad(w, "report of workspace %s in %s with %d days, want %s in %s with 3", rep.WorkspaceID, rep.Window.TZ, len(rep.Days), w.id, w.zone)
			continue
		}
		gaps := 0
		for _, d := range rep.Days {
			api, local, err := w.truth(d.Date)
			if err != nil {
				bad(w, "%v", err)
				break
			}
			want := "match"
			if local < api {
				want, gaps = "missing", gaps+1
			}
			if d.API == nil || d.Local == nil || *d.API != api || *d.Local != local || d.Status != want {
				bad(w, "%s: api %v local %v %s, want %d %d %s", d.Date, deref(d.API), deref(d.Local), d.Status, api, local, want)
			}
		}
		if (gaps > 0) != w.gap {
			bad(w, "%d days missing, the store lost an hour: %v", gaps, w.gap)
		}
	}
	return problems
}

func deref(p *int64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// tail is the last lines of a run's stderr, for a failure.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(len(lines)-30, 0):], "\n")
}

// printTable prints, for the workspaces with a gap and those without,
// the fleet's per-workspace wall time, CPU and peak RSS against the
// same kind's runs alone, then the fleet's whole.
func printTable(o options, ws, base []*workspace, baseRuns [][]measured, fleet []measured, took time.Duration) {
	fmt.Printf("\ncase: workspaces=%d parallel=%d baseline=%d gap-every=%d clicks-per-hour=%d key-limit=%d rate=%d\n",
		len(ws), o.parallel, o.baseline, o.gapEvery, o.perHour, o.keyLimit, o.rate)
	fmt.Println("| workspaces | runs | wall p50 | wall p95 | wall p50 ÷ alone | CPU p50 | CPU p50 ÷ alone | peak RSS p50 / max | RSS p50 ÷ alone |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for i, b := range base {
		var kind []measured
		for j, w := range ws {
			if w.gap == b.gap {
				kind = append(kind, fleet[j])
			}
		}
		what := "without a gap"
		if b.gap {
			what = "with a gap"
		}
		alone := baseRuns[i]
		fmt.Printf("| %s, alone (%s) | %d | %s | %s | | %s | | %.1f / %.1f MiB | |\n", what, b.name, len(alone),
			secs(quantile(walls(alone), 0.5)), secs(quantile(walls(alone), 0.95)), secs(quantile(cpus(alone), 0.5)),
			mib(quantile(rsss(alone), 0.5)), mib(quantile(rsss(alone), 1)))
		fmt.Printf("| %s, in the fleet | %d | %s | %s | **%.2f×** | %s | **%.2f×** | %.1f / %.1f MiB | **%.2f×** |\n", what, len(kind),
			secs(quantile(walls(kind), 0.5)), secs(quantile(walls(kind), 0.95)),
			ratio(quantile(walls(kind), 0.5), quantile(walls(alone), 0.5)),
			secs(quantile(cpus(kind), 0.5)), ratio(quantile(cpus(kind), 0.5), quantile(cpus(alone), 0.5)),
			mib(quantile(rsss(kind), 0.5)), mib(quantile(rsss(kind), 1)),
			float64(quantile(rsss(kind), 0.5))/float64(quantile(rsss(alone), 0.5)))
	}
	failed := 0
	for i, m := range fleet {
		if m.exit != ws[i].wantExit() {
			failed++
		}
	}
	var sum time.Duration
	for _, m := range fleet {
		sum += m.took
	}
	fmt.Printf("\nfleet: %d workspaces at %d at once in %s (the runs' wall times add up to %s: %.1f at once on average); %d exit codes not a run alone's\n",
		len(ws), o.parallel, took.Round(100*time.Millisecond), sum.Round(time.Second), sum.Seconds()/took.Seconds(), failed)
}

func walls(ms []measured) (out []time.Duration) {
	for _, m := range ms {
		out = append(out, m.took)
	}
	return out
}

func cpus(ms []measured) (out []time.Duration) {
	for _, m := range ms {
		out = append(out, m.cpu)
	}
	return out
}

func rsss(ms []measured) (out []int64) {
	for _, m := range ms {
		out = append(out, m.rss)
	}
	return out
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
func mib(kib int64) float64       { return float64(kib) / 1024 }
func ratio(a, b time.Duration) float64 {
	return a.Seconds() / b.Seconds()
}
