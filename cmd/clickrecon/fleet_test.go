package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// fleetFixture is a fleet of two workspaces, each with its own Elido
// (and key, in a secret file) and its own SQLite store: acme's store lost
// a click, brand-b's key is revoked. Shared settings are variables.
type fleetFixture struct {
	t         *testing.T
	env       map[string]string
	reportDir string
	acme, b   *fixture
}

func newFleetFixture(t *testing.T) *fleetFixture {
	t.Helper()
	api := dstWindowClicks()
	acme := uniqueFixture(t, api, lossAndDuplicate(api))
	b := uniqueFixture(t, api, api)
	b.elido.SetFaults(elidotest.Fault{Kind: elidotest.Unauthorized})
	dir := t.TempDir()
	secret := func(name, value string) string { return fileIn(t, dir, name, value+"\n") }
	fleet := fmt.Sprintf(`# the agency's clients
[acme]
ELIDO_WORKSPACE_ID = %s
ELIDO_API_BASE = %s
ELIDO_API_KEY_FILE = %s
STORE_DSN = %s

[brand-b]
ELIDO_WORKSPACE_ID = %s
ELIDO_API_BASE = %s
ELIDO_API_KEY_FILE = %s
STORE_DSN = %s
`, acme.env["ELIDO_WORKSPACE_ID"], acme.env["ELIDO_API_BASE"], secret("acme-key", acme.env["ELIDO_API_KEY"]), acme.env["STORE_DSN"],
		b.env["ELIDO_WORKSPACE_ID"], b.env["ELIDO_API_BASE"], secret("b-key", b.env["ELIDO_API_KEY"]), b.env["STORE_DSN"])
	f := &fleetFixture{t: t, reportDir: filepath.Join(t.TempDir(), "reports"), acme: acme, b: b}
	f.env = map[string]string{
		"RECON_FLEET_FILE": secret("fleet.conf", fleet),
		"ELIDO_RATE_LIMIT": "6000",
		"RECON_TZ":         "Europe/Warsaw",
		"RECON_REPORT_DIR": f.reportDir,
		"LOG_FORMAT":       "json",
	}
	return f
}

