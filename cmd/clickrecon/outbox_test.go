package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// asMain, set in the environment, makes the test binary run as clickrecon
// itself: how a test kills a real run (SIGKILL, SIGTERM) at the moment
// Slack receives its post.
const asMain = "CLICKRECON_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// The delivery tests' window and the fake channel's ID.
var outboxWindow = []string{"--from", "2026-10-24", "--to", "2026-10-26"}

const fakeChannelID = slacktest.ChannelID

// fakeSlack is slacktest's Slack, with what the outbox tests ask of it.
type fakeSlack struct{ *slacktest.Server }

type fakePost = slacktest.Post

func newFakeSlack(t *testing.T) *fakeSlack { return &fakeSlack{slacktest.New(t)} }

// configure points f's runs at s through transport, webhook or bot.
func (s *fakeSlack) configure(f *fixture, transport string) {
	switch transport {
	case "webhook":
		f.env["SLACK_WEBHOOK_URL"] = s.WebhookURL()
	case "bot":
		f.env["SLACK_BOT_TOKEN"] = "xoxb-outbox-test"
		f.env["SLACK_CHANNEL"] = fakeChannelID
		f.env["SLACK_API_URL"] = s.APIURL()
	}
}

func (s *fakeSlack) setHook(hook func(i int) bool) { s.SetHook(hook) }

func (s *fakeSlack) received() []fakePost { return s.Posts() }

// checkDelivered fails t unless Slack holds the alert as the transport
// promises: with a bot token exactly one message; with a webhook the alert
// and at most one repeat, marked as possibly repeating it.
func (s *fakeSlack) checkDelivered(t *testing.T, transport string) {
	t.Helper()
	posts := s.received()
	marked := 0
	for _, p := range posts {
		if strings.Contains(p.Text, "Possible repeat") {
			marked++
		}
	}
	switch {
	case len(posts) == 0:
		t.Errorf("%s: no alert reached Slack", transport)
	case transport == "bot" && len(posts) != 1:
		t.Errorf("bot: %d messages in the channel, want exactly one: %v", len(posts), texts(posts))
	case transport == "bot" && marked != 0:
		t.Errorf("bot: the alert is marked as a repeat: %q", posts[0].Text)
	case transport == "webhook" && len(posts) > 2:
		t.Errorf("webhook: %d messages, want the alert and at most one marked repeat: %v", len(posts), texts(posts))
	case transport == "webhook" && len(posts) == 2 && (marked != 1 || strings.Contains(posts[0].Text, "Possible repeat")):
		t.Errorf("webhook: the second message is not marked as a possible repeat: %v", texts(posts))
	}
	for _, p := range posts {
		if !strings.Contains(p.Text, "2026-10-25") {
			t.Errorf("%s: a message that is not the alert: %q", transport, p.Text)
		}
	}
}

func texts(posts []fakePost) []string {
	var out []string
	for _, p := range posts {
		out = append(out, p.Text)
	}
	return out
}

// newOutboxFixture is newFixture with a workspace of the test's own (the
// run lock and the history are keyed by it, and other test processes may
// share the database) and a store on storeBackend holding a loss on
// 2026-10-25 and a duplicate on 2026-10-26.
func newOutboxFixture(t *testing.T, storeBackend string) *fixture {
	t.Helper()
	api := dstWindowClicks()
	f := newFixture(t, storeBackend, api, lossAndDuplicate(api))
	ws := fmt.Sprintf("7%05d%06d", os.Getpid()%100000, rand.IntN(1000000))
	srv := elidotest.NewServer(ws, testKey, api)
	t.Cleanup(srv.Close)
	f.elido = srv
	f.env["ELIDO_WORKSPACE_ID"] = ws
	f.env["ELIDO_API_BASE"] = srv.URL()
	return f
}

// withHistory gives f's runs a migrated history on backend.
func withHistory(t *testing.T, f *fixture, backend string) string {
	t.Helper()
	var dsn string
	switch backend {
	case "sqlite":
		dsn = "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	case "postgres":
		_, dsn = pgtest.New(t)
	}
	if _, err := history.Migrate(t.Context(), dbtest.Parsed(t, history.ParseMigrateDSN, dsn)); err != nil {
		t.Fatal(err)
	}
	f.env["HISTORY_DSN"] = dsn
	return dsn
}

