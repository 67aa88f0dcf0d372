package sim

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

var (
	flagSeed   = flag.Uint64("seed", 0, "run this seed only (0: the CI's seeds)")
	flagNights = flag.Int("nights", 0, "nights a simulation runs (0: the mode's)")
	flagSlack  = flag.String("slack", "", "webhook or bot (\"\": both)")
	flagStore  = flag.String("store", "", "sqlite, postgres or mariadb (\"\": sqlite and postgres; the long mode adds mariadb)")
	flagLong   = flag.Bool("long", false, "the long mode: SIM_NIGHTS nights in all (default 100000), 250 a simulation, over as many seeds")
	flagVerb   = flag.Bool("simlog", false, "log each night's fault and exit code")
)

const (
	apiKey   = "sim-key-not-a-secret"
	botToken = "xoxb-sim-token"
	zone     = "Europe/Warsaw"
)

// cwd is the folder the simulation runs in: nothing may be written there.
var cwd string

func TestMain(m *testing.M) {
	flag.Parse()
	root = findRoot()
	dir, err := os.MkdirTemp("", "clickrecon-sim-cwd-")
	if err != nil {
		panic(err)
	}
	cwd = dir
	if err := os.Chdir(dir); err != nil {
		panic(err)
	}
	// The AWS SDK takes its settings from these alone (s3test.Isolate, for
	// the whole process).
	os.Setenv("AWS_ACCESS_KEY_ID", "test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	os.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "..", "no-aws-config"))
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "..", "no-aws-credentials"))
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("AWS_PROFILE")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// clock is the virtual clock: sleeping moves it on at once.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return nil
}

// config is one simulation: a seed, a Slack transport, a database.
type simConfig struct {
	seed   uint64
	nights int
	slack  string // webhook, bot
	db     string // sqlite, postgres
	// fleet is the workspace's name in a fleet (fleet_test.go); "" for a
	// workspace alone.
	fleet string
	// tz is the workspace's RECON_TZ; "": Europe/Warsaw.
	tz string
}

func (c simConfig) replay(night int) string {
	if c.fleet != "" {
		return fmt.Sprintf("go test ./sim -run '^TestFleetSimulation$' -count=1 -args -seed=%d -nights=%d -store=%s", c.seed, night, c.db)
	}
	return fmt.Sprintf("go test ./sim -run '^TestSimulation$' -count=1 -args -seed=%d -nights=%d -slack=%s -store=%s",
		c.seed, night, c.slack, c.db)
}

// stats are the figures of every simulation of the process.
var stats = struct {
	sync.Mutex
	nights, killed, faultNights int
	faults, events              map[string]int
	violations                  map[string]int
}{faults: map[string]int{}, events: map[string]int{}, violations: map[string]int{}}

// countEvent counts one night's event of the world, or one thing the
// checker allowed, in the run's figures.
func countEvent(name string) {
	stats.Lock()
	defer stats.Unlock()
	stats.events[name]++
}

func TestSimulation(t *testing.T) {
	t.Parallel() // beside TestSimulationSeedsThatFound
	// The CI mode: 10 seeds × 2 Slack transports × 2 databases × 25
	// nights = 1,000 nights.
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	nights := 25
	slacks := []string{"webhook", "bot"}
	if *flagSlack != "" {
		slacks = []string{*flagSlack}
	}
	dbs := []string{"sqlite", "postgres"}
	if *flagLong {
		dbs = append(dbs, "mariadb")
	}
	if *flagStore != "" {
		dbs = []string{*flagStore}
	}
	switch {
	case *flagLong:
		nights = 250
		seeds = nil
		total := 100_000
		if s := os.Getenv("SIM_NIGHTS"); s != "" {
			fmt.Sscan(s, &total)
		}
		// As many seeds as make total, each run in every transport and
		// database: the last seed's simulations may go past it.
		per := nights * len(slacks) * len(dbs)
		for i := range max(1, (total+per-1)/per) {
			seeds = append(seeds, uint64(1000+i))
		}
	case testing.Short() || raceEnabled:
		nights = 4 // -race and -short: a taste; .ci/run runs the full mode without -race
		seeds = seeds[:1]
	}
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	}
	if *flagNights > 0 {
		nights = *flagNights
	}
	t.Cleanup(func() { reportStats(t) })
	for _, seed := range seeds {
		for _, sl := range slacks {
			for _, db := range dbs {
				c := simConfig{seed: seed, nights: nights, slack: sl, db: db}
				t.Run(fmt.Sprintf("seed=%d/%s/%s", seed, sl, db), func(t *testing.T) {
					t.Parallel() // each has its own fakes, databases and workspace
					runSim(t, c)
				})
			}
		}
	}
}

