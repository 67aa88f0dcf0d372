package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sethvargo/go-envconfig"
)

// A YAML fleet file in each of its shapes (a list under workspaces:, a
// list alone, a mapping of names) reads as the same entries as the
// [name] sections: variables by name, in lower case without their
// prefix, secrets as files, settings by name.
func TestFleetFileInYAML(t *testing.T) {
	ini := `
[acme]
ELIDO_WORKSPACE_ID = 48213
ELIDO_API_KEY_FILE = /s/acme-key
STORE_DSN_FILE = /s/acme-dsn

[brand-b]
ELIDO_WORKSPACE_ID = 51770
ELIDO_API_KEY_FILE = /s/b-key
STORE_DSN_FILE = /s/b-dsn
SLACK_BOT_TOKEN_FILE = /s/b-bot
SLACK_CHANNEL = C0123
RECON_TZ = America/New_York
STORE_PRESET = daily
RECON_FAIL_ON = warn
ELIDO_RATE_LIMIT = 120
`
	want, err := LoadFleet(writeFleet(t, ini))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"workspaces list": `
# the agency's clients
workspaces:
  - name: acme
    workspace_id: "48213"
    secrets:
      api_key: /s/acme-key
      store_dsn: /s/acme-dsn
  - name: brand-b
    workspace_id: 51770
    tz: America/New_York
    preset: daily
    fail_on: warn
    secrets:
      elido_api_key: /s/b-key
      STORE_DSN_FILE: /s/b-dsn
      slack_bot_token_file: /s/b-bot
      slack_channel: C0123
    settings:
      ELIDO_RATE_LIMIT: 120
`,
		"a list alone, variables by name": `
- name: acme
  ELIDO_WORKSPACE_ID: "48213"
  ELIDO_API_KEY_FILE: /s/acme-key
  store_dsn_file: /s/acme-dsn
- name: brand-b
  ELIDO_WORKSPACE_ID: "51770"
  api_key_file: /s/b-key
  STORE_DSN_FILE: /s/b-dsn
  SLACK_BOT_TOKEN_FILE: /s/b-bot
  SLACK_CHANNEL: C0123
  env: {RECON_TZ: America/New_York, STORE_PRESET: daily, RECON_FAIL_ON: warn, rate_limit: 120}
`,
		"a mapping of names": `
workspaces:
  acme:
    workspace_id: 48213
    secrets: {api_key: /s/acme-key, store_dsn: /s/acme-dsn}
  brand-b:
    workspace_id: 51770
    secrets: {api_key: /s/b-key, store_dsn: /s/b-dsn, slack_bot_token: /s/b-bot}
    slack_channel: C0123
    recon_tz: America/New_York
    store_preset: daily
    fail_on: warn
    rate_limit: 120
`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := LoadFleet(writeFleet(t, text))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Entries, got.Entries, cmpopts.IgnoreFields(Entry{}, "Line")); diff != "" {
				t.Errorf("entries (-[name] sections +YAML):\n%s", diff)
			}
		})
	}
}

// Every mistake of a YAML fleet file is listed at once, with its line:
// a key that is no variable or could be two, a secret clickrecon does not
// read, a workspace without a name or a workspace id, a name twice, a
// value that is a list, a file that is not a list of workspaces.
func TestFleetFileInYAMLMistakesAreListedTogether(t *testing.T) {
	_, err := LoadFleet(writeFleet(t, `workspaces:
  - name: acme
    workspace_id: 1
    api_key_fiel: /s/typo
    secrets:
      slack_webhook: /s/hook
  - workspace_id: 2
  - name: acme
    workspace_id: 3
    tz: [Europe/Warsaw]
  - name: Acme Corp
  - name: eu
    workspace_id: 5
    RECON_FLEET_FILE: /other
    RECON_WORKSPACE: eu
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`:4: workspace "acme": api_key_fiel is not a clickrecon variable`,
		`:6: workspace "acme": secrets: slack_webhook is not a secret of clickrecon's`,
		`:7: a workspace has no name`,
		`:8: workspace "acme" is also at line 2`,
		`:10: workspace "acme": RECON_TZ: a value is a string, a number or true/false, not a list`,
		`:11: workspace name "Acme Corp": use lower-case letters`,
		`:11: workspace "Acme Corp" has no ELIDO_WORKSPACE_ID`,
		`:14: RECON_FLEET_FILE is the fleet's own`,
		`:15: RECON_WORKSPACE is the fleet's own`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if _, err := LoadFleet(writeFleet(t, "workspaces: 3\n")); err == nil || !strings.Contains(err.Error(), "a list of workspaces") {
		t.Errorf("a file that is no list: %v", err)
	}
	if _, err := LoadFleet(writeFleet(t, "- name: a\n  workspace_id: 1\n  limit: 3\n")); err == nil || !strings.Contains(err.Error(), "limit is not a clickrecon variable") {
		t.Errorf("an unknown key: %v", err)
	}
}

// The fleet files docs/contract.md shows load as they are.
func TestFleetFilesOfTheContractLoad(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "### Many workspaces")
	for _, lang := range []string{"yaml", "ini"} {
		_, block, ok := strings.Cut(section, "```"+lang+"\n")
		block, _, _ = strings.Cut(block, "```")
		if !ok || block == "" {
			t.Fatalf("docs/contract.md shows no %s fleet file under Many workspaces", lang)
		}
		fl, err := LoadFleet(writeFleet(t, dedent(block)))
		if err != nil || len(fl.Entries) == 0 || fl.Entries[0].Name != "acme" || fl.Entries[0].Vars["ELIDO_WORKSPACE_ID"] != "48213" {
			t.Errorf("the %s example: %+v, %v", lang, fl.Entries, err)
		}
	}
}

// dedent removes the indentation of a block's first line from each line.
func dedent(block string) string {
	lines := strings.Split(block, "\n")
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	for i, l := range lines {
		if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

// report_prefix puts a workspace's reports in a folder of that name
// under the shared RECON_REPORT_DIR instead of its own name; a prefix
// that is no folder's name is refused with its line.
func TestFleetReportPrefix(t *testing.T) {
	fl, err := LoadFleet(writeFleet(t, "- name: acme\n  workspace_id: 1\n  report_prefix: clients-acme\n- name: b\n  workspace_id: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	shared := envconfig.MapLookuper(map[string]string{"RECON_REPORT_DIR": "s3://bucket/nightly?region=eu-west-1"})
	for i, want := range []string{"s3://bucket/nightly/clients-acme?region=eu-west-1", "s3://bucket/nightly/b?region=eu-west-1"} {
		if got, _ := fl.Entries[i].Env(shared).Lookup("RECON_REPORT_DIR"); got != want {
			t.Errorf("%s: RECON_REPORT_DIR %q, want %q", fl.Entries[i].Name, got, want)
		}
	}
	_, err = LoadFleet(writeFleet(t, "- name: acme\n  workspace_id: 1\n  report_prefix: a/b\n"))
	if err == nil || !strings.Contains(err.Error(), `:1: workspace "acme": report_prefix "a/b"`) {
		t.Errorf("a prefix of two folders: %v", err)
	}
}