func (f *fleetFixture) cmd(args ...string) result {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), args, envconfig.MapLookuper(f.env), &stdout, &stderr, f.acme.deps())
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// reportsOf reads the reports under dir.
func reportsOf(t *testing.T, dir string) []report.Report {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	var out []report.Report
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// A workspace of the fleet, chosen by name or by index, runs exactly as a
// run of one workspace with its variables would: the same exit code and
// days, its reports in a folder of its name, its log lines naming it. A
// workspace whose key is revoked exits as it would alone (2), and the
// other's run is unchanged.
func TestFleetWorkspaceRunsAsItWouldAlone(t *testing.T) {
	f := newFleetFixture(t)
	r := f.cmd(append([]string{"run", "--workspace", "acme"}, window...)...)
	if r.code != exitOK {
		t.Fatalf("run --workspace acme: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `"workspace":"acme"`) {
		t.Errorf("acme's log lines do not name it:\n%s", r.stderr)
	}
	fromFleet := reportsOf(t, filepath.Join(f.reportDir, "acme"))
	alone := f.acme.run(window...)
	if alone.code != r.code {
		t.Errorf("alone, acme exits %d; in the fleet %d", alone.code, r.code)
	}
	single := reportsOf(t, f.acme.reportDir)
	if len(fromFleet) != 1 || len(single) != 1 {
		t.Fatalf("%d reports under reports/acme, %d alone; want one each", len(fromFleet), len(single))
	}
	for i, d := range fromFleet[0].Days {
		s := single[0].Days[i]
		if d.Status != s.Status || *d.API != *s.API || *d.Local != *s.Local {
			t.Errorf("%s: %s %d/%d in the fleet, %s %d/%d alone", d.Date, d.Status, *d.API, *d.Local, s.Status, *s.API, *s.Local)
		}
	}
	if fromFleet[0].Coverage.Missing+fromFleet[0].Coverage.Surplus == 0 {
		t.Errorf("acme's report shows no gap: %+v", fromFleet[0].Coverage)
	}

	r = f.cmd(append([]string{"run", "--workspace-index=1"}, window...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "ELIDO_API_KEY") || !strings.Contains(r.stderr, `"workspace":"brand-b"`) {
		t.Errorf("run --workspace-index=1 (brand-b, key revoked): exit %d, want 2 naming ELIDO_API_KEY\n%s", r.code, r.stderr)
	}
	if bs := reportsOf(t, filepath.Join(f.reportDir, "brand-b")); len(bs) != 1 || bs[0].Coverage.Unverifiable != 3 {
		t.Errorf("brand-b's reports: %+v, want one with its 3 days unverifiable", bs)
	}
	// acme's night is unchanged by brand-b's.
	if again := f.cmd(append([]string{"run", "--workspace", "acme"}, window...)...); again.code != exitOK {
		t.Errorf("acme after brand-b: exit %d", again.code)
	}
	for _, rep := range reportsOf(t, filepath.Join(f.reportDir, "acme")) {
		for _, d := range rep.Days {
			if d.Status == reconcile.Unverifiable {
				t.Errorf("acme's %s is unverifiable after brand-b's run", d.Date)
			}
		}
	}
}

// A workspace that is not in the fleet, an index out of it, both flags,
// or no fleet file exit 2 before anything is read, saying what to fix.
func TestFleetChoiceMistakesExit2(t *testing.T) {
	f := newFleetFixture(t)
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"run", "--workspace", "nope"}, nil, `--workspace "nope" is not in`},
		{[]string{"run"}, nil, "RECON_FLEET_FILE names a fleet: choose its workspace"},
		{[]string{"run", "--workspace-index", "2"}, nil, "--workspace-index 2 is out of"},
		{[]string{"run", "--workspace-index", "two"}, nil, "is not a whole number"},
		{[]string{"run", "--workspace", "acme", "--workspace-index", "0"}, nil, "give one"},
		{[]string{"run", "--workspace", "acme"}, map[string]string{"RECON_FLEET_FILE": ""}, "set RECON_FLEET_FILE"},
		{[]string{"run", "--workspace-index", "0"}, map[string]string{"RECON_FLEET_SIZE": "3"}, "set completions to 2"},
	} {
		saved := maps.Clone(f.env)
		maps.Copy(f.env, tt.env)
		r := f.cmd(tt.args...)
		f.env = saved
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 saying %q\n%s", tt.args, r.code, tt.want, r.stderr)
		}
		if reps := reportsOf(t, filepath.Join(f.reportDir, "acme")); len(reps) > 0 {
			t.Errorf("%v wrote a report", tt.args)
		}
		if n := len(f.acme.elido.RequestLog()); n > 0 {
			t.Errorf("%v asked Elido %d times", tt.args, n)
		}
	}
}