func reportStats(t *testing.T) {
	stats.Lock()
	defer stats.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "simulation: %d nights, %d with a fault that struck (%d killed), violations %d\n",
		stats.nights, stats.faultNights, stats.killed, sum(stats.violations))
	for _, m := range []struct {
		name string
		m    map[string]int
	}{{"faults", stats.faults}, {"world", stats.events}, {"violations", stats.violations}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s: %d\n", m.name, k, m.m[k])
		}
	}
	t.Log(b.String())
	if p := os.Getenv("SIM_STATS"); p != "" {
		os.WriteFile(p, []byte(b.String()), 0o644)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// sim is one simulation's machinery.
type sim struct {
	t      *testing.T
	c      simConfig
	rng    *rand.Rand
	clock  *clock
	gate   *gate
	world  *world
	loc    *time.Location
	elido  *elidotest.Server
	slack  *slacktest.Server
	front  string // the gate in front of Slack
	s3dir  string // RECON_REPORT_DIR
	s3objs func() []string
	obs    observer
	env    map[string]string
	tell   *channel // what Slack was told, as the invariants read it
	// order is each post's place in the channel, by its ts, for the
	// edits of it
	order  map[string]int
	seen   int // posts already read
	seenUp int // edits already read
	// seenUnsent counts the gate's unsent posts already read
	seenUnsent int
	runs       map[string]int
	snaps      map[int]snapshot
	rows       []string // the history's tables, as migrate made them
	// shared is what the workspaces of a fleet share (fleet_test.go); nil
	// for a workspace alone.
	shared *fleetShared
}

func runSim(t *testing.T, c simConfig) {
	s := setup(t, c, nil)
	for n := 1; n <= c.nights; n++ {
		s.check(s.play(n))
		if t.Failed() {
			t.Fatalf("seed %d failed at night %d of %d; replay it with:\n  %s", c.seed, n, c.nights, c.replay(n))
		}
	}
	s.checkNights()
}

// checkNights checks the trend of every night the simulation ran: the
// first night's window to the last's.
func (s *sim) checkNights() {
	c := s.c
	first := reconcile.Date{Year: 2027, Month: 3, Day: 1}
	s.checkTrend(c.nights, first.AddDays(-5), first.AddDays(c.nights-2))
	if s.t.Failed() {
		s.t.Fatalf("seed %d: the trend of its %d nights differs from their reports; replay it with:\n  %s", c.seed, c.nights, c.replay(c.nights))
	}
}

// setup makes simulation c: alone (sh nil), or as a workspace of the fleet
// whose Slack and history are sh's.
func setup(t *testing.T, c simConfig, sh *fleetShared) *sim {
	tz := zone
	if c.tz != "" {
		tz = c.tz
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	mode := map[string]uint64{"webhook": 1, "bot": 2}[c.slack]<<8 | map[string]uint64{"sqlite": 1, "postgres": 2, "mariadb": 3}[c.db]
	for _, b := range []byte(c.fleet) { // each workspace of a fleet a stream of its own
		mode = mode*31 + uint64(b)
	}
	rng := rand.New(rand.NewPCG(c.seed, mode))
	s := &sim{t: t, c: c, rng: rng, clock: &clock{}, gate: &gate{}, loc: loc,
		world: newWorld(rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), loc),
		runs:  map[string]int{}, snaps: map[int]snapshot{}, tell: newChannel(), order: map[string]int{}, shared: sh}
	s.world.spell = rand.New(rand.NewPCG(c.seed, mode|0x5e11<<16))
	// The first night: 2027-03-01, the nights after it one a day, over
	// both changes of summer time.
	s.clock.Set(time.Date(2027, 3, 1, 3, 0, 0, 0, loc))

	// The run lock is per workspace, and on PostgreSQL it is the server's:
	// a workspace of its own keeps simulations run at once apart.
	workspace := fmt.Sprintf("ws_sim_%d_%s_%s_%d", c.seed, c.slack, c.db, os.Getpid())
	if c.fleet != "" {
		workspace = fmt.Sprintf("ws_fleet_%d_%s_%s_%d", c.seed, c.fleet, c.db, os.Getpid())
	}
	key := apiKey
	if c.fleet != "" {
		key = apiKey + "-" + c.fleet // each workspace of a fleet its own key
	}
	s.elido = elidotest.NewServer(workspace, key, nil)
	s.elido.SetNow(s.clock.Now)
	t.Cleanup(s.elido.Close)

	if sh != nil {
		s.slack = sh.slack // one channel for the fleet
	} else {
		var opts []slacktest.Option
		opts = append(opts, slacktest.WithClock(s.clock.Now))
		if c.slack == "bot" {
			opts = append(opts, slacktest.WithToken(botToken))
		}
		s.slack = slacktest.New(t, opts...)
	}
	fs := s.gate.front("slack", s.slack.Config.Handler, func(r *http.Request) bool {
		return strings.HasPrefix(r.URL.Path, "/services/") || r.URL.Path == "/api/chat.postMessage" || r.URL.Path == "/api/chat.update"
	})
	t.Cleanup(fs.Close)
	s.front = fs.URL

	backend := s3mem.New()
	if err := backend.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var objs []string
	fake := gofakes3.New(backend).Server()
	s3 := s.gate.front("s3", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			mu.Lock()
			objs = append(objs, r.URL.Path)
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
	}), func(r *http.Request) bool {
		return r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodPost
	})
	t.Cleanup(s3.Close)
	s.s3dir = s3test.Dir(s3.URL, "nightly")
	s.s3objs = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), objs...)
	}

	s.env = map[string]string{
		"ELIDO_API_KEY": key, "ELIDO_WORKSPACE_ID": workspace, "ELIDO_API_BASE": s.elido.URL(),
		"ELIDO_RATE_LIMIT": "6000", "RECON_TZ": tz, "RECON_DAYS": "5",
		"RECON_REPORT_DIR": s.s3dir, "RECON_FAIL_ON": "warn", "LOG_LEVEL": "error",
	}
	if c.slack == "bot" {
		s.env["SLACK_BOT_TOKEN"] = botToken
		s.env["SLACK_CHANNEL"] = slacktest.ChannelID
		s.env["SLACK_API_URL"] = s.front + "/api/"
	} else {
		s.env["SLACK_WEBHOOK_URL"] = s.front + slacktest.WebhookPath
	}
	switch c.db {
	case "sqlite":
		sd, hd := t.TempDir(), t.TempDir()
		if sh != nil {
			hd = sh.histDir
		}
		storePath, histPath := filepath.Join(sd, "clicks.db"), filepath.Join(hd, "history.db")
		s.env["STORE_DSN"] = "sqlite:" + storePath
		s.env["STORE_WRITE_DSN"] = "sqlite:" + storePath
		s.env["HISTORY_DSN"] = "sqlite:" + histPath
		s.obs = openSQLite(t, storePath, sd, hd)
	case "postgres":
		sdb, sdsn := pgtest.New(t)
		if _, err := sdb.Exec(readSchema(t, "postgres")); err != nil {
			t.Fatal(err)
		}
		var hdb *sqlx.DB
		var hdsn string
		if sh != nil {
			hdb, hdsn = sh.pgHist, sh.historyDSN
		} else {
			hdb, hdsn = pgtest.New(t)
		}
		s.env["STORE_DSN"] = sdsn
		s.env["STORE_WRITE_DSN"] = sdsn
		s.env["HISTORY_DSN"] = hdsn
		s.obs = &pgObserver{db: sdb, hist: hdb}
	case "mariadb":
		// MariaDB has no history driver: the store on MariaDB, the
		// history in a SQLite file.
		sdb, sdsn := mysqltest.New(t)
		if _, err := sdb.Exec(readSchema(t, "mysql")); err != nil {
			t.Fatal(err)
		}
		hd := t.TempDir()
		if sh != nil {
			hd = sh.histDir
		}
		s.env["STORE_DSN"] = sdsn
		s.env["STORE_WRITE_DSN"] = sdsn
		s.env["HISTORY_DSN"] = "sqlite:" + filepath.Join(hd, "history.db")
		s.obs = &myObserver{db: sdb, hisDir: hd, repair: t.TempDir()}
	default:
		t.Fatalf("-store=%s: want sqlite, postgres or mariadb", c.db)
	}
	ht, err := history.ParseMigrateDSN(s.env["HISTORY_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Migrate(t.Context(), ht); err != nil {
		t.Fatal(err)
	}
	s.rows = s.obs.tables(t)
	return s
}

