package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

func writeFleet(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fleet.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every mistake of a fleet file is listed at once, with its line and
// what to fix.
func TestFleetFileMistakesAreListedTogether(t *testing.T) {
	p := writeFleet(t, `# two brands
RECON_TZ = UTC
[acme]
ELIDO_WORKSPACE_ID = 1
ELIDO_API_KEY_FILE = /s/acme
ELIDO_API_KEY_FIEL = /s/typo
RECON_FLEET_FILE = /other
[Acme Corp]
ELIDO_WORKSPACE_ID = 2
[acme]
ELIDO_WORKSPACE_ID = 3
[no-id]
RECON_TZ = Europe/Warsaw
RECON_TZ = Europe/Paris
[broken
[repair-eu]
ELIDO_WORKSPACE_ID = 4
`)
	_, err := LoadFleet(p)
	if err == nil {
		t.Fatal("a fleet file with mistakes was taken")
	}
	for _, want := range []string{
		":2: \"RECON_TZ = UTC\" comes before any [name]",
		":6: workspace \"acme\": ELIDO_API_KEY_FIEL is not a clickrecon variable",
		":7: RECON_FLEET_FILE is the fleet's own",
		":8: workspace name \"Acme Corp\": use lower-case letters",
		":10: workspace \"acme\" is also at line 3",
		":14: workspace \"no-id\" sets RECON_TZ twice",
		":15: \"[broken\": a workspace starts with [name] alone on its line",
		":12: workspace \"no-id\" has no ELIDO_WORKSPACE_ID",
		":16: workspace name \"repair-eu\": a folder named repair-... is a repair plan's",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

// An entry's variables are read over the shared ones; its secret, set
// either way, hides the shared one's other way; its reports go under the
// shared folder, in a folder of its name, unless it says where.
func TestFleetEntryEnvironment(t *testing.T) {
	p := writeFleet(t, `
[acme]
ELIDO_WORKSPACE_ID = 1
ELIDO_API_KEY_FILE = /s/acme-key
RECON_TZ = Europe/Warsaw

[brand-b]
ELIDO_WORKSPACE_ID = 2
STORE_DSN = sqlite:/b.db
RECON_REPORT_DIR = s3://bucket/b?region=eu-west-1
`)
	fl, err := LoadFleet(p)
	if err != nil {
		t.Fatal(err)
	}
	shared := envconfig.MapLookuper(map[string]string{"ELIDO_API_KEY": "shared-key", "STORE_DSN_FILE": "/s/shared-dsn",
		"RECON_TZ": "UTC", "RECON_REPORT_DIR": "s3://bucket/nightly?region=eu-west-1", "RECON_DAYS": "5"})
	a, _ := fl.Entry("acme")
	b, _ := fl.At(1, "2")
	for _, tt := range []struct {
		e        Entry
		key, val string
		found    bool
	}{
		{a, "ELIDO_WORKSPACE_ID", "1", true},
		{a, "ELIDO_API_KEY_FILE", "/s/acme-key", true},
		{a, "ELIDO_API_KEY", "", false}, // the entry's file hides the shared key
		{a, "STORE_DSN_FILE", "/s/shared-dsn", true},
		{a, "RECON_TZ", "Europe/Warsaw", true},
		{a, "RECON_DAYS", "5", true},
		{a, "RECON_REPORT_DIR", "s3://bucket/nightly/acme?region=eu-west-1", true},
		{b, "STORE_DSN", "sqlite:/b.db", true},
		{b, "STORE_DSN_FILE", "", false}, // the entry's DSN hides the shared file
		{b, "ELIDO_API_KEY", "shared-key", true},
		{b, "RECON_REPORT_DIR", "s3://bucket/b?region=eu-west-1", true},
	} {
		v, found := tt.e.Env(shared).Lookup(tt.key)
		if v != tt.val || found != tt.found {
			t.Errorf("%s: %s = %q (%v), want %q (%v)", tt.e.Name, tt.key, v, found, tt.val, tt.found)
		}
	}
	if _, err := fl.Entry("nope"); err == nil || !strings.Contains(err.Error(), "acme, brand-b") {
		t.Errorf("an unknown name: %v, want the names there are", err)
	}
	if _, err := fl.At(2, ""); err == nil || !strings.Contains(err.Error(), "0 to 1") {
		t.Errorf("index 2 of 2: %v", err)
	}
	if _, err := fl.At(0, "3"); err == nil || !strings.Contains(err.Error(), "set completions to 2") {
		t.Errorf("a Job of 3 completions over 2 workspaces: %v", err)
	}
}

// benchFleet writes a fleet file of n workspaces, each with its own
// workspace, key, store and zone, as a deployment's would be.
func benchFleet(b *testing.B, n int, yaml bool) string {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("# a benchmark's fleet\n")
	if yaml {
		sb.WriteString("workspaces:\n")
	}
	zones := []string{"Europe/Warsaw", "America/New_York", "Asia/Tokyo", "UTC"}
	for i := range n {
		dsn := fmt.Sprintf("postgres://recon@db-%d.internal:5432/clicks?sslmode=require", i%7)
		if yaml {
			fmt.Fprintf(&sb, "  - name: client-%04d\n    workspace_id: \"%d\"\n    ELIDO_API_KEY: sk_live_bench_%08d\n    STORE_DSN: %s\n    tz: %s\n",
				i, 40000+i, i, dsn, zones[i%len(zones)])
			continue
		}
		fmt.Fprintf(&sb, "\n[client-%04d]\nELIDO_WORKSPACE_ID = %d\nELIDO_API_KEY = sk_live_bench_%08d\n", i, 40000+i, i)
		fmt.Fprintf(&sb, "STORE_DSN = %s\nRECON_TZ = %s\n", dsn, zones[i%len(zones)])
	}
	p := filepath.Join(b.TempDir(), "fleet.conf")
	if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkFleetLoad loads a fleet file and validates every workspace's
// configuration offline, as run --workspace and check --offline read
// theirs: the file's checks, then each entry's variables over the shared
// ones read and checked as a run's ("file/": the file's checks alone).
// Compare the sizes' ratio, not their times.
func BenchmarkFleetLoad(b *testing.B) {
	shared := envconfig.MapLookuper(map[string]string{
		"RECON_REPORT_DIR": "s3://reports/nightly?region=eu-central-1",
		"ELIDO_RATE_LIMIT": "600",
	})
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 1000} {
		p := benchFleet(b, n, false)
		b.Run(fmt.Sprintf("yaml/entries=%d", n), func(b *testing.B) {
			y := benchFleet(b, n, true)
			for b.Loop() {
				if _, err := LoadFleet(y); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("file/entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := LoadFleet(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				fl, err := LoadFleet(p)
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range fl.Entries {
					c, err := Load(context.Background(), e.Env(shared))
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := c.ValidateRun(now); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