// runWithTimeout runs clickrecon in process with Slack calls bounded by
// callTimeout.
func (f *fixture) runWithTimeout(ctx context.Context, callTimeout time.Duration, args ...string) result {
	f.t.Helper()
	d := f.deps()
	d.alert = append(d.alert, alert.WithCallTimeout(callTimeout))
	var stdout, stderr bytes.Buffer
	code := runWith(ctx, append([]string{"run"}, args...), envconfig.MapLookuper(f.env), &stdout, &stderr, d)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// pendingPosts counts the posts of workspace, whatever its store, that
// the history at historyDSN holds as pending.
func pendingPosts(t *testing.T, historyDSN, workspace string) int {
	t.Helper()
	db, err := openHistoryDB(historyDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Get(&n, db.Rebind("SELECT count(*) FROM outbox WHERE workspace_id = ? AND state = 'pending'"), workspace); err != nil {
		t.Fatal(err)
	}
	return n
}

// openHistoryDB opens the history database at dsn directly, to look at or
// change its rows as a test needs.
func openHistoryDB(dsn string) (*sqlx.DB, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return sqlx.Open("sqlite", path)
	}
	return sqlx.Open("postgres", dsn)
}

// reports reads every report.json f's runs wrote.
func (f *fixture) reports() []report.Report {
	f.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(f.reportDir, "*", "report.json"))
	var out []report.Report
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.t.Fatal(err)
		}
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			f.t.Fatalf("%s: %v", p, err)
		}
		out = append(out, r)
	}
	return out
}

// Case 1 of the delivery guarantee: a history the job can read but not
// write (a role without INSERT) cannot record a post before it is made, so
// no run posts the gap at all, however often it is retried; each exits 3.
func TestOutboxHistoryReadOnlyPostsNothing(t *testing.T) {
	for _, transport := range []string{"webhook", "bot"} {
		t.Run(transport, func(t *testing.T) {
			f := newOutboxFixture(t, "sqlite")
			slack := newFakeSlack(t)
			slack.configure(f, transport)
			admin, dsn := pgtest.New(t)
			if _, err := history.Migrate(t.Context(), dbtest.Parsed(t, history.ParseMigrateDSN, dsn)); err != nil {
				t.Fatal(err)
			}
			f.env["HISTORY_DSN"] = readOnlyRole(t, admin, dsn)
			for run := 1; run <= 3; run++ {
				r := f.run(outboxWindow...)
				if r.code != exitIncomplete {
					t.Errorf("run %d: exit %d, want 3\n%s", run, r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, "nothing posted") {
					t.Errorf("run %d: the log does not say nothing was posted:\n%s", run, r.stderr)
				}
			}
			if got := slack.received(); len(got) != 0 {
				t.Errorf("%d messages posted without a writable history: %v", len(got), texts(got))
			}
		})
	}
}

// readOnlyRole creates a role that may read the history's tables in the
// schema of dsn (admin's) but write none, as a role that lost its INSERT
// grant, and returns dsn as that role. The role is dropped when t ends.
func readOnlyRole(t *testing.T, admin *sqlx.DB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := pq.QuoteIdentifier(u.Query().Get("search_path"))
	role := fmt.Sprintf("clickrecon_ro_%08x", rand.Uint32())
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'readonly'",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u.User = url.UserPassword(role, "readonly")
	return u.String()
}

// Case 2: a webhook that receives the post and never answers costs the
// run one bounded wait (exit 3, the post left pending); the rerun posts
// the alert at most once more, marked as a possible repeat, and the run
// after it nothing. With a bot token the rerun finds the post through its
// metadata and posts nothing.
func TestOutboxPostNeverAnswered(t *testing.T) {
	for _, transport := range []string{"webhook", "bot"} {
		t.Run(transport, func(t *testing.T) {
			f := newOutboxFixture(t, "sqlite")
			historyDSN := withHistory(t, f, "sqlite")
			slack := newFakeSlack(t)
			slack.configure(f, transport)
			slack.setHook(func(i int) bool { return i == 0 })

			r := f.runWithTimeout(t.Context(), time.Second, outboxWindow...)
			if r.code != exitIncomplete || !strings.Contains(r.stderr, "stays pending") {
				t.Fatalf("first run: exit %d, want 3 and the post left pending\n%s", r.code, r.stderr)
			}
			if n := pendingPosts(t, historyDSN, f.env["ELIDO_WORKSPACE_ID"]); n != 1 {
				t.Errorf("%d posts pending after the unanswered post, want 1", n)
			}
			for run := 2; run <= 3; run++ {
				if r := f.run(outboxWindow...); r.code != exitOK {
					t.Errorf("run %d: exit %d\n%s", run, r.code, r.stderr)
				}
			}
			slack.checkDelivered(t, transport)
			if n := pendingPosts(t, historyDSN, f.env["ELIDO_WORKSPACE_ID"]); n != 0 {
				t.Errorf("%d posts still pending", n)
			}
		})
	}
}

// child runs clickrecon as its own process (the test binary as main) with
// f's environment; kill is how the test stops it.
type child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func startChild(t *testing.T, f *fixture, args ...string) *child {
	t.Helper()
	c := &child{done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], append([]string{"run"}, args...)...)
	c.cmd.Env = append(os.Environ(), asMain+"=1")
	for k, v := range f.env {
		c.cmd.Env = append(c.cmd.Env, k+"="+v)
	}
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// wait returns the child's exit code, or fails t after a bound.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-c.done:
		c.done <- nil // for the cleanup
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		t.Fatalf("clickrecon did not end within 60s\n%s", c.stderr.String())
		return 0
	}
}