// readSchema is the events schema of clickrecon's own sql/store.
func readSchema(t *testing.T, dialect string) string {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "sql", "store", dialect, "events.sql"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// root is the repository's root, found from the package's folder before
// TestMain leaves it.
var root string

func repoRoot(t *testing.T) string {
	if root == "" {
		t.Fatal("the repository's root was not found from the package's folder")
	}
	return root
}

func findRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return ""
}

// play is night n: the world moves on, a fault is chosen and the job
// runs; the caller checks every invariant of what it did (check).
func (s *sim) play(n int) nightResult {
	t := s.t
	// 03:00 to 04:59 in the zone, on the night's day.
	day0 := time.Date(2027, 3, 1, 0, 0, 0, 0, s.loc)
	d := reconcile.DateOf(day0.AddDate(0, 0, n-1))
	start := time.Date(d.Year, time.Month(d.Month), d.Day, 3, s.rng.IntN(120), s.rng.IntN(60), 0, s.loc)
	s.clock.Set(start)
	y := d.AddDays(-1)
	write := s.world.evolve(n, start, y)
	s.obs.insert(t, write)
	// Elido holds whole days, back past every day a snapshot reads (the
	// window and the 40 days before it).
	s.world.trim(s.world.dayStart(d.AddDays(-60)))
	s.elido.SetClicks(s.world.visible(start, s.world.dayStart(d.AddDays(-50))))

	repairNight := s.rng.Float64() < 0.15
	// clickrecon repair --apply after the run (run --repair needs the
	// reports in a folder; the simulation keeps them in a bucket).
	repairCmd := repairNight
	f := s.chooseFault(repairNight)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.gate.reset(f.plan, cancel)
	s.elido.SetFaults(f.elido...)
	if f.setup != nil {
		f.setup(s)
	}
	window := reconcile.Window{From: d.AddDays(-5), To: d.AddDays(-1), Loc: s.loc}
	snap := s.snapshot(window, start, window.From.AddDays(-40))
	s.snaps[n] = snap

	env := maps(s.env)
	var stdout bytes.Buffer
	out, runKey := s.run(ctx, env, &stdout)
	s.runs[runKey] = n
	killed := s.gate.isDead()
	code := out.Code
	if repairCmd && !killed && ctx.Err() == nil {
		var said bytes.Buffer
		s.repair(ctx, env, &said)
		if *flagVerb {
			t.Logf("%snight %d repair said:\n%s", s.who(), n, said.String())
		}
		stdout.Write(said.Bytes())
	}
	killed = s.gate.isDead()
	struck := f.name != "" && (f.plan == nil || s.gate.didFire())
	s.count(f, struck, killed)
	if *flagVerb {
		t.Logf("%snight %d %s: fault %q struck %v (%s) killed %v exit %d repair %v", s.who(), n, d, f.name, struck, s.gate.at_, killed, code, repairNight)
	}
	if struck && f.plan != nil && f.plan.how == "term" && strings.HasSuffix(s.gate.at_, "COMMIT") {
		// SIGTERM as a transaction commits: the last of the run's writes
		// may be that one, and the run then ended having done everything.
		f.codes = []int{0, 1, 3}
	}
	s.gate.reset(nil, nil)
	s.elido.SetFaults()

	return nightResult{n: n, date: d, window: window, snap: snap, fault: f, struck: struck, killed: killed,
		code: code, repair: repairNight, out: out}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// run is what cmd/clickrecon's run does, built the same way, with the
// simulation's clock and seams.
func (s *sim) run(ctx context.Context, env map[string]string, stdout *bytes.Buffer) (job.Outcome, string) {
	t := s.t
	var lookup envconfig.Lookuper = envconfig.MapLookuper(env)
	var alertOpts []alert.Option
	if s.shared != nil {
		// A run of one workspace of the fleet: its entry's variables
		// over the shared ones, every message naming it.
		lookup = s.shared.entryEnv(t, s.c.fleet, env)
		alertOpts = append(alertOpts, alert.WithFleetWorkspace(s.c.fleet))
	}
	c, err := config.Load(ctx, lookup)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	w, dsns, err := c.ValidateRun(s.clock.Now())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	query, err := store.LoadQuery(c.StorePreset, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tsZone, err := store.TimestampZone(c.StoreTSZone)
	if err != nil {
		t.Fatal(err)
	}
	mode, _, err := c.RunRepair()
	if err != nil {
		t.Fatal(err)
	}
	insert, storeWrite, err := c.ValidateRunRepair(mode)
	if err != nil {
		t.Fatal(err)
	}
	dsns.StoreWrite = storeWrite
	dest, err := storage.Open(ctx, c.ReportDir, storage.WithSleep(s.clock.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	defer dest.Close()
	storeID := dsns.Store.Redacted + " " + query.Name()
	runKey := report.RunKey(c.WorkspaceID, w, storeID)
	log := slog.New(slog.DiscardHandler)
	slackCfg := c.Slack()
	notifier, err := alert.New(slackCfg, append(alertOpts, alert.WithClock(s.clock.Now, s.clock.Sleep))...)
	if err != nil {
		t.Fatal(err)
	}
	ec := c.Elido()
	ec.RequestTimeout = 200 * time.Millisecond // the slow fault waits this, for real, once
	client, err := elido.New(ec, elido.WithClock(s.clock.Now, s.clock.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	o := job.Options{
		Window: w, Settle: c.Settle, Tolerance: c.Tolerance(), Timeout: c.Timeout,
		Drilldown: c.Drilldown == "auto", DrillMax: c.DrillMax, Diagnose: job.DiagnoseMode(c.Diagnose),
		Retention: c.Retention, ReportDir: c.ReportDir, ReportURL: c.ReportURL, KeepDays: c.ReportKeepDays,
		Format: c.Format, FailOn: c.FailOnSeverity(),
	}
	o.WorkspaceID, o.RunKey, o.LegacyStoreID = c.WorkspaceID, runKey, report.StoreID(storeID)
	o.Store, o.Query, o.History = s.wrapped(dsns.Store, "store"), query, s.wrapped(dsns.History, "history")
	o.TimestampZone = tsZone
	o.Secrets = c.Secrets(dsns)
	o.Lock = dsns.Lock()
	o.Probe = true
	o.Repair, o.StoreWrite, o.RepairInsert = mode, s.wrapped(dsns.StoreWrite, "write"), insert
	out, _ := job.Run(ctx, o, job.Deps{Elido: client, Notifier: notifier, Reports: dest, Log: log, Now: s.clock.Now,
		Stdout: stdout, DrillLimit: func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }})
	return out, runKey
}

// repair is what cmd/clickrecon's repair --apply does.
func (s *sim) repair(ctx context.Context, env map[string]string, stdout *bytes.Buffer) int {
	t := s.t
	env = maps(env)
	env["REPAIR_APPLY"] = "true"
	env["RECON_REPORT_DIR"] = s.obs.repairDir(t) // repair writes its plan to a folder
	c, err := config.Load(ctx, envconfig.MapLookuper(env))
	if err != nil {
		t.Fatal(err)
	}
	w, dsns, err := c.ValidateRun(s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	insert, storeWrite, err := c.ValidateRepair()
	if err != nil {
		t.Fatal(err)
	}
	query, err := store.LoadQuery(c.StorePreset, "", "")
	if err != nil {
		t.Fatal(err)
	}
	runKey := report.RunKey(c.WorkspaceID, w, dsns.Store.Redacted+" repair")
	ec := c.Elido()
	ec.RequestTimeout = 200 * time.Millisecond
	client, err := elido.New(ec, elido.WithClock(s.clock.Now, s.clock.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.obs.repairDir(t), storage.RepairPrefix+runKey)
	out, _ := job.Repair(ctx, job.RepairOptions{
		Window: w, Settle: c.Settle, Query: query,
		Store: s.wrapped(dsns.Store, "store"), StoreWrite: s.wrapped(storeWrite, "write"), Insert: insert, Apply: true,
		Dir:  dir,
		Lock: dsns.Lock(), WorkspaceID: c.WorkspaceID,
	}, job.Deps{Elido: client, Now: s.clock.Now}, stdout)
	return out.Code
}

func (s *sim) wrapped(t dsn.Target, kind string) dsn.Target {
	if t.IsZero() {
		return t
	}
	t.Wrap = s.gate.wrap(kind)
	return t
}
