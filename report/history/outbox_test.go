package history

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
)

var scope = Scope{WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw"}

// sampleIntent is an alert of two gaps about to be posted.
func sampleIntent(runKey string) Intent {
	a := Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
		Transport: TransportBot, From: "2026-11-24", To: "2026-11-26", RunKey: runKey}
	b := a
	b.Date, b.Status, b.API, b.Local, b.Delta = "2026-11-26", "surplus", 900, 907, 7
	return Intent{Scope: scope, RunKey: runKey, Kind: KindAlert, Transport: TransportBot,
		From: "2026-11-24", To: "2026-11-26", Alerts: []Alert{a, b}}
}

// ignoreTimes leaves out what the history sets itself.
var ignoreTimes = cmpopts.IgnoreFields(Intent{}, "Created", "Updated")

func TestIntentMarkedPostedCountsAsAlerted(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		in := sampleIntent("rk1")
		id, err := h.Intend(ctx, in)
		if err != nil {
			t.Fatal(err)
		}

		// Pending: the next run sees it, and nothing is alerted yet.
		pending, err := h.Pending(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.ID, want.State = id, StatePending
		if diff := cmp.Diff([]Intent{want}, pending, ignoreTimes); diff != "" {
			t.Errorf("Pending (-want +got):\n%s", diff)
		}
		if len(pending) == 1 && (pending[0].Created == "" || !strings.HasSuffix(pending[0].Created, "Z")) {
			t.Errorf("Created = %q, want an RFC 3339 UTC instant", pending[0].Created)
		}
		if got, err := h.Alerts(ctx, scope, "2026-11-20", "2026-11-30"); err != nil || len(got) != 0 {
			t.Errorf("Alerts while the post is pending = %v, %v; want none", got, err)
		}

		if err := h.MarkPosted(ctx, id, "C0ALERTS", "1700000000.000100"); err != nil {
			t.Fatal(err)
		}
		got, err := h.Alerts(ctx, scope, "2026-11-20", "2026-11-30")
		if err != nil {
			t.Fatal(err)
		}
		wantAlerts := map[string]Alert{}
		for _, a := range in.Alerts {
			a.Channel, a.TS = "C0ALERTS", "1700000000.000100"
			wantAlerts[a.Date] = a
		}
		if diff := cmp.Diff(wantAlerts, got); diff != "" {
			t.Errorf("Alerts after MarkPosted (-want +got):\n%s", diff)
		}
		if n := count(t, h, "slack_messages"); n != 1 {
			t.Errorf("slack_messages = %d, want 1", n)
		}
		if pending, err := h.Pending(ctx, scope); err != nil || len(pending) != 0 {
			t.Errorf("Pending after MarkPosted = %v, %v; want none", pending, err)
		}

		// A retried MarkPosted (its first answer was lost) changes nothing;
		// another message for the same post is refused.
		if err := h.MarkPosted(ctx, id, "C0ALERTS", "1700000000.000100"); err != nil {
			t.Errorf("MarkPosted again with the same message: %v", err)
		}
		if n := count(t, h, "slack_messages"); n != 1 {
			t.Errorf("slack_messages after a repeated MarkPosted = %d, want 1", n)
		}
		if err := h.MarkPosted(ctx, id, "C0ALERTS", "1700000000.999999"); !errors.Is(err, ErrResolved) {
			t.Errorf("MarkPosted with another ts: %v, want ErrResolved", err)
		}
		if err := h.Abandon(ctx, id); !errors.Is(err, ErrResolved) {
			t.Errorf("Abandon of a posted post: %v, want ErrResolved", err)
		}
		if err := h.MarkPosted(ctx, id+1000, "C", "1"); err == nil {
			t.Error("MarkPosted of an unknown id: got nil")
		}
	})
}