// Cases 3 and 4: the run is killed (SIGKILL) the moment Slack receives its
// post, or stopped (SIGTERM) a second into a post Slack accepted; the
// rerun finds the post pending and settles it: with a bot token it adopts
// the message it finds through its metadata (exactly one alert), with a
// webhook it posts at most one marked repeat.
func TestOutboxRunKilledDuringThePost(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for _, transport := range []string{"webhook", "bot"} {
			t.Run(strings.ToLower(sig.String()[:4])+"_"+transport, func(t *testing.T) {
				f := newOutboxFixture(t, "sqlite")
				historyDSN := withHistory(t, f, "sqlite")
				slack := newFakeSlack(t)
				slack.configure(f, transport)
				var c *child
				started := make(chan struct{})
				slack.setHook(func(i int) bool {
					if i != 0 {
						return false
					}
					<-started
					if sig == syscall.SIGTERM {
						select { // a second into the post
						case <-time.After(time.Second):
						case <-c.done:
							c.done <- nil
						}
					}
					c.cmd.Process.Signal(sig)
					return true
				})
				c = startChild(t, f, outboxWindow...)
				close(started)
				code := c.wait(t)
				if sig == syscall.SIGTERM && code != exitIncomplete {
					t.Errorf("after SIGTERM: exit %d, want 3\n%s", code, c.stderr.String())
				}
				if sig == syscall.SIGKILL && code != -1 {
					t.Errorf("after SIGKILL: exit %d, want a killed process\n%s", code, c.stderr.String())
				}
				if got := len(slack.received()); got != 1 {
					t.Fatalf("%d posts reached Slack before the signal, want 1", got)
				}
				if n := pendingPosts(t, historyDSN, f.env["ELIDO_WORKSPACE_ID"]); n != 1 {
					t.Errorf("%d posts pending after the signal, want 1", n)
				}
				for run := 2; run <= 3; run++ {
					if r := f.run(outboxWindow...); r.code != exitOK {
						t.Errorf("run %d: exit %d\n%s", run, r.code, r.stderr)
					}
				}
				slack.checkDelivered(t, transport)
			})
		}
	}
}

