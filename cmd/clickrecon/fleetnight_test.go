package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// A fleet in YAML, run as the Indexed Job runs it (each index once, two
// nights): acme (a gap, a webhook of its own), brand-b (its key revoked),
// c-bot (a gap, a bot token and channel of its own) and d-down (its store
// down), over one shared history. Each healthy workspace's gap is alerted
// once, in its own channel; each broken one hears its own notice once and
// exits as it would alone; no workspace's night changes another's, and
// the second night tells nothing new. Every message names its fleet
// workspace first.
func TestFleetNightsAsTheIndexedJobRunsThem(t *testing.T) {
	api := dstWindowClicks()
	acme := uniqueFixture(t, api, lossAndDuplicate(api))
	b := uniqueFixture(t, api, api)
	b.elido.SetFaults(elidotest.Fault{Kind: elidotest.Unauthorized})
	c := uniqueFixture(t, api, lossAndDuplicate(api))
	d := uniqueFixture(t, api, api)
	slack := map[string]*slacktest.Server{}
	for _, name := range []string{"acme", "brand-b", "c-bot", "d-down"} {
		slack[name] = slacktest.New(t)
	}
	dir := t.TempDir()
	secret := func(name, value string) string { return fileIn(t, dir, name, value+"\n") }
	entry := func(name string, f *fixture) string {
		return fmt.Sprintf("  - name: %s\n    workspace_id: %q\n    api_base: %s\n    secrets:\n      api_key: %s\n",
			name, f.env["ELIDO_WORKSPACE_ID"], f.env["ELIDO_API_BASE"], secret(name+"-key", f.env["ELIDO_API_KEY"]))
	}
	fleet := "workspaces:\n" +
		entry("acme", acme) + fmt.Sprintf("      store_dsn: %s\n      slack_webhook_url: %s\n",
		secret("acme-dsn", acme.env["STORE_DSN"]), secret("acme-hook", slack["acme"].WebhookURL())) +
		entry("brand-b", b) + fmt.Sprintf("      store_dsn: %s\n      slack_webhook_url: %s\n",
		secret("b-dsn", b.env["STORE_DSN"]), secret("b-hook", slack["brand-b"].WebhookURL())) +
		entry("c-bot", c) + fmt.Sprintf("      store_dsn: %s\n      slack_bot_token: %s\n    channel: %s\n    slack_api_url: %s\n    tz: Europe/Warsaw\n",
		secret("c-dsn", c.env["STORE_DSN"]), secret("c-bot", "xoxb-fleet-test"), slacktest.ChannelID, slack["c-bot"].APIURL()) +
		entry("d-down", d) + fmt.Sprintf("      store_dsn: %s\n      slack_webhook_url: %s\n",
		secret("d-dsn", "postgres://reader@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=2"), secret("d-hook", slack["d-down"].WebhookURL()))
	f := &fleetFixture{t: t, reportDir: filepath.Join(t.TempDir(), "reports"), acme: acme, b: b}
	f.env = map[string]string{
		"RECON_FLEET_FILE": secret("fleet.yaml", fleet),
		"RECON_FLEET_SIZE": "4",
		"ELIDO_RATE_LIMIT": "6000",
		"RECON_TZ":         "Europe/Warsaw",
		"RECON_REPORT_DIR": f.reportDir,
		"HISTORY_DSN":      "sqlite:" + filepath.Join(t.TempDir(), "history.db"),
		"LOG_FORMAT":       "json",
	}
	if r := f.cmd("migrate"); r.code != exitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	want := map[string]int{"acme": exitOK, "brand-b": exitUsage, "c-bot": exitOK, "d-down": exitIncomplete}
	names := []string{"acme", "brand-b", "c-bot", "d-down"}
	for night := 1; night <= 2; night++ {
		for i, name := range names {
			r := f.cmd(append([]string{"run", fmt.Sprintf("--workspace-index=%d", i)}, window...)...)
			if r.code != want[name] {
				t.Errorf("night %d, %s: exit %d, want %d\n%s", night, name, r.code, want[name], r.stderr)
			}
		}
		for _, name := range names {
			texts := slack[name].Texts()
			if len(texts) != 1 {
				t.Errorf("night %d: %s's channel holds %d messages, want its one: %q", night, name, len(texts), texts)
				continue
			}
			if !strings.HasPrefix(texts[0], "["+name+"] ") {
				t.Errorf("%s's message does not name its fleet workspace first: %s", name, texts[0])
			}
			switch name {
			case "acme", "c-bot":
				if !strings.Contains(texts[0], "2026-10-25") {
					t.Errorf("%s's message is not its gap alert: %s", name, texts[0])
				}
			case "brand-b":
				if !strings.Contains(texts[0], "ELIDO_API_KEY") {
					t.Errorf("brand-b's notice does not name ELIDO_API_KEY: %s", texts[0])
				}
			case "d-down":
				if !strings.Contains(texts[0], "could not") || !strings.Contains(texts[0], "STORE_DSN") {
					t.Errorf("d-down's notice does not say its store: %s", texts[0])
				}
			}
		}
	}
	for _, name := range []string{"acme", "c-bot"} {
		reps := reportsOf(t, filepath.Join(f.reportDir, name))
		if len(reps) != 1 || reps[0].Coverage.Unverifiable != 0 || reps[0].Coverage.Missing+reps[0].Coverage.Surplus == 0 {
			t.Errorf("%s's reports: %+v, want one with its gap and no day unverifiable", name, reps)
		}
	}
	noSecrets(t, append(slack["brand-b"].Texts(), slack["d-down"].Texts()...))

	// The trend of one workspace, named as in the fleet: its nights alone.
	r := f.cmd("trend", "--workspace", "c-bot", "--from", "2026-10-24", "--to", "2026-10-26", "--format", "csv", "--by", "day")
	if r.code != exitOK || !strings.Contains(r.stdout, c.env["ELIDO_WORKSPACE_ID"]+",") || strings.Contains(r.stdout, acme.env["ELIDO_WORKSPACE_ID"]+",") {
		t.Errorf("trend --workspace c-bot: exit %d, want c-bot's workspace %s alone:\n%s%s", r.code, c.env["ELIDO_WORKSPACE_ID"], r.stdout, r.stderr)
	}
}