func TestIntendRefusesWhileAPostIsPending(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		first, err := h.Intend(ctx, sampleIntent("rk1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Intend(ctx, sampleIntent("rk2")); !errors.Is(err, ErrPending) {
			t.Fatalf("second Intend while the first is pending: %v, want ErrPending", err)
		}

		// Another store, or another zone, has its own posts.
		other := sampleIntent("rk2")
		other.StoreID = "st_b"
		if _, err := h.Intend(ctx, other); err != nil {
			t.Errorf("Intend for another store: %v", err)
		}

		// A webhook cannot read back: the post is given up and repeated
		// once, marked as such.
		if err := h.Abandon(ctx, first); err != nil {
			t.Fatal(err)
		}
		if err := h.Abandon(ctx, first); err != nil {
			t.Errorf("second Abandon: %v, want nil", err)
		}
		if err := h.MarkPosted(ctx, first, "", ""); !errors.Is(err, ErrResolved) {
			t.Errorf("MarkPosted of an abandoned post: %v, want ErrResolved", err)
		}
		repeat := sampleIntent("rk2")
		repeat.Transport, repeat.RepeatOf = TransportWebhook, first
		id, err := h.Intend(ctx, repeat)
		if err != nil {
			t.Fatalf("Intend after the pending post was abandoned: %v", err)
		}
		pending, err := h.Pending(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != 1 || pending[0].ID != id || pending[0].RepeatOf != first || pending[0].Transport != TransportWebhook {
			t.Errorf("Pending = %+v, want only %d repeating %d by webhook", pending, id, first)
		}
		if got, err := h.Alerts(ctx, scope, "2026-11-20", "2026-11-30"); err != nil || len(got) != 0 {
			t.Errorf("Alerts after an abandoned post = %v, %v; want none", got, err)
		}
	})
}

func TestIntendRefusesAnIncompleteIntent(t *testing.T) {
	h := migrated(t, "sqlite:"+t.TempDir()+"/history.db")
	in := sampleIntent("rk1")
	in.From = ""
	if _, err := h.Intend(context.Background(), in); err == nil {
		t.Error("Intend without a window: got nil")
	}
}

// A history the job can read but not write (a role that lost its INSERT
// grant, a read-only file) refuses the intent, so nothing may be posted:
// it could not record the post and every later run would repeat it.
func TestIntendFailsOnAHistoryItCannotWrite(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, ro *History) {
		t.Helper()
		if _, err := ro.Alerts(ctx, scope, "2026-11-20", "2026-11-30"); err != nil {
			t.Fatalf("the history is not readable: %v", err)
		}
		if _, err := ro.Pending(ctx, scope); err != nil {
			t.Fatalf("Pending on a readable history: %v", err)
		}
		id, err := ro.Intend(ctx, sampleIntent("rk1"))
		if err == nil {
			t.Fatalf("Intend on a history that cannot be written returned id %d and no error: a post would follow", id)
		}
		if errors.Is(err, ErrPending) {
			t.Errorf("Intend: %v, must not be ErrPending", err)
		}
	}

	t.Run("sqlite", func(t *testing.T) {
		path := t.TempDir() + "/history.db"
		migrated(t, "sqlite:"+path)
		target, err := dsn.Parse("sqlite:"+path, dsn.Options{Mode: dsn.ReadOnly})
		if err != nil {
			t.Fatal(err)
		}
		ro, err := open(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		check(t, ro)
	})

	t.Run("postgres", func(t *testing.T) {
		admin, rawDSN := pgtest.New(t)
		migrated(t, rawDSN)
		var schema string
		if err := admin.GetContext(ctx, &schema, "SELECT current_schema()"); err != nil {
			t.Fatal(err)
		}
		role := fmt.Sprintf("clickrecon_ro_%016x", rand.Uint64())
		for _, stmt := range []string{
			"CREATE ROLE " + role + " LOGIN",
			"GRANT USAGE ON SCHEMA " + pq.QuoteIdentifier(schema) + " TO " + role,
			"GRANT SELECT ON ALL TABLES IN SCHEMA " + pq.QuoteIdentifier(schema) + " TO " + role,
		} {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		t.Cleanup(func() {
			for _, stmt := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
				if _, err := admin.Exec(stmt); err != nil {
					t.Errorf("%s: %v", stmt, err)
				}
			}
		})
		u, err := url.Parse(rawDSN)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		ro, err := Open(ctx, mustParse(t, u.String(), false))
		if err != nil {
			t.Fatalf("Open as a role that may only read: %v", err)
		}
		defer ro.Close()
		check(t, ro)
	})
}