// A run killed (SIGKILL) or stopped (SIGTERM) the moment Slack takes its
// "checking again", before the outcome is recorded: the next night neither
// repeats it unmarked nor stays silent about what it must say. A bot token
// finds the recovery in the channel and posts nothing; a webhook posts it
// once more, marked as a possible repeat; the night after, nothing.
func TestOutboxRecoveryKilledDuringThePost(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for _, transport := range []string{"webhook", "bot"} {
			t.Run(strings.ToLower(sig.String()[:4])+"_"+transport, func(t *testing.T) {
				f := newOutboxFixture(t, "sqlite")
				withHistory(t, f, "sqlite")
				slack := newFakeSlack(t)
				slack.configure(f, transport)
				f.env["ELIDO_API_KEY"] = "sk_live_revoked"
				if r := f.run(outboxWindow...); r.code == exitOK {
					t.Fatalf("night 1 with a revoked key: exit 0\n%s", r.stderr)
				}
				f.env["ELIDO_API_KEY"] = testKey
				recovery := func(p fakePost) bool { return strings.Contains(p.Text, "again") }

				var c *child
				started := make(chan struct{})
				var once sync.Once
				slack.setHook(func(i int) bool {
					if !recovery(slack.received()[i]) {
						return false
					}
					<-started
					once.Do(func() { c.cmd.Process.Signal(sig) })
					return true
				})
				c = startChild(t, f, outboxWindow...)
				close(started)
				if code := c.wait(t); code == exitOK {
					t.Errorf("night 2, signalled mid-recovery: exit 0\n%s", c.stderr.String())
				}
				slack.setHook(nil)
				var logs strings.Builder
				for night := 3; night <= 4; night++ {
					r := f.run(outboxWindow...)
					if r.code != exitOK {
						t.Errorf("night %d: exit %d\n%s", night, r.code, r.stderr)
					}
					logs.WriteString(r.stderr)
				}
				defer func() {
					if t.Failed() {
						t.Logf("night 2:\n%s\nnights 3 and 4:\n%s", c.stderr.String(), logs.String())
					}
				}()
				var told []fakePost
				for _, p := range slack.received() {
					if recovery(p) {
						told = append(told, p)
					}
				}
				switch {
				case transport == "bot" && len(told) != 1:
					t.Errorf("bot: %d recoveries, want exactly 1: %v", len(told), texts(told))
				case transport == "webhook" && (len(told) != 2 || strings.Contains(told[0].Text, "Possible repeat") || !strings.Contains(told[1].Text, "Possible repeat")):
					t.Errorf("webhook: recoveries %v, want the one killed and one more, marked as a possible repeat", texts(told))
				}
			})
		}
	}
}

// tcpProxy forwards connections to target until it is killed: a database
// that goes away, with every connection, at a moment of the test's choice.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.kill)
	return p
}

func (p *tcpProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		if p.killed {
			p.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { io.Copy(out, in); out.Close() }()
		go func() { io.Copy(in, out); in.Close() }()
	}
}

