package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

// The fleet's simulation: several workspaces of one deployment, night
// after night, as the Indexed Job runs them. Each workspace has its own
// world, Elido (its own key), click store, bucket, zone, Slack transport
// and faults, drawn from a stream of its own; they share one run history and
// one Slack channel, and each night they run at once, each from the fleet
// file (config.LoadFleet, Entry.Env) with its messages naming it
// (alert.WithFleetWorkspace). After every night, every invariant of
// RELIABILITY.md's simulation is checked for each workspace against its
// own world and the channel's messages that name it: one workspace's
// revoked key, dead store, killed run or lost history never changes what
// another's night says, and each hears its own notice once.

// fleetMembers are the fleet's workspaces, their Slack transports and
// their zones.
var fleetMembers = []struct{ name, slack, tz string }{
	{"north", "webhook", "Europe/Warsaw"},
	{"south", "bot", "America/New_York"},
	{"east", "webhook", "Asia/Tokyo"},
}

// fleetShared is what a fleet's workspaces share.
type fleetShared struct {
	slack *slacktest.Server
	// first is the workspace whose clock the channel's timestamps follow:
	// the bot token's, which reads its posts back from the channel by
	// their time (after a lost answer) and must find them where its
	// history's clock says they are. The workspaces' clocks are each at
	// 03:00 in their own zones: hours apart, where a real fleet's are one.
	first      *sim
	histDir    string
	pgHist     *sqlx.DB
	historyDSN string
	file       string // the fleet file
	fleet      config.Fleet
}

// ownVars are a workspace's own variables: the fleet file gives them;
// every other variable of a run is the deployment's.
var ownVars = []string{"ELIDO_API_KEY", "ELIDO_WORKSPACE_ID", "ELIDO_API_BASE", "STORE_DSN", "STORE_WRITE_DSN",
	"SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "SLACK_API_URL", "RECON_REPORT_DIR"}

func newFleetShared(t *testing.T, db string) *fleetShared {
	sh := &fleetShared{histDir: t.TempDir()}
	sh.slack = slacktest.New(t, slacktest.WithToken(botToken), slacktest.WithClock(func() time.Time {
		if sh.first == nil {
			return time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC)
		}
		return sh.first.clock.Now()
	}))
	if db == "postgres" {
		sh.pgHist, sh.historyDSN = pgtest.New(t)
	}
	return sh
}

// writeFile writes the fleet file of sims, each workspace's secrets in
// files of their own, as the fleet's Secret mounts them, and loads it.
func (sh *fleetShared) writeFile(t *testing.T, sims []*sim) {
	dir := t.TempDir()
	secret := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var b strings.Builder
	b.WriteString("workspaces:\n")
	for _, s := range sims {
		name := s.c.fleet
		fmt.Fprintf(&b, "  - name: %s\n    workspace_id: %q\n    settings:\n", name, s.env["ELIDO_WORKSPACE_ID"])
		for _, k := range []string{"ELIDO_API_BASE", "RECON_REPORT_DIR", "SLACK_CHANNEL", "SLACK_API_URL"} {
			if v, ok := s.env[k]; ok {
				fmt.Fprintf(&b, "      %s: %q\n", k, v)
			}
		}
		b.WriteString("    secrets:\n")
		for _, k := range []string{"ELIDO_API_KEY", "STORE_DSN", "STORE_WRITE_DSN", "SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN"} {
			if v, ok := s.env[k]; ok {
				fmt.Fprintf(&b, "      %s: %s\n", strings.ToLower(k), secret(name+"-"+strings.ToLower(k), v))
			}
		}
	}
	sh.file = filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(sh.file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fl, err := config.LoadFleet(sh.file)
	if err != nil {
		t.Fatalf("the fleet file:\n%s\n%v", b.String(), err)
	}
	sh.fleet = fl
}

// entryEnv is the environment of a run of workspace name: its entry's
// variables over the deployment's (env without the workspace's own).
func (sh *fleetShared) entryEnv(t *testing.T, name string, env map[string]string) envconfig.Lookuper {
	e, err := sh.fleet.Entry(name)
	if err != nil {
		t.Fatal(err)
	}
	shared := maps(env)
	for _, k := range ownVars {
		delete(shared, k)
	}
	shared[config.FleetFileVar] = sh.file
	return e.Env(envconfig.MapLookuper(shared))
}

func TestFleetSimulation(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2}
	nights := 25
	if testing.Short() || raceEnabled {
		nights, seeds = 4, seeds[:1]
	}
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	}
	if *flagNights > 0 {
		nights = *flagNights
	}
	dbs := []string{"sqlite", "postgres"}
	if *flagStore != "" {
		dbs = []string{*flagStore}
	}
	for _, seed := range seeds {
		for _, db := range dbs {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, db), func(t *testing.T) {
				t.Parallel()
				runFleet(t, seed, nights, db)
			})
		}
	}
}

// runFleet runs the fleet's nights: every workspace's at once, then
// every workspace's invariants.
func runFleet(t *testing.T, seed uint64, nights int, db string) {
	sh := newFleetShared(t, db)
	var sims []*sim
	for _, m := range fleetMembers {
		sims = append(sims, setup(t, simConfig{seed: seed, nights: nights, slack: m.slack, db: db, fleet: m.name, tz: m.tz}, sh))
	}
	sh.first = sims[0]
	for _, s := range sims {
		if s.c.slack == "bot" {
			sh.first = s
		}
	}
	sh.writeFile(t, sims)
	for n := 1; n <= nights; n++ {
		results := make([]nightResult, len(sims))
		var wg sync.WaitGroup
		for i, s := range sims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = s.play(n)
			}()
		}
		wg.Wait()
		for i, s := range sims {
			s.check(results[i])
		}
		if t.Failed() {
			t.Fatalf("fleet seed %d failed at night %d of %d; replay it with:\n  %s", seed, n, nights, sims[0].c.replay(n))
		}
	}
	for _, s := range sims {
		s.checkNights()
	}
	stats.Lock()
	stats.events["fleet: workspace nights"] += nights * len(sims)
	stats.Unlock()
}

// who names the simulation's workspace in a fleet, for its log lines.
func (s *sim) who() string {
	if s.c.fleet == "" {
		return ""
	}
	return "[" + s.c.fleet + "] "
}
