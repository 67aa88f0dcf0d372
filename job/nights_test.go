package job

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The nights below run job.Run, whole, several nights in a row over one
// history (SQLite or PostgreSQL), one SQLite store and one fake Slack,
// reached through the real slack-go client by webhook or bot token, with
// Slack misbehaving on chosen nights: what the channel holds at the end
// is what the promises are about.

// The three days every night checks, and the two that lose clicks.
const (
	nightFrom = "2026-11-24"
	nightTo   = "2026-11-26"
	lossDay   = "2026-11-25" // loses clicks from the first night
	laterDay  = "2026-11-26" // loses clicks from the second night, when a test says so
)

// nightWorld is one workspace's Elido, store, history and Slack, over
// which a test runs nights.
type nightWorld struct {
	t         *testing.T
	tr        transport
	elido     *elidotest.Server
	clicks    []elidotest.Click
	store     *sqlx.DB // the store's file, to lose and repair clicks
	storeDSN  string
	history   string // HISTORY_DSN
	slack     *fakeSlack
	night     int
	badKey    bool   // Elido refuses the run's key tonight
	from, to  string // the window tonight; "": nightFrom to nightTo
	unstored  bool   // the report location refuses tonight's report
	storeDown bool   // the store cannot be opened tonight
	probe     bool   // the run probes its store, history and report location first, as the binary's does
	logs      bytes.Buffer
	slackLogs bytes.Buffer
}