// check with a fleet file and no workspace chosen checks every workspace,
// each line named by its workspace, and exits with the worst: brand-b's
// revoked key is FAILED (2), acme is ok.
func TestCheckEveryWorkspaceOfTheFleet(t *testing.T) {
	f := newFleetFixture(t)
	r := f.cmd("check")
	if r.code != exitUsage {
		t.Errorf("check: exit %d, want 2 for brand-b's key\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var acmeElido, bElido string
	for _, l := range strings.Split(r.stdout, "\n") {
		fields := strings.Fields(l)
		if len(fields) < 2 || fields[1] != "elido" {
			continue
		}
		switch fields[0] {
		case "acme":
			acmeElido = l
		case "brand-b":
			bElido = l
		}
	}
	if !strings.Contains(acmeElido, "ok") || !strings.Contains(bElido, "FAILED") {
		t.Errorf("the elido lines: acme %q, brand-b %q; want ok and FAILED\n%s", acmeElido, bElido, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, testKey) {
		t.Errorf("a key appears in check's output")
	}
}

// inFlight is a fake Elido's front: each request waits, up to a while,
// until want requests are in flight at once, and the most seen at once
// is kept.
type inFlight struct {
	mu        sync.Mutex
	now, most int
	want      int
	all       chan struct{}
	byKey     map[string]int
}

func (f *inFlight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.now++
		f.most = max(f.most, f.now)
		f.byKey[r.Header.Get("Authorization")]++
		if f.now == f.want {
			close(f.all)
		}
		f.mu.Unlock()
		select {
		case <-f.all:
		case <-time.After(10 * time.Second): // checked one at a time
		}
		h.ServeHTTP(w, r)
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	})
}

// check probes the workspaces of a fleet at once, and those that read one
// Elido key (two files of the same key) through one rate limiter, at the
// smaller of their ELIDO_RATE_LIMITs: on a clock that does not move, the
// second request of the key waits one interval (60 a minute: a second),
// and the workspace with its own key does not wait. The output is in the
// fleet file's order.
func TestCheckFleetAtOnceSharingAKeysLimit(t *testing.T) {
	api := dstWindowClicks()
	front := &inFlight{want: 3, all: make(chan struct{}), byKey: map[string]int{}}
	shared := elidotest.NewServer("ws_shared", testKey, api)
	own := elidotest.NewServer("ws_own", "sk_live_OTHER_KEY_0987654321", api)
	for _, s := range []*elidotest.Server{shared, own} {
		t.Cleanup(s.Close)
	}
	sharedFront := httptest.NewServer(front.wrap(shared))
	ownFront := httptest.NewServer(front.wrap(own))
	t.Cleanup(sharedFront.Close)
	t.Cleanup(ownFront.Close)

	dir := t.TempDir()
	secret := func(name, value string) string { return fileIn(t, dir, name, value+"\n") }
	fleet := fmt.Sprintf(`[zeta]
ELIDO_WORKSPACE_ID = ws_shared
ELIDO_API_BASE = %[1]s/v1
ELIDO_API_KEY_FILE = %[2]s
STORE_DSN = %[4]s

[alpha]
ELIDO_WORKSPACE_ID = ws_own
ELIDO_API_BASE = %[3]s/v1
ELIDO_API_KEY = sk_live_OTHER_KEY_0987654321
STORE_DSN = %[5]s

[mid]
ELIDO_WORKSPACE_ID = ws_shared
ELIDO_API_BASE = %[1]s/v1
ELIDO_API_KEY_FILE = %[6]s
ELIDO_RATE_LIMIT = 120
STORE_DSN = %[7]s
`, sharedFront.URL, secret("zeta-key", testKey), ownFront.URL,
		buildStore(t, "sqlite", api), buildStore(t, "sqlite", api),
		secret("mid-key", testKey), buildStore(t, "sqlite", api))
	waits := &waitLog{}
	env := map[string]string{
		"RECON_FLEET_FILE": secret("fleet.conf", fleet),
		"ELIDO_RATE_LIMIT": "60",
		"RECON_TZ":         "Europe/Warsaw",
		"RECON_REPORT_DIR": filepath.Join(t.TempDir(), "reports"),
	}
	frozen := time.Date(2026, 10, 27, 12, 0, 0, 0, time.UTC)
	d := deps{
		now:   func() time.Time { return testNow },
		elido: []elido.Option{elido.WithClock(func() time.Time { return frozen }, waits.sleep)},
	}
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"check"}, envconfig.MapLookuper(env), &stdout, &stderr, d)
	if code != exitOK {
		t.Fatalf("check: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if front.most != 3 {
		t.Errorf("at most %d workspaces asked Elido at once, want all 3", front.most)
	}
	for k, n := range front.byKey {
		if n != 1 && n != 2 || strings.Contains(k, "OTHER") && n != 1 {
			t.Errorf("%d requests of one key, want one per workspace and no retry: %v", n, front.byKey)
		}
	}
	if want := []time.Duration{time.Second}; !slices.Equal(waits.waits, want) {
		t.Errorf("the clients waited %v, want %v: the shared key's second request one interval at 60 a minute", waits.waits, want)
	}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		name := strings.Fields(l)[0]
		if len(order) == 0 || order[len(order)-1] != name {
			order = append(order, name)
		}
	}
	if want := []string{"zeta", "alpha", "mid"}; !slices.Equal(order, want) {
		t.Errorf("the workspaces' lines come in the order %v, want the fleet file's %v\n%s", order, want, stdout.String())
	}
}