// A history migrated by an earlier version, without the outbox, is
// refused by Open until migrate adds it, and keeps its rows.
func TestMigrateAddsTheOutboxToAnExistingHistory(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migratedUpTo(t, dsn, "002")
		// Two alerts as 001_history alone recorded them.
		for _, day := range []string{"2026-11-25", "2026-11-26"} {
			if _, err := h.db.ExecContext(ctx, h.db.Rebind(`INSERT INTO alerts (workspace_id, store_id, tz, day, status, severity,
				api_clicks, local_clicks, delta_clicks, transport, window_from, window_to, run_key)
				VALUES ('48213', 'st_a', 'Europe/Warsaw', ?, 'missing', 'warn', 1200, 1195, -5, 'webhook', '2026-11-24', '2026-11-26', 'rk0')`), day); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Open(ctx, mustParse(t, dsn, false)); !errors.Is(err, ErrNotMigrated) {
			t.Fatalf("Open without the outbox: %v, want ErrNotMigrated", err)
		}
		applied, err := Migrate(ctx, mustParse(t, dsn, true))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"002_outbox", "003_notices", "004_unknown_totals", "005_outbox_outcomes", "006_trend", "007_repaired", "008_outbox_sent", "009_store_ids"}, applied); diff != "" {
			t.Errorf("Migrate applied (-want +got):\n%s", diff)
		}
		h2, err := Open(ctx, mustParse(t, dsn, false))
		if err != nil {
			t.Fatal(err)
		}
		defer h2.Close()
		if got := count(t, h2, "alerts"); got != 2 {
			t.Errorf("alerts after the upgrade = %d, want the 2 kept", got)
		}
		if _, err := h2.Intend(ctx, sampleIntent("rk1")); err != nil {
			t.Errorf("Intend after the upgrade: %v", err)
		}
	})
}

// Alerts recorded under the store id of earlier versions (a hash of the
// DSN as written) move to the store's identity once, and are never merged
// into an identity the history already knows.
func TestAdoptStoreID(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migrated(t, dsn)
		legacy := Scope{WorkspaceID: "48213", StoreID: "st_legacy", TZ: "Europe/Warsaw"}
		in := sampleIntent("rk0")
		in.Scope = legacy
		id, err := h.Intend(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.MarkPosted(ctx, id, "C0ALERTS", "1.1"); err != nil {
			t.Fatal(err)
		}
		// Another workspace's rows under the same id stay.
		elsewhere := in
		elsewhere.WorkspaceID = "99999"
		if _, err := h.Intend(ctx, elsewhere); err != nil {
			t.Fatal(err)
		}

		moved, err := h.AdoptStoreID(ctx, "48213", "st_legacy", "pg:cluster-1/db-16384")
		if err != nil {
			t.Fatal(err)
		}
		if moved != 3 { // two alerts and one outbox row
			t.Errorf("AdoptStoreID moved %d rows, want 3", moved)
		}
		got, err := h.Alerts(ctx, Scope{WorkspaceID: "48213", StoreID: "pg:cluster-1/db-16384", TZ: "Europe/Warsaw"}, "2026-11-20", "2026-11-30")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Errorf("alerts under the new identity = %v, want the 2 adopted", got)
		}
		if left, _ := h.Alerts(ctx, Scope{WorkspaceID: "48213", StoreID: "st_legacy", TZ: "Europe/Warsaw"}, "2026-11-20", "2026-11-30"); len(left) != 0 {
			t.Errorf("alerts left under the legacy id: %v", left)
		}
		if p, err := h.Pending(ctx, Scope{WorkspaceID: "99999", StoreID: "st_legacy", TZ: "Europe/Warsaw"}); err != nil || len(p) != 1 {
			t.Errorf("another workspace's pending post = %v, %v; want it kept", p, err)
		}

		// Once adopted, nothing more moves, even if an old version writes
		// under the legacy id again.
		again := sampleIntent("rk9")
		again.Scope = legacy
		if _, err := h.Intend(ctx, again); err != nil {
			t.Fatal(err)
		}
		if moved, err := h.AdoptStoreID(ctx, "48213", "st_legacy", "pg:cluster-1/db-16384"); err != nil || moved != 0 {
			t.Errorf("second AdoptStoreID = %d, %v; want 0, nil", moved, err)
		}
		if moved, err := h.AdoptStoreID(ctx, "48213", "same", "same"); err != nil || moved != 0 {
			t.Errorf("AdoptStoreID of an id to itself = %d, %v", moved, err)
		}
	})
}