// newNightWorld starts a world of 20 clicks a day on each of the window's
// days, every one in the store but those of lossDay's first three hours.
func newNightWorld(t *testing.T, tr transport, historyBackend string) *nightWorld {
	t.Helper()
	w := &nightWorld{t: t, tr: tr, slack: newFakeSlack(t)}
	for _, d := range []string{nightFrom, "2026-11-25", nightTo} {
		start, _ := time.Parse(time.DateOnly, d)
		for i := range 20 {
			w.clicks = append(w.clicks, elidotest.Click{TS: start.Add(time.Duration(i) * time.Hour), LinkID: "lnk_a", CountryCode: "PL"})
		}
	}
	w.elido = elidotest.NewServer("48213", "key", w.clicks)
	t.Cleanup(w.elido.Close)
	w.storeDSN = sqliteStore(t, w.clicks)
	db, err := sqlx.Open("sqlite", strings.TrimPrefix(w.storeDSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w.store = db
	w.lose(lossDay)
	switch historyBackend {
	case "sqlite":
		w.history = "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	case "postgres":
		_, w.history = pgtest.New(t)
	}
	migratedHistory(t, w.history)
	return w
}

// lose removes day's clicks of its first three hours from the store.
func (w *nightWorld) lose(day string) {
	w.t.Helper()
	start, _ := time.Parse(time.DateOnly, day)
	if _, err := w.store.Exec(`DELETE FROM clicks WHERE ts >= ? AND ts < ?`,
		start.Format("2006-01-02T15:04:05.000Z"), start.Add(3*time.Hour).Format("2006-01-02T15:04:05.000Z")); err != nil {
		w.t.Fatal(err)
	}
}

// repair puts back the clicks of day the store lost.
func (w *nightWorld) repair(day string) {
	w.t.Helper()
	w.lose(day) // none twice
	start, _ := time.Parse(time.DateOnly, day)
	for _, c := range w.clicks {
		if !c.TS.Before(start) && c.TS.Before(start.Add(3*time.Hour)) {
			if _, err := w.store.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)`,
				c.TS.UTC().Format("2006-01-02T15:04:05.000Z"), c.LinkID, c.CountryCode); err != nil {
				w.t.Fatal(err)
			}
		}
	}
}

// run runs the next night in ctx, with Slack's calls bounded by a second,
// and returns its Outcome.
func (w *nightWorld) run(ctx context.Context) Outcome {
	w.t.Helper()
	w.night++
	key := "key"
	if w.badKey {
		key = "revoked"
	}
	client, query := testClient(w.t, w.elido.URL(), key, "48213")
	cfg := w.tr.cfg(w.slack)
	if w.tr.name == "bot" {
		cfg.Channel = testChannelID // read back by its ID
	}
	cfg.Logger = slog.New(slog.NewTextHandler(&w.slackLogs, nil))
	sleeps := &slacktest.Sleeps{}
	nt, err := alert.New(cfg, alert.WithCallTimeout(time.Second), alert.WithClock(time.Now, sleeps.Sleep))
	if err != nil {
		w.t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC).AddDate(0, 0, w.night-1)
	from, to := nightFrom, nightTo
	if w.from != "" {
		from, to = w.from, w.to
	}
	window, err := reconcile.NewWindow(reconcile.WindowSpec{From: from, To: to, MaxDays: 10}, time.UTC, now)
	if err != nil {
		w.t.Fatal(err)
	}
	o := Options{Window: window, WorkspaceID: "48213", RunKey: fmt.Sprintf("night%d", w.night), Query: query,
		Store: dbtest.Parsed(w.t, store.ParseDSN, w.storeDSN), History: dbtest.Parsed(w.t, history.ParseDSN, w.history),
		Settle: 2 * time.Hour, Timeout: time.Minute, ReportDir: filepath.Join(w.t.TempDir(), "reports"),
		LegacyStoreID: "st_as_store_dsn_spells_it"}
	if w.storeDown {
		o.Store = vanished(w.t, store.ParseDSN)
	}
	o.Probe = w.probe
	if w.unstored { // a folder under a file cannot be created
		file := filepath.Join(w.t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			w.t.Fatal(err)
		}
		o.ReportDir = filepath.Join(file, "reports")
	}
	fmt.Fprintf(&w.logs, "--- night %d\n", w.night)
	d := Deps{Elido: client, Notifier: nt, Log: slog.New(slog.NewTextHandler(&w.logs, nil)),
		Now: func() time.Time { return now }, Progress: noProgress{}}
	if w.probe { // the binary's run hands the probe its report location
		dest, err := storage.Open(ctx, o.ReportDir)
		if err != nil {
			w.t.Fatal(err)
		}
		defer dest.Close()
		d.Reports = dest
	}
	out, err := Run(ctx, o, d)
	if err != nil && !w.unstored {
		w.t.Fatalf("night %d: %v\n%s", w.night, err, w.logs.String())
	}
	return out
}

// posts returns what the channel holds: each message Slack took, its
// fallback text and its blocks.
func (w *nightWorld) posts() []string {
	var out []string
	for _, p := range w.slack.Posts() {
		text := p.Text
		for _, b := range p.Blocks {
			text += "\n" + string(b)
		}
		out = append(out, text)
	}
	return out
}

// with returns the posts that hold every one of words.
func (w *nightWorld) with(words ...string) []string {
	var out []string
	for _, p := range w.posts() {
		all := true
		for _, word := range words {
			all = all && strings.Contains(p, word)
		}
		if all {
			out = append(out, p)
		}
	}
	return out
}

// gap and healed are how a message shows date as a gap, and as healed.
func gap(date string) string    { return "*" + date + "* missing" }
func healed(date string) string { return "*" + date + "* healed" }

// marked reports whether the post p is marked as a possible repeat.
func marked(p string) bool { return strings.Contains(p, "Possible repeat") }

// postPath is where the world's transport posts a new message.
func (w *nightWorld) postPath() string {
	if w.tr.name == "bot" {
		return "/api/chat.postMessage"
	}
	return testHookPath
}

// loseAnswer makes Slack take the next post (counted from the posts
// already in the channel) and never answer it: the poster's call times
// out.
func (w *nightWorld) loseAnswer() {
	next := len(w.slack.Posts())
	w.slack.SetHook(func(i int) bool { return i == next })
}

// stopDuring makes Slack take the next post and, before answering it,
// cancel the run (SIGTERM as cmd delivers it): the run ends between the
// post and its record.
func (w *nightWorld) stopDuring(cancel context.CancelFunc) {
	next := len(w.slack.Posts())
	var once sync.Once
	w.slack.SetHook(func(i int) bool {
		if i != next {
			return false
		}
		once.Do(cancel)
		return true
	})
}

// runStopped runs a night that is stopped (SIGTERM) as Slack takes its
// first post, then lets Slack answer again.
func (w *nightWorld) runStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w.stopDuring(cancel)
	w.run(ctx)
	w.slack.SetHook(nil)
}

func (w *nightWorld) report(t *testing.T) {
	t.Helper()
	t.Logf("channel:\n%s", strings.Join(w.posts(), "\n---\n"))
	t.Logf("runs:\n%s", w.logs.String())
}

// eachNightWorld runs test for each transport and history backend.
func eachNightWorld(t *testing.T, test func(t *testing.T, w *nightWorld)) {
	for _, tr := range transports {
		for _, backend := range []string{"sqlite", "postgres"} {
			t.Run(tr.name+"_"+backend, func(t *testing.T) {
				w := newNightWorld(t, tr, backend)
				t.Cleanup(func() {
					if t.Failed() {
						w.report(t)
					}
				})
				test(t, w)
			})
		}
	}
}

// Night 1 alerts the loss of lossDay and never hears Slack's answer; night
// 2 finds a new loss on laterDay and Slack answers 503 all night; night 3
// Slack works. laterDay reached the channel on no night: night 3 must
// alert it (marked as a possible repeat with a webhook, whose second
// night's post may have arrived for all it knows), and lossDay is shown
// at most twice by a webhook, once by a bot token.
func TestNightsRefusedRepeatCarryingANewDay(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		w.loseAnswer()
		w.run(t.Context())
		w.slack.SetHook(nil)

		w.lose(laterDay)
		w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusServiceUnavailable, Always: true})
		w.run(t.Context())
		w.slack.Clear(w.postPath())

		w.run(t.Context())
		w.run(t.Context()) // a fourth, clean night adds nothing

		told := w.with(gap(laterDay))
		if len(told) != 1 {
			t.Fatalf("%s was alerted %d times, want once: it never reached the channel before night 3", laterDay, len(told))
		}
		if w.tr.name == "webhook" && !marked(told[0]) {
			t.Errorf("webhook: night 3's alert of %s is not marked as a possible repeat (night 2's post may have arrived)", laterDay)
		}
		if w.tr.name == "bot" && marked(told[0]) {
			t.Errorf("bot: night 3's alert is marked as a repeat, but night 2's post was looked for and is not there")
		}
		shown := w.with(gap(lossDay))
		switch {
		case w.tr.name == "webhook" && len(shown) > 2:
			t.Errorf("webhook: %s shown %d times, want at most twice", lossDay, len(shown))
		case w.tr.name == "webhook" && len(shown) == 2 && (marked(shown[0]) || !marked(shown[1])):
			t.Errorf("webhook: %s shown twice, the second not marked as a possible repeat", lossDay)
		}
		if got := len(w.posts()); w.tr.name == "bot" && got != 2 {
			t.Errorf("bot: %d messages in the channel, want 2 (night 1's alert, night 3's)", got)
		}
	})
}

// Night 1 alerts the loss of lossDay and never hears Slack's answer; the
// store is repaired before night 2. The channel may show the gap: it must
// be told healed, once, marked as a possible repeat where the alert was
// never confirmed (webhook); a bot token finds its alert and edits it.
func TestNightsUnconfirmedAlertWhoseDayHeals(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		w.loseAnswer()
		w.run(t.Context())
		w.slack.SetHook(nil)

		w.repair(lossDay)
		w.run(t.Context())
		w.run(t.Context())

		healed := w.with(healed(lossDay))
		switch w.tr.name {
		case "webhook":
			if len(healed) != 1 || !marked(healed[0]) {
				t.Errorf("webhook: %d heals of %s, want one, marked as a possible repeat: %q", len(healed), lossDay, healed)
			}
		case "bot":
			ups := w.slack.Updates()
			if len(ups) != 1 || !strings.Contains(ups[0].Body, "healed") || len(healed) != 0 {
				t.Errorf("bot: %d edits, %d heal posts; want the alert edited to say %s healed, once", len(ups), len(healed), lossDay)
			}
		}
		if got := len(w.with(gap(lossDay))); got != 1 {
			t.Errorf("%s alerted %d times, want once", lossDay, got)
		}
	})
}

// The same with the alert refused (503 to a bot, whose post is then looked
// for and not found: it never arrived) or told twice without an answer
// (webhook): nothing of a refused post was told, and a heal is told of
// what may be in the channel only.
func TestNightsRefusedAlertWhoseDayHeals(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		if w.tr.name == "webhook" {
			// Refused outright: the webhook answers 400 to the message and
			// to its plain-text fallback.
			w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusBadRequest})
			w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusBadRequest})
		} else {
			w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusServiceUnavailable})
		}
		w.run(t.Context())
		w.repair(lossDay)
		w.run(t.Context())
		if got := w.posts(); len(got) != 0 {
			t.Errorf("%d messages for a gap the channel never showed, want none: %q", len(got), got)
		}
	})
}

// Night 1 cannot read Elido (a revoked key): its notice is told. Night 2
// reads everything again, and the run is stopped (SIGTERM) as Slack takes
// its "checking again", before its answer is recorded. Night 3 must not
// repeat the recovery unmarked: a bot token finds it in the channel and
// posts nothing; a webhook posts it once more, marked as a possible
// repeat; night 4 posts nothing.
func TestNightsRecoveryStoppedBetweenPostAndRecord(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		w.repair(lossDay) // no gap: the notices alone
		w.badKey = true
		w.run(t.Context())
		w.badKey = false

		w.runStopped(t)

		w.run(t.Context())
		w.run(t.Context())

		notices := w.with("could not check workspace")
		recoveries := w.with("checks workspace 48213 again")
		if len(notices) != 1 {
			t.Errorf("%d notices, want 1", len(notices))
		}
		switch w.tr.name {
		case "bot":
			if len(recoveries) != 1 {
				t.Errorf("bot: %d recoveries, want exactly 1", len(recoveries))
			}
		case "webhook":
			if len(recoveries) != 2 || marked(recoveries[0]) || !marked(recoveries[1]) {
				t.Errorf("webhook: %d recoveries, want the one stopped and one more, marked as a possible repeat", len(recoveries))
			}
		}
	})
}

// Night 1 cannot read Elido and is stopped as Slack takes its notice;
// night 2 still cannot: the notice is not repeated unmarked (a bot finds
// it; a webhook tells it once more, marked). Night 3 reads everything
// and tells the recovery, once.
func TestNightsNoticeStoppedBetweenPostAndRecord(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		w.repair(lossDay)
		w.badKey = true
		w.runStopped(t)
		w.run(t.Context())
		w.run(t.Context())
		w.badKey = false
		w.run(t.Context())
		w.run(t.Context())

		notices := w.with("could not check workspace")
		recoveries := w.with("checks workspace 48213 again")
		switch w.tr.name {
		case "bot":
			if len(notices) != 1 {
				t.Errorf("bot: %d notices, want exactly 1", len(notices))
			}
		case "webhook":
			if len(notices) != 2 || marked(notices[0]) || !marked(notices[1]) {
				t.Errorf("webhook: %d notices, want the one stopped and one more, marked as a possible repeat", len(notices))
			}
		}
		if len(recoveries) != 1 {
			t.Errorf("%d recoveries, want 1", len(recoveries))
		}
	})
}

// Night 1 alerts the loss of lossDay (night 1b: Slack's answer lost).
// From night 2 the window has moved on past lossDay, which is repaired:
// the run re-checks the open alerted days before its window and tells the
// heal, once (marked as a possible repeat where the alert was never
// confirmed); a bot edits its alert.
func TestNightsDayHealedAfterItLeftTheWindow(t *testing.T) {
	for _, answered := range []bool{true, false} {
		name := "answered"
		if !answered {
			name = "answer_lost"
		}
		t.Run(name, func(t *testing.T) {
			eachNightWorld(t, func(t *testing.T, w *nightWorld) {
				if !answered {
					w.loseAnswer()
				}
				w.run(t.Context())
				w.slack.SetHook(nil)

				w.from, w.to = "2026-11-26", "2026-11-27" // lossDay has left the window
				w.run(t.Context())                        // still a gap: nothing
				w.repair(lossDay)
				w.run(t.Context())
				w.run(t.Context())

				heals := w.with(healed(lossDay))
				switch {
				case w.tr.name == "bot": // found in the channel when its answer was lost
					ups := w.slack.Updates()
					if len(ups) != 1 || !strings.Contains(ups[0].Body, "healed") || len(heals) != 0 {
						t.Errorf("bot: %d edits, %d heal posts; want the alert edited to say %s healed, once", len(ups), len(heals), lossDay)
					}
				case len(heals) != 1:
					t.Errorf("%d heals of %s, want one", len(heals), lossDay)
				case marked(heals[0]) == answered:
					t.Errorf("the heal is marked as a possible repeat: %v; want it marked only when the alert was never confirmed", marked(heals[0]))
				}
				if got := len(w.with(gap(lossDay))); got != 1 {
					t.Errorf("%s alerted %d times, want once", lossDay, got)
				}
			})
		})
	}
}

// recoveryStoppedThenAgain runs three nights of w without a gap: the
// failure fail turns on (night 1), off with the run stopped as Slack takes
// its recovery (night 2), and on again (night 3).
func recoveryStoppedThenAgain(t *testing.T, w *nightWorld, fail *bool) {
	w.repair(lossDay)
	*fail = true
	w.run(t.Context())
	*fail = false

	w.runStopped(t)

	*fail = true
	w.run(t.Context())
}

// Night 1 cannot store its report (no gap: its notice says so). Night 2
// stores it, and is stopped as Slack takes its "reports stored again".
// Night 3 cannot store its report again: the channel must hear it, not
// take the unrecorded recovery for unsaid and stay quiet.
func TestNightsRecoveryStoppedThenTheFailureReturns(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		recoveryStoppedThenAgain(t, w, &w.unstored)
		notices := w.with("could not store the report")
		if len(notices) != 2 {
			t.Errorf("%d notices that the report was not stored, want 2: night 3's is not heard", len(notices))
		}
		if got := len(w.with("stores the reports of workspace 48213 again")); got != 1 {
			t.Errorf("%d recoveries, want the one stopped", got)
		}
	})
}

// A recovery stopped mid-post (SIGTERM) on a night the store was back,
// then the store gone again: the third night's notice is heard. The
// stopped recovery is kept under the store's identity, which a night that
// cannot ask its store did not settle before it read its notice, and the
// notice of the first night then looked as if it stood (the fleet
// simulation, seed 2 on PostgreSQL, workspace east).
func TestNightsRecoveryStoppedThenTheStoreGoesAgain(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		recoveryStoppedThenAgain(t, w, &w.storeDown)
		if notices := w.with("could not check workspace"); len(notices) != 2 {
			t.Errorf("%d notices that the store could not be read, want 2: night 3's is not heard\n%s", len(notices), strings.Join(w.posts(), "\n---\n"))
		}
		if got := len(w.with("Checking again")); got != 1 {
			t.Errorf("%d recoveries, want the one stopped", got)
		}
	})
}

// The same with the probe, as the binary runs: night 3's report location
// refused before anything is read (exit 2). That night named the store by
// its DSN's spelling alone, so the stopped recovery, pending under the
// store's identity, was never settled and night 1's notice looked as if it
// stood: a silent night (the long simulation, seed 1024, webhook,
// PostgreSQL, night 97).
func TestNightsRecoveryStoppedThenTheProbeFailsAgain(t *testing.T) {
	eachNightWorld(t, func(t *testing.T, w *nightWorld) {
		w.probe = true
		recoveryStoppedThenAgain(t, w, &w.unstored)
		if notices := w.with("could not store the report"); len(notices) != 2 {
			t.Errorf("%d notices that the report was not stored, want 2: night 3's is not heard\n%s", len(notices), strings.Join(w.posts(), "\n---\n"))
		}
		if got := len(w.with("stores the reports of workspace 48213 again")); got != 1 {
			t.Errorf("%d recoveries, want the one stopped", got)
		}
	})
}

// channel returns the channel as a reader sees it at the end: each post
// in order, with the text of its last edit (a bot's chat.update) instead
// of its own.
func (w *nightWorld) channel() []string {
	edited := map[string]string{}
	for _, u := range w.slack.Updates() {
		form, err := url.ParseQuery(u.Body)
		if err != nil {
			w.t.Fatal(err)
		}
		edited[u.TS] = form.Get("text") + "\n" + form.Get("blocks")
	}
	var out []string
	for i, p := range w.slack.Posts() {
		if b, ok := edited[p.TS]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, w.posts()[i])
	}
	return out
}

// lastWord returns what the last message of the channel to name date as a
// gap or as healed says of it: "gap", "healed" or "" (none names it).
func lastWord(channel []string, date string) string {
	word := ""
	for _, m := range channel {
		g := strings.Contains(m, gap(date)) || strings.Contains(m, "*"+date+"* still") // an edit keeps it "still missing"
		h := strings.Contains(m, healed(date))
		switch {
		case g && !h:
			word = "gap"
		case h && !g:
			word = "healed"
		}
	}
	return word
}

// Seeded runs of nights with Slack failing in every way it can (its
// answer lost, 503, the run stopped mid-post) and the store losing and
// regaining days, then two clean nights: after them, the channel's last
// word on each day is what the day is, and a webhook never posted the
// same heal or recovery more than twice.
func TestNightsSeeded(t *testing.T) {
	// Seed 30 found a webhook's heal answered 503 twice taken as told,
	// though Slack said both times it had not posted it.
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 30}
	if raceEnabled {
		// Under -race a taste (and seed 30, which found a bug): .ci/run
		// runs every seed without -race, beside the simulation.
		seeds = []uint64{1, 30}
	}
	for _, seed := range seeds {
		for _, tr := range transports {
			t.Run(fmt.Sprintf("%s_seed%d", tr.name, seed), func(t *testing.T) {
				w := newNightWorld(t, tr, "sqlite")
				t.Cleanup(func() {
					if t.Failed() {
						w.report(t)
					}
				})
				rng := rand.New(rand.NewPCG(seed, 38))
				gaps := map[string]bool{lossDay: true, laterDay: false}
				for range 8 {
					day := []string{lossDay, laterDay}[rng.IntN(2)]
					switch rng.IntN(3) {
					case 0:
						w.lose(day)
						gaps[day] = true
					case 1:
						w.repair(day)
						gaps[day] = false
					}
					w.badKey = rng.IntN(5) == 0
					ctx, cancel := context.WithCancel(t.Context())
					switch rng.IntN(5) {
					case 0:
						w.loseAnswer()
					case 1:
						w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusServiceUnavailable, Always: true})
					case 2:
						w.stopDuring(cancel)
					}
					w.run(ctx)
					cancel()
					w.slack.SetHook(nil)
					w.slack.Clear(w.postPath()) // a fault is tonight's only
				}
				w.badKey = false
				w.run(t.Context())
				w.run(t.Context())
				if tr.name == "webhook" {
					// Each heal follows a gap shown, each recovery a notice:
					// told at most twice (the second marked).
					for day := range gaps {
						if h, g := len(w.with(healed(day))), len(w.with(gap(day))); h > 2*g {
							t.Errorf("%s told healed %d times after %d alerts", day, h, g)
						}
					}
					if r, n := len(w.with("checks workspace 48213 again")), len(w.with("could not check workspace")); r > 2*n {
						t.Errorf("%d recoveries after %d notices", r, n)
					}
				}
				channel := w.channel()
				for day, isGap := range gaps {
					want := map[bool]string{true: "gap", false: "healed"}[isGap]
					got := lastWord(channel, day)
					if got != want && !(got == "" && !isGap) {
						t.Errorf("the channel's last word on %s is %q, want %q", day, got, want)
					}
				}
			})
		}
	}
}

// A webhook that answers 500 once has said it did not post: the run posts
// again at once, and the night is heard (a bot's 500 may have posted: it
// is settled by reading the channel back on the next night).
func TestNightsWebhook500OnceIsHeardTheSameNight(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			w := newNightWorld(t, webhook, backend)
			w.slack.Fail(w.postPath(), slacktest.Fault{Status: http.StatusInternalServerError})
			out := w.run(t.Context())
			if out.Code == ExitIncomplete {
				t.Errorf("exit %d after one 500: the night failed", out.Code)
			}
			if got := w.with(gap(lossDay)); len(got) != 1 || marked(got[0]) {
				t.Errorf("%d alerts of %s the same night, want 1, not marked", len(got), lossDay)
			}
			w.run(t.Context())
			if got := len(w.posts()); got != 1 {
				t.Errorf("%d messages after a second night, want the 1 alert", got)
			}
		})
	}
}