// kill closes the listener and every connection.
func (p *tcpProxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killed = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Case 5: the history database goes away (every connection cut, no new
// one possible) the moment Slack receives the post, which Slack takes: the
// run cannot mark it posted and exits 3; the rerun, with the history back,
// settles the pending post as in cases 3 and 4.
func TestOutboxHistoryLostDuringThePost(t *testing.T) {
	for _, transport := range []string{"webhook", "bot"} {
		t.Run(transport, func(t *testing.T) {
			f := newOutboxFixture(t, "sqlite")
			direct := withHistory(t, f, "postgres")
			u, err := url.Parse(direct)
			if err != nil {
				t.Fatal(err)
			}
			proxy := newTCPProxy(t, u.Host)
			u.Host = proxy.ln.Addr().String()
			f.env["HISTORY_DSN"] = u.String()
			slack := newFakeSlack(t)
			slack.configure(f, transport)
			slack.setHook(func(i int) bool {
				if i == 0 {
					proxy.kill()
				}
				return false // Slack takes the post and says so
			})
			r := f.runWithTimeout(t.Context(), 5*time.Second, outboxWindow...)
			if r.code != exitIncomplete {
				t.Errorf("with the history gone: exit %d, want 3\n%s", r.code, r.stderr)
			}
			if got := len(slack.received()); got != 1 {
				t.Fatalf("%d posts, want 1", got)
			}
			f.env["HISTORY_DSN"] = direct // the history is back
			if n := pendingPosts(t, direct, f.env["ELIDO_WORKSPACE_ID"]); n != 1 {
				t.Errorf("%d posts pending, want the 1 the run could not mark", n)
			}
			for run := 2; run <= 3; run++ {
				if r := f.run(outboxWindow...); r.code != exitOK {
					t.Errorf("run %d: exit %d\n%s", run, r.code, r.stderr)
				}
			}
			slack.checkDelivered(t, transport)
		})
	}
}

// Case 6: two runs at once on the embedded setup (SQLite store, SQLite
// history, no PostgreSQL anywhere): the lock file lets one run; the other
// exits 3 having done nothing, and Slack gets one alert. The first post
// is held until the other run has ended, so the runs always overlap.
func TestOutboxConcurrentEmbeddedRunsAlertOnce(t *testing.T) {
	f := newOutboxFixture(t, "sqlite")
	withHistory(t, f, "sqlite")
	slack := newFakeSlack(t)
	slack.configure(f, "webhook")
	ended := make(chan struct{}, 2)
	slack.setHook(func(i int) bool {
		if i == 0 {
			select {
			case <-ended:
				ended <- struct{}{} // for the count below
			case <-time.After(30 * time.Second):
				t.Errorf("the second run did not end while the first was posting")
			}
		}
		return false
	})
	results := make(chan result, 2)
	for range 2 {
		go func() {
			r := f.run(outboxWindow...)
			ended <- struct{}{}
			results <- r
		}()
	}
	var codes []int
	var refused int
	for range 2 {
		select {
		case r := <-results:
			codes = append(codes, r.code)
			if strings.Contains(r.stdout, "is in progress") {
				refused++
			}
		case <-time.After(60 * time.Second):
			t.Fatal("the runs did not end within 60s")
		}
	}
	if refused != 1 {
		t.Errorf("exit codes %v, %d runs refused by the lock; want one refused", codes, refused)
	}
	if got := slack.received(); len(got) != 1 {
		t.Errorf("%d alerts from two runs at once, want 1: %v", len(got), texts(got))
	}
	if r := f.run(outboxWindow...); r.code != exitOK || len(slack.received()) != 1 {
		t.Errorf("a later run: exit %d, %d alerts; want 0 and still 1", r.code, len(slack.received()))
	}
}

// Case 7: the lock's session is terminated mid-run (a failover,
// pg_terminate_backend) and a second run starts, takes the lock and posts
// the alert; the first run finds its lock lost before posting or
// recording, posts nothing and exits 3.
func TestOutboxLostLockPostsNothing(t *testing.T) {
	f := newOutboxFixture(t, "sqlite")
	historyDSN := withHistory(t, f, "postgres")
	slack := newFakeSlack(t)
	slack.configure(f, "webhook")
	admin, _ := pgtest.New(t)
	ws := f.env["ELIDO_WORKSPACE_ID"]
	key := uint64(runlock.Key(ws))

	var once sync.Once
	var second result
	d := f.deps()
	d.drillLimit = func(ctx context.Context) (context.Context, context.CancelFunc) {
		once.Do(func() { // in the first run, once it has found the gaps
			terminateLockSession(t, admin, key)
			second = f.run(outboxWindow...)
		})
		return context.WithCancel(ctx)
	}
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), append([]string{"run"}, outboxWindow...), envconfig.MapLookuper(f.env), &stdout, &stderr, d)
	if second.code != exitOK {
		t.Errorf("the second run: exit %d, want 0\n%s", second.code, second.stderr)
	}
	if code != exitIncomplete || !strings.Contains(stderr.String(), "lock was lost") {
		t.Errorf("the first run, its lock lost: exit %d, want 3 and the lost lock logged\n%s", code, stderr.String())
	}
	if got := slack.received(); len(got) != 1 {
		t.Errorf("%d alerts, want 1 (the second run's): %v", len(got), texts(got))
	}
	db, err := openHistoryDB(historyDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs int
	if err := db.Get(&runs, "SELECT count(*) FROM runs WHERE workspace_id = $1", ws); err != nil || runs != 1 {
		t.Errorf("%d runs recorded (%v), want 1: the run that lost its lock records nothing", runs, err)
	}
}

// terminateLockSession ends the session holding the advisory lock key, as
// a failover would, and waits, bounded, until the lock is free.
func terminateLockSession(t *testing.T, admin *sqlx.DB, key uint64) {
	t.Helper()
	const where = " FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 1"
	hi, lo := int64(key>>32), int64(key&0xffffffff)
	var ended int
	if err := admin.Get(&ended, "SELECT count(pg_terminate_backend(pid))"+where, hi, lo); err != nil || ended != 1 {
		t.Fatalf("terminate the lock's session: %d ended, %v", ended, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var held int
		if err := admin.Get(&held, "SELECT count(*)"+where, hi, lo); err != nil {
			t.Fatal(err)
		}
		if held == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock is still held 10s after its session was terminated")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Case 8: the same PostgreSQL store named by equivalent DSNs (an extra
// parameter, postgresql:// for postgres://, localhost for 127.0.0.1) has
// one store_id: the alert is posted once, not once per spelling.
func TestOutboxEquivalentStoreDSNsAlertOnce(t *testing.T) {
	f := newOutboxFixture(t, "postgres")
	withHistory(t, f, "sqlite")
	slack := newFakeSlack(t)
	slack.configure(f, "webhook")
	base := f.env["STORE_DSN"]
	spellings := []string{base, base + "&connect_timeout=7", "postgresql" + strings.TrimPrefix(base, "postgres")}
	switch {
	case strings.Contains(base, "@127.0.0.1"):
		spellings = append(spellings, strings.Replace(base, "@127.0.0.1", "@localhost", 1))
	case strings.Contains(base, "@localhost"):
		spellings = append(spellings, strings.Replace(base, "@localhost", "@127.0.0.1", 1))
	}
	want := identityStoreID(t, base, "events")
	for _, dsn := range spellings {
		f.env["STORE_DSN"] = dsn
		if r := f.run(outboxWindow...); r.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", dbtest.Parsed(t, store.ParseDSN, dsn), r.code, r.stderr)
		}
		for _, rep := range f.reports() {
			if rep.StoreID != want {
				t.Errorf("%s: store_id %s, want %s", dbtest.Parsed(t, store.ParseDSN, dsn), rep.StoreID, want)
			}
		}
	}
	if got := slack.received(); len(got) != 1 {
		t.Errorf("%d alerts for one store under %d spellings, want 1", len(got), len(spellings))
	}
}

// A history written before store identities keeps its alerts under the
// store id of the DSN's spelling: the first run with identities moves them
// and does not alert the same gap again.
func TestOutboxLegacyStoreIDAdopted(t *testing.T) {
	f := newOutboxFixture(t, "postgres")
	historyDSN := withHistory(t, f, "sqlite")
	slack := newFakeSlack(t)
	slack.configure(f, "webhook")
	if r := f.run(outboxWindow...); r.code != exitOK || len(slack.received()) != 1 {
		t.Fatalf("first run: exit %d, %d alerts\n%s", r.code, len(slack.received()), r.stderr)
	}
	legacy := report.StoreID(dbtest.Parsed(t, store.ParseDSN, f.env["STORE_DSN"]).Redacted + " events")
	db, err := openHistoryDB(historyDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// As an earlier version left it: alerts under the DSN's id, no outbox.
	if _, err := db.Exec(db.Rebind("UPDATE alerts SET store_id = ?"), legacy); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM outbox"); err != nil {
		t.Fatal(err)
	}
	if r := f.run(outboxWindow...); r.code != exitOK {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	if got := slack.received(); len(got) != 1 {
		t.Errorf("the rerun alerted again: %v", texts(got[1:]))
	}
	var left int
	if err := db.Get(&left, db.Rebind("SELECT count(*) FROM alerts WHERE store_id = ?"), legacy); err != nil || left != 0 {
		t.Errorf("%d alerts left under the legacy store id (%v)", left, err)
	}
}

// identityStoreID is the store_id a run reports for the store at dsn and
// its query: its identity, however the DSN is spelled.
func identityStoreID(t *testing.T, dsn, query string) string {
	t.Helper()
	st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, dsn), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return report.StoreID(id + " " + query)
}