// A store's identity is remembered per workspace and DSN spelling, for the
// runs that cannot ask the store: the latest a run found.
func TestKnownStoreID(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migrated(t, dsn)
		if id, ok, err := h.KnownStoreID(ctx, "48213", "st_legacy"); err != nil || ok {
			t.Errorf("KnownStoreID before any run = %q, %v, %v; want none", id, ok, err)
		}
		for _, id := range []string{"st_first", "st_now"} { // the DSN pointed elsewhere since
			if _, err := h.AdoptStoreID(ctx, "48213", "st_legacy", id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.AdoptStoreID(ctx, "99999", "st_legacy", "st_theirs"); err != nil {
			t.Fatal(err)
		}
		if id, ok, err := h.KnownStoreID(ctx, "48213", "st_legacy"); err != nil || !ok || id != "st_now" {
			t.Errorf("KnownStoreID = %q, %v, %v; want st_now, the latest", id, ok, err)
		}
		if id, ok, err := h.KnownStoreID(ctx, "99999", "st_legacy"); err != nil || !ok || id != "st_theirs" {
			t.Errorf("KnownStoreID of another workspace = %q, %v, %v; want its own", id, ok, err)
		}
	})
}

// A post is marked sent as it is handed to Slack: Pending says so, and a
// post no longer pending cannot be marked (the run then posts nothing).
func TestMarkSent(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		id, err := h.Intend(ctx, sampleIntent("rk1"))
		if err != nil {
			t.Fatal(err)
		}
		sent := func() bool {
			t.Helper()
			p, err := h.Pending(ctx, scope)
			if err != nil || len(p) != 1 {
				t.Fatalf("Pending = %v, %v; want the one post", p, err)
			}
			return p[0].Sent
		}
		if sent() {
			t.Error("a post only recorded reads as sent")
		}
		if err := h.MarkSent(ctx, id); err != nil {
			t.Fatal(err)
		}
		if !sent() {
			t.Error("a post marked sent reads as not sent")
		}
		// A sent post may still be given up: Slack refused it.
		if err := h.Abandon(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := h.MarkSent(ctx, id); !errors.Is(err, ErrResolved) {
			t.Errorf("MarkSent of an abandoned post = %v, want ErrResolved", err)
		}
	})
}

// A history from before 008 keeps its pending posts as possibly sent: an
// earlier release may have posted them, so the next run settles them as
// it did (never gives them up unseen); abandoned ones stay unsent.
func TestMigrateOutboxSentKeepsPendingPostsAsMaybeSent(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migratedUpTo(t, dsn, "008")
		for _, state := range []string{"abandoned", "pending"} {
			if _, err := h.db.ExecContext(ctx, h.db.Rebind(`INSERT INTO outbox (workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to, alerts, state)
				VALUES ('48213', 'st_a', 'Europe/Warsaw', 'rk0', 'alert', 'webhook', '2026-11-24', '2026-11-26', '[]', ?)`), state); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Migrate(ctx, mustParse(t, dsn, true)); err != nil {
			t.Fatal(err)
		}
		h2, err := Open(ctx, mustParse(t, dsn, false))
		if err != nil {
			t.Fatal(err)
		}
		defer h2.Close()
		p, err := h2.Pending(ctx, scope)
		if err != nil || len(p) != 1 || !p[0].Sent {
			t.Errorf("Pending after migrating = %+v, %v; want the one pending post, as sent", p, err)
		}
		var sent int
		if err := h2.db.Get(&sent, "SELECT COUNT(*) FROM outbox WHERE sent_at IS NOT NULL"); err != nil || sent != 1 {
			t.Errorf("posts marked sent = %d, %v; want 1 (the abandoned one was never known sent)", sent, err)
		}
	})
}