// Two workspaces of a fleet that read one Elido workspace (against two
// stores) push their metrics to groups of their own, each named by its
// entry: the second pod's push does not replace the first's.
func TestFleetRunsPushToTheirOwnGroups(t *testing.T) {
	f := newFleetFixture(t)
	srv, got := fakePushgateway(t, false)
	fleet := fmt.Sprintf(`[east]
ELIDO_WORKSPACE_ID = %[1]s
ELIDO_API_BASE = %[2]s
ELIDO_API_KEY = %[3]s
STORE_DSN = %[4]s

[west]
ELIDO_WORKSPACE_ID = %[1]s
ELIDO_API_BASE = %[2]s
ELIDO_API_KEY = %[3]s
STORE_DSN = %[5]s
`, f.acme.env["ELIDO_WORKSPACE_ID"], f.acme.env["ELIDO_API_BASE"], f.acme.env["ELIDO_API_KEY"],
		f.acme.env["STORE_DSN"], buildStore(t, "sqlite", dstWindowClicks()))
	p := filepath.Join(t.TempDir(), "fleet.conf")
	if err := os.WriteFile(p, []byte(fleet), 0o600); err != nil {
		t.Fatal(err)
	}
	f.env["RECON_FLEET_FILE"] = p
	f.env["PUSHGATEWAY_URL"] = srv.URL
	for _, name := range []string{"east", "west"} {
		if r := f.cmd(append([]string{"run", "--workspace", name}, window...)...); r.code != exitOK {
			t.Fatalf("run --workspace %s: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	ws := f.acme.env["ELIDO_WORKSPACE_ID"]
	var groups []string
	for _, p := range got() {
		groups = append(groups, groupingKey(p.path))
	}
	want := []string{
		"fleet_workspace=east job=clickrecon workspace=" + ws,
		"fleet_workspace=west job=clickrecon workspace=" + ws,
	}
	if !slices.Equal(groups, want) {
		t.Errorf("pushed to the groups %v, want %v", groups, want)
	}
}

// groupingKey is the grouping key of a push to path
// (/metrics/job/J/label/value/...) as its sorted label=value pairs: the
// Pushgateway takes the labels in any order.
func groupingKey(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/metrics/"), "/")
	var pairs []string
	for i := 0; i+1 < len(parts); i += 2 {
		pairs = append(pairs, parts[i]+"="+parts[i+1])
	}
	slices.Sort(pairs)
	return strings.Join(pairs, " ")
}

// Workspaces that read one Elido key (two files of the same key count as
// one) each run at their share of its limit: the smallest
// ELIDO_RATE_LIMIT among them divided by how many they are, so that the
// Indexed Job's pods, run at once, never ask faster than the key allows
// together. A workspace with a key of its own keeps its limit.
func TestFleetWorkspacesSharingAKeyShareItsLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return fileIn(t, dir, name, content) }
	shared1, shared2, own := write("k1", "key-shared\n"), write("k2", "key-shared"), write("k3", "key-own")
	file := write("fleet.conf", "[a]\nELIDO_WORKSPACE_ID = 1\nELIDO_API_KEY_FILE = "+shared1+
		"\n[b]\nELIDO_WORKSPACE_ID = 2\nELIDO_API_KEY_FILE = "+shared2+"\nELIDO_RATE_LIMIT = 60\n"+
		"[c]\nELIDO_WORKSPACE_ID = 3\nELIDO_API_KEY_FILE = "+own+"\n"+
		"[d]\nELIDO_WORKSPACE_ID = 4\nELIDO_API_KEY_FILE = "+shared1+"\n")
	fleet, err := config.LoadFleet(file)
	if err != nil {
		t.Fatal(err)
	}
	env := envconfig.MapLookuper(map[string]string{"ELIDO_RATE_LIMIT": "90"})
	for name, want := range map[string]string{"a": "20", "b": "20", "c": "90", "d": "20"} {
		e, err := fleet.Entry(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := sharedKeyRate(fleet, e, env).Lookup("ELIDO_RATE_LIMIT"); got != want {
			t.Errorf("%s: ELIDO_RATE_LIMIT %s, want %s", name, got, want)
		}
	}
}

// fileIn writes content to the file name in dir (a secret's mode) and
// returns its path.
func fileIn(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// RECON_WORKSPACE and RECON_WORKSPACE_INDEX choose a workspace as the
// flags do, and their mistakes exit 2 naming the variable; a flag
// replaces both variables; JOB_COMPLETION_INDEX alone chooses nothing;
// the help needs no workspace.
func TestFleetWorkspaceFromItsVariables(t *testing.T) {
	f := newFleetFixture(t)
	with := func(env map[string]string, args ...string) result {
		saved := maps.Clone(f.env)
		maps.Copy(f.env, env)
		defer func() { f.env = saved }()
		return f.cmd(args...)
	}
	r := with(map[string]string{"RECON_WORKSPACE": "acme"}, append([]string{"run"}, window...)...)
	if r.code != exitOK || !strings.Contains(r.stderr, `"workspace":"acme"`) {
		t.Errorf("RECON_WORKSPACE=acme run: exit %d, want 0 and acme's log lines\n%s", r.code, r.stderr)
	}
	if reps := reportsOf(t, filepath.Join(f.reportDir, "acme")); len(reps) != 1 {
		t.Errorf("RECON_WORKSPACE=acme: %d reports under reports/acme, want 1", len(reps))
	}
	r = with(map[string]string{"RECON_WORKSPACE_INDEX": "1"}, append([]string{"run"}, window...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, `"workspace":"brand-b"`) {
		t.Errorf("RECON_WORKSPACE_INDEX=1 run (brand-b, key revoked): exit %d, want 2 from brand-b\n%s", r.code, r.stderr)
	}
	// A flag wins: --workspace over either variable.
	for _, env := range []map[string]string{{"RECON_WORKSPACE": "brand-b"}, {"RECON_WORKSPACE_INDEX": "1"}} {
		r = with(env, append([]string{"run", "--workspace", "acme"}, window...)...)
		if r.code != exitOK || !strings.Contains(r.stderr, `"workspace":"acme"`) || strings.Contains(r.stderr, "brand-b") {
			t.Errorf("%v run --workspace acme: exit %d, want 0 and acme's run alone\n%s", env, r.code, r.stderr)
		}
	}
	r = with(map[string]string{"RECON_WORKSPACE": "nope"}, "run", "--help")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage: clickrecon run") {
		t.Errorf("RECON_WORKSPACE=nope run --help: exit %d, stdout %q: want 0 and the help", r.code, r.stdout)
	}
	before := len(f.acme.elido.RequestLog())
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"RECON_WORKSPACE": "nope"}, `RECON_WORKSPACE "nope" is not in`},
		{map[string]string{"RECON_WORKSPACE_INDEX": "2"}, "RECON_WORKSPACE_INDEX 2 is out of"},
		{map[string]string{"RECON_WORKSPACE_INDEX": "two"}, `RECON_WORKSPACE_INDEX "two" is not a whole number`},
		{map[string]string{"RECON_WORKSPACE": "acme", "RECON_WORKSPACE_INDEX": "0"}, "RECON_WORKSPACE and RECON_WORKSPACE_INDEX both choose a workspace"},
		{map[string]string{"RECON_WORKSPACE": "acme", "RECON_FLEET_FILE": ""}, "set RECON_FLEET_FILE"},
		{map[string]string{"JOB_COMPLETION_INDEX": "0"}, "RECON_FLEET_FILE names a fleet: choose its workspace"},
	} {
		for _, cmd := range []string{"run", "check"} {
			if cmd == "check" && tt.env["JOB_COMPLETION_INDEX"] != "" {
				continue // check without a workspace checks them all
			}
			r := with(tt.env, cmd)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%v %s: exit %d, want 2 saying %q\n%s", tt.env, cmd, r.code, tt.want, r.stderr)
			}
		}
	}
	if n := len(f.acme.elido.RequestLog()); n != before {
		t.Errorf("the mistakes asked Elido %d times", n-before)
	}
}
