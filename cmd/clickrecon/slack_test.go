package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// fakeWebhook is slacktest's Slack, posted to through its webhook.
type fakeWebhook struct{ *slacktest.Server }

// posted returns the "text" fallback of each message posted.
func (f *fakeWebhook) posted() []string { return f.Texts() }

const webhookPath = slacktest.WebhookPath

func withSlack(t *testing.T, f *fixture, historyBackend string) *fakeWebhook {
	t.Helper()
	hook := &fakeWebhook{slacktest.New(t)}
	f.env["SLACK_WEBHOOK_URL"] = hook.WebhookURL()
	switch historyBackend {
	case "sqlite":
		f.env["HISTORY_DSN"] = "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	case "postgres":
		_, dsn := pgtest.New(t)
		f.env["HISTORY_DSN"] = dsn
	}
	if historyBackend != "" {
		if _, err := history.Migrate(t.Context(), dbtest.Parsed(t, history.ParseMigrateDSN, f.env["HISTORY_DSN"])); err != nil {
			t.Fatal(err)
		}
	}
	return hook
}

// A gap is posted once; a rerun with history posts nothing; once the store
// is repaired the alert is healed.
func TestSlackOncePerGapThenHealed(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			hook := withSlack(t, f, backend)
			window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}

			if r := f.run(window...); r.code != exitOK {
				t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
			}
			if got := hook.posted(); len(got) != 1 || !strings.Contains(got[0], "2026-10-25") {
				t.Fatalf("first run posted %q, want one alert naming 2026-10-25", got)
			}
			if r := f.run(window...); r.code != exitOK {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			if got := hook.posted(); len(got) != 1 {
				t.Fatalf("the rerun posted again: %q", got[1:])
			}

			// The store is repaired in place: both days now match.
			refill(t, f.env["STORE_DSN"], api)
			if r := f.run(window...); r.code != exitOK {
				t.Fatalf("after repair: exit %d\n%s", r.code, r.stderr)
			}
			got := hook.posted()
			if len(got) != 2 || !strings.Contains(strings.ToLower(got[1]), "healed") {
				t.Fatalf("after repair posted %q, want one healed message", got[1:])
			}
			if r := f.run(window...); r.code != exitOK || len(hook.posted()) != 2 {
				t.Errorf("a run after the heal posted again: %q", hook.posted()[2:])
			}
		})
	}
}

// Slack failing for good never loses the report: exit 3, report on disk,
// and neither the webhook URL nor its secret path in any output.
func TestSlackFailureKeepsTheReport(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "")
	hook.SetStatus(http.StatusInternalServerError)
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	if got := f.readReport(); got.Status != "discrepancies" {
		t.Errorf("report status %q", got.Status)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, "SECRETPART") || strings.Contains(out, webhookPath) {
			t.Errorf("the webhook URL appears in the output:\n%s", out)
		}
	}
	if !strings.Contains(r.stderr, "slack failed") {
		t.Errorf("stderr does not say Slack failed:\n%s", r.stderr)
	}
}

// --dry-run writes the report but posts nothing and records no history,
// so a later real run still alerts.
func TestDryRunPostsNothing(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "sqlite")
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--dry-run"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := hook.posted(); len(got) != 0 {
		t.Fatalf("--dry-run posted %q", got)
	}
	f.readReport()
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26"); r.code != exitOK || len(hook.posted()) != 1 {
		t.Errorf("the real run after a dry run: exit %d, %d posts; want 0 and 1", r.code, len(hook.posted()))
	}
}

// A history that cannot be used means no gap alert is posted (it could
// repeat an alert), only the notice that says the history is down; the
// report is written. Unreachable: exit 3, retry. (Never migrated is found
// before the run reads anything: TestRunProbesTheStoreBeforeElido.)
func TestHistoryUnusablePostsNothing(t *testing.T) {
	for _, tt := range []struct {
		name, dsn string
		want      int
	}{
		{"unreachable", "postgres://recon@127.0.0.1:1/history?sslmode=disable&connect_timeout=1", exitIncomplete},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			hook := withSlack(t, f, "")
			f.env["HISTORY_DSN"] = tt.dsn
			r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
			if r.code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.want, r.stderr)
			}
			if got := hook.posted(); len(got) != 1 || strings.Contains(got[0], "Click gaps") || !strings.Contains(got[0], "HISTORY_DSN") {
				t.Errorf("posted %q without a history, want only the notice naming HISTORY_DSN", got)
			}
			if f.readReport().Status != "discrepancies" {
				t.Error("the report was not written")
			}
		})
	}
}

// A Slack webhook that no longer exists is a configuration mistake: exit
// 2, the report on disk.
func TestSlackWebhookGoneExits2(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "")
	hook.SetStatus(http.StatusNotFound)
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitUsage || !strings.Contains(r.stderr, "SLACK_WEBHOOK_URL") {
		t.Fatalf("exit %d, want 2 naming SLACK_WEBHOOK_URL\n%s", r.code, r.stderr)
	}
	if f.readReport().Status != "discrepancies" {
		t.Error("the report was not written")
	}
}

// Two stores of one workspace (a replica and a warehouse, say) share one
// history: each keeps its own alerts, so the complete one never "heals"
// the other's gap, and neither repeats itself.
func TestTwoStoresShareAHistory(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "sqlite")
	lossy, complete := f.env["STORE_DSN"], buildStore(t, "sqlite", api)
	window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}
	for i, dsn := range []string{lossy, complete, lossy, complete} {
		f.env["STORE_DSN"] = dsn
		if r := f.run(window...); r.code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	got := hook.posted()
	if len(got) != 1 || strings.Contains(strings.ToLower(got[0]), "healed") {
		t.Errorf("posted %q, want the lossy store's one alert and no heal", got)
	}
}

// refill replaces every click of an SQLite events store, in place.
func refill(t *testing.T, dsn string, clicks []elidotest.Click) {
	t.Helper()
	db, err := sqlx.Open("sqlite", strings.TrimPrefix(dsn, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM clicks`); err != nil {
		t.Fatal(err)
	}
	for _, c := range clicks {
		if _, err := db.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)`,
			c.TS.UTC().Format("2006-01-02T15:04:05.000Z"), c.LinkID, c.CountryCode); err != nil {
			t.Fatal(err)
		}
	}
}