// migratedUpTo returns a history on dsn with only the migrations before
// version applied, as an earlier version of clickrecon left it.
func migratedUpTo(t *testing.T, dsn, version string) *History {
	t.Helper()
	h := openUnmigrated(t, dsn)
	t.Cleanup(func() { h.Close() })
	ms, err := migrations(h.dialect)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Exec(h.q.migrationsTable); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version >= version {
			break
		}
		if _, err := h.db.Exec(m.sql); err != nil {
			t.Fatalf("apply %s: %v", m.version, err)
		}
		if _, err := h.db.Exec(h.q.migrationRecord, m.version); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// A history created by the migrations before 005 and holding rows of
// every table 005 changes (posts pending, posted and abandoned, one
// repeating another; messages; alerts; notices) migrates with every row
// kept, ids and states included; what was told counts as confirmed, and
// the new kinds and outcomes are taken.
func TestMigrateOutboxOutcomesKeepsEveryRow(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migratedUpTo(t, dsn, "005")
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := h.db.ExecContext(ctx, h.db.Rebind(q), args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for _, r := range []struct {
			state    string
			repeatOf any
		}{{"abandoned", nil}, {"posted", 1}, {"pending", nil}} {
			// ids are given by the table, 1, 2, 3 in a new database
			exec(`INSERT INTO outbox (workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to, alerts, repeat_of, state)
				VALUES ('48213', 'st_a', 'Europe/Warsaw', 'rk0', 'alert', 'webhook', '2026-11-24', '2026-11-26', '[]', ?, ?)`, r.repeatOf, r.state)
		}
		exec(`INSERT INTO slack_messages (run_key, workspace_id, tz, kind, action, transport) VALUES ('rk0', '48213', 'Europe/Warsaw', 'healed', 'posted', 'webhook')`)
		exec(`INSERT INTO alerts (workspace_id, store_id, tz, day, status, severity, api_clicks, local_clicks, delta_clicks, healed, transport, window_from, window_to, run_key)
			VALUES ('48213', 'st_a', 'Europe/Warsaw', '2026-11-25', 'missing', 'warn', 1200, 1195, -5, ?, 'webhook', '2026-11-24', '2026-11-26', 'rk0')`, false)
		exec(`INSERT INTO notices (workspace_id, store_id, fingerprint, reason, run_key, first_posted, last_posted)
			VALUES ('48213', 'st_a', 'elido:http_401', 'revoked', 'rk0', '2026-11-24T03:00:00Z', '2026-11-24T03:00:00Z')`)

		applied, err := Migrate(ctx, mustParse(t, dsn, true))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"005_outbox_outcomes", "006_trend", "007_repaired", "008_outbox_sent", "009_store_ids"}, applied); diff != "" {
			t.Errorf("Migrate applied (-want +got):\n%s", diff)
		}
		h2, err := Open(ctx, mustParse(t, dsn, false))
		if err != nil {
			t.Fatal(err)
		}
		defer h2.Close()
		type row struct {
			ID       int64  `db:"id"`
			State    string `db:"state"`
			RepeatOf int64  `db:"repeat_of"`
			Notice   string `db:"notice"`
		}
		var rows []row
		if err := h2.db.Select(&rows, "SELECT id, state, COALESCE(repeat_of, 0) AS repeat_of, notice FROM outbox ORDER BY id"); err != nil {
			t.Fatal(err)
		}
		want := []row{{1, "abandoned", 0, ""}, {2, "posted", 1, ""}, {3, "pending", 0, ""}}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("outbox after migrating (-want +got):\n%s", diff)
		}
		for table, want := range map[string]int{"slack_messages": 1, "alerts": 1, "notices": 1} {
			if got := count(t, h2, table); got != want {
				t.Errorf("%s = %d rows after migrating, want %d", table, got, want)
			}
		}
		got, err := h2.Alerts(ctx, scope, "2026-11-20", "2026-11-30")
		if err != nil || got["2026-11-25"].Unconfirmed != 0 || got["2026-11-25"].API != 1200 {
			t.Errorf("the alert after migrating = %+v, %v; want it kept, confirmed", got, err)
		}
		n, ok, err := h2.LastNotice(ctx, "48213", "st_a")
		if err != nil || !ok || n.Fingerprint != "elido:http_401" || n.Unconfirmed != 0 || !n.Open() {
			t.Errorf("the notice after migrating = %+v, %v, %v; want it kept, open, confirmed", n, ok, err)
		}
		// The post left pending still blocks another, and settles as an
		// answer lost; then a notice, a kind 005 lets in, is intended.
		if _, err := h2.Intend(ctx, sampleIntent("rk1")); !errors.Is(err, ErrPending) {
			t.Errorf("Intend beside the pending post: %v, want ErrPending", err)
		}
		if err := h2.MarkUnconfirmed(ctx, 3); err != nil {
			t.Fatal(err)
		}
		in := Intent{Scope: scope, RunKey: "rk1", Kind: KindNotice, Transport: TransportWebhook, From: "2026-11-24", To: "2026-11-26",
			Notice: &NoticeChange{Scopes: []string{"st_a"}, Fingerprint: "store:unavailable", Reason: "down", At: time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)}}
		id, err := h2.Intend(ctx, in)
		if err != nil {
			t.Fatalf("Intend a notice after migrating: %v", err)
		}
		if err := h2.MarkPosted(ctx, id, "", ""); err != nil {
			t.Fatal(err)
		}
	})
}

// A post settled as unconfirmed (its answer lost, a webhook) records what
// it told as told without an answer, counted per state: the same state
// told again without an answer counts twice, a state Slack accepted is
// confirmed and stays so, and a post Slack refused changes nothing.
func TestMarkUnconfirmedCountsLostAnswers(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		settle := func(runKey string, edit func(*Intent), outcome func(id int64) error) {
			t.Helper()
			in := sampleIntent(runKey)
			if edit != nil {
				edit(&in)
			}
			id, err := h.Intend(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if err := outcome(id); err != nil {
				t.Fatal(err)
			}
		}
		lost := func(id int64) error { return h.MarkUnconfirmed(ctx, id) }
		accepted := func(id int64) error { return h.MarkPosted(ctx, id, "", "") }
		refused := func(id int64) error { return h.Abandon(ctx, id) }
		unconfirmed := func() map[string]int {
			t.Helper()
			got, err := h.Alerts(ctx, scope, "2026-11-20", "2026-11-30")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			for d, a := range got {
				out[d] = a.Unconfirmed
			}
			return out
		}
		settle("rk1", nil, lost)
		if diff := cmp.Diff(map[string]int{"2026-11-25": 1, "2026-11-26": 1}, unconfirmed()); diff != "" {
			t.Errorf("after a lost answer (-want +got):\n%s", diff)
		}
		settle("rk2", nil, refused)
		if diff := cmp.Diff(map[string]int{"2026-11-25": 1, "2026-11-26": 1}, unconfirmed()); diff != "" {
			t.Errorf("after a refusal (-want +got):\n%s", diff)
		}
		// Told again without an answer, 2026-11-26 with new numbers.
		settle("rk3", func(in *Intent) { in.Alerts[1].Local = 906 }, lost)
		if diff := cmp.Diff(map[string]int{"2026-11-25": 2, "2026-11-26": 1}, unconfirmed()); diff != "" {
			t.Errorf("after a second lost answer (-want +got):\n%s", diff)
		}
		settle("rk4", func(in *Intent) { in.Alerts[1].Local = 906 }, accepted)
		settle("rk5", func(in *Intent) { in.Alerts[1].Local = 906 }, lost)
		if diff := cmp.Diff(map[string]int{"2026-11-25": 0, "2026-11-26": 0}, unconfirmed()); diff != "" {
			t.Errorf("once accepted, a lost answer of the same state (-want +got):\n%s", diff)
		}
		// Only a post Slack accepted is recorded as a message sent.
		if got := count(t, h, "slack_messages"); got != 1 {
			t.Errorf("slack_messages = %d, want the 1 accepted", got)
		}
		var states []string
		if err := h.db.Select(&states, "SELECT state FROM outbox ORDER BY id"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"unconfirmed", "abandoned", "unconfirmed", "posted", "unconfirmed"}, states); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	})
}

// A notice, and a recovery, go through the outbox: what they record in
// notices is written with their outcome, counting lost answers, and
// nothing of a refused one.
func TestNoticeThroughTheOutbox(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		post := func(runKey, kind string, c NoticeChange, outcome func(h *History, id int64) error) {
			t.Helper()
			in := Intent{Scope: NoticeScope("48213", "st_a"), RunKey: runKey, Kind: kind, Transport: TransportWebhook,
				From: "2026-11-24", To: "2026-11-26", Notice: &c}
			id, err := h.Intend(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if err := outcome(h, id); err != nil {
				t.Fatal(err)
			}
		}
		lost := func(h *History, id int64) error { return h.MarkUnconfirmed(ctx, id) }
		accepted := func(h *History, id int64) error { return h.MarkPosted(ctx, id, "", "") }
		refused := func(h *History, id int64) error { return h.Abandon(ctx, id) }
		last := func() Notice {
			t.Helper()
			n, _, err := h.LastNotice(ctx, "48213", "st_a")
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		told := NoticeChange{Scopes: []string{"st_a"}, Fingerprint: "elido:http_401", Reason: "revoked", At: at}
		post("rk1", KindNotice, told, refused)
		if _, ok, _ := h.LastNotice(ctx, "48213", "st_a"); ok {
			t.Fatal("a refused notice is recorded")
		}
		post("rk2", KindNotice, told, lost)
		if n := last(); !n.Open() || n.Unconfirmed != 1 || n.Fingerprint != "elido:http_401" {
			t.Errorf("after a lost notice: %+v, want it open, told once without an answer", n)
		}
		post("rk3", KindNotice, told, lost)
		if n := last(); n.Unconfirmed != 2 {
			t.Errorf("after a second lost notice: %+v, want it counted twice", n)
		}
		// A scope named twice (the legacy id may be the identity's) is
		// resolved once.
		recovery := NoticeChange{Scopes: []string{"st_a", "st_a"}, Resolve: true, At: at.Add(24 * time.Hour)}
		post("rk4", KindRecovery, recovery, lost)
		if n := last(); n.Open() || n.Unconfirmed != 1 {
			t.Errorf("after a lost recovery: %+v, want it resolved, told once without an answer", n)
		}
		post("rk5", KindRecovery, recovery, lost)
		if n := last(); n.Open() || n.Unconfirmed != 2 {
			t.Errorf("after a second lost recovery: %+v, want it counted twice", n)
		}
		post("rk6", KindRecovery, recovery, accepted)
		if n := last(); n.Open() || n.Unconfirmed != 0 || n.RunKey != "rk6" {
			t.Errorf("after an accepted recovery: %+v, want it resolved and confirmed", n)
		}
		post("rk7", KindNotice, told, accepted)
		if n := last(); !n.Open() || n.Unconfirmed != 0 {
			t.Errorf("after an accepted notice: %+v, want it open and confirmed", n)
		}
	})
}

// OpenDays lists the days told as gaps and not told healed, and those
// whose heal was told once without an answer, within the span asked.
func TestOpenDays(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		m := Message{RunKey: "rk0", WorkspaceID: scope.WorkspaceID, StoreID: scope.StoreID, TZ: scope.TZ,
			Kind: KindAlert, Action: ActionPosted, Transport: TransportWebhook}
		row := func(day string, healed bool) Alert {
			return Alert{Date: day, Status: "missing", Severity: "warn", API: 10, Local: 9, Delta: -1, Healed: healed,
				Transport: TransportWebhook, From: day, To: day, RunKey: "rk0"}
		}
		if err := h.SaveAlerts(ctx, m, []Alert{row("2026-10-01", false), row("2026-10-02", true), row("2026-10-20", false)}); err != nil {
			t.Fatal(err)
		}
		// A heal whose answer was lost: still open to a re-check.
		id, err := h.Intend(ctx, Intent{Scope: scope, RunKey: "rk1", Kind: KindHealed, Transport: TransportWebhook,
			From: "2026-10-03", To: "2026-10-03", Alerts: []Alert{row("2026-10-03", true)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.MarkUnconfirmed(ctx, id); err != nil {
			t.Fatal(err)
		}
		got, err := h.OpenDays(ctx, scope, "2026-09-01", "2026-10-19")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"2026-10-01", "2026-10-03"}, got); diff != "" {
			t.Errorf("OpenDays (-want +got):\n%s", diff)
		}
	})
}

// Every time the history records is the run's clock (WithClock), not the
// database server's: a post's days count as alerted when it was made, even
// when a later run settles its lost answer, and a heal when it was told.
func TestTimesAreTheRunsClock(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		migrated(t, dsn)
		now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		h, err := Open(ctx, mustParse(t, dsn, false), WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		posted := now
		id, err := h.Intend(ctx, sampleIntent("rk1"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.Pending(ctx, scope)
		if err != nil || len(p) != 1 {
			t.Fatalf("Pending = %v, %v; want the one post", p, err)
		}
		if want := posted.Format(time.RFC3339); p[0].Created != want {
			t.Errorf("the post's Created = %q, want the run's clock %s", p[0].Created, want)
		}
		if err := h.MarkSent(ctx, id); err != nil {
			t.Fatal(err)
		}
		// The next night's run settles it: its answer was lost.
		now = now.Add(24 * time.Hour)
		if err := h.MarkUnconfirmed(ctx, id); err != nil {
			t.Fatal(err)
		}
		// A night later, the first day is told healed.
		now = now.Add(24 * time.Hour)
		healed := now
		a := sampleIntent("rk3").Alerts[0]
		a.Healed, a.RunKey = true, "rk3"
		if err := h.SaveAlerts(ctx, Message{RunKey: "rk3", WorkspaceID: scope.WorkspaceID, StoreID: scope.StoreID, TZ: scope.TZ,
			Kind: KindAlert, Action: ActionPosted, Transport: TransportBot, Channel: "C1", TS: "1.2"}, []Alert{a}); err != nil {
			t.Fatal(err)
		}
		got, err := h.TrendAlerts(ctx, scope.WorkspaceID, reconcile.Date{Year: 2026, Month: 11, Day: 1}, reconcile.Date{Year: 2026, Month: 11, Day: 30})
		if err != nil {
			t.Fatal(err)
		}
		want := []AlertTimes{
			{WorkspaceID: scope.WorkspaceID, StoreID: scope.StoreID, TZ: scope.TZ, Day: "2026-11-25", Alerted: posted, Healed: healed},
			{WorkspaceID: scope.WorkspaceID, StoreID: scope.StoreID, TZ: scope.TZ, Day: "2026-11-26", Alerted: posted},
		}
		slices.SortFunc(got, func(a, b AlertTimes) int { return strings.Compare(a.Day, b.Day) })
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("TrendAlerts (-want +got):\n%s", diff)
		}
	})
}
