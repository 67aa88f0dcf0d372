package envload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"
)

type testConfig struct {
	Key    string        `env:"API_KEY"`
	Days   int           `env:"DAYS, default=3"`
	Pct    float64       `env:"PCT, default=0"`
	Settle time.Duration `env:"SETTLE, default=2h"`
	DryRun bool          `env:"DRY_RUN, default=false"`
	Mode   string        `env:"MODE, required"`
}

func TestLoadNamesTheVariableAndAGoodValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"whole_number", map[string]string{"MODE": "x", "DAYS": "abc"}, `DAYS="abc" is not a whole number (e.g. DAYS=7)`},
		{"percent_sign", map[string]string{"MODE": "x", "PCT": "5%"}, `PCT="5%" is not a plain number, no % sign (e.g. PCT=0.5)`},
		{"duration", map[string]string{"MODE": "x", "SETTLE": "2"}, `SETTLE="2" is not a duration (e.g. SETTLE=2h or SETTLE=30m)`},
		{"bool", map[string]string{"MODE": "x", "DRY_RUN": "yes"}, `DRY_RUN="yes" is not true or false (e.g. DRY_RUN=true)`},
		{"both_value_and_file", map[string]string{"MODE": "x", "API_KEY": "k", "API_KEY_FILE": "/nonexistent"}, "both API_KEY and API_KEY_FILE are set: unset one of them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c testConfig
			err := Load(t.Context(), envconfig.MapLookuper(tt.env), &c, []string{"API_KEY"})
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadReadsASecretFromItsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// API_KEY set to "" must not hide API_KEY_FILE.
	env := envconfig.MapLookuper(map[string]string{"MODE": "m", "API_KEY": "", "API_KEY_FILE": path, "DAYS": "7"})
	var got testConfig
	if err := Load(t.Context(), env, &got, []string{"API_KEY"}); err != nil {
		t.Fatal(err)
	}
	want := testConfig{Key: "s3cret", Days: 7, Settle: 2 * time.Hour, Mode: "m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// One secret that cannot be read leaves the others read, and every bad
// variable is told at once, each once.
func TestLoadJudgesEachVariableOnItsOwn(t *testing.T) {
	t.Parallel()
	type cfg struct {
		Key   string `env:"API_KEY"`
		DSN   string `env:"DSN"`
		Hook  string `env:"HOOK"`
		Token string `env:"TOKEN"`
		Days  int    `env:"DAYS, default=3"`
		Zone  string `env:"ZONE, default=UTC"`
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("k3y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envconfig.MapLookuper(map[string]string{
		"API_KEY_FILE": keyFile,
		"DSN":          "postgres://db/x",
		"DSN_FILE":     filepath.Join(dir, "nonexistent"), // both set, and unreadable
		"HOOK_FILE":    filepath.Join(dir, "nonexistent"),
		"TOKEN":        "t",
		"TOKEN_FILE":   keyFile,
		"DAYS":         "abc",
		"ZONE":         "Europe/Warsaw",
	})
	var got cfg
	err := Load(t.Context(), env, &got, []string{"API_KEY", "DSN", "HOOK", "TOKEN"})
	want := cfg{Key: "k3y", Days: 3, Zone: "Europe/Warsaw"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	wantLines := []string{
		"both DSN and DSN_FILE are set: unset one of them",
		"HOOK_FILE=" + filepath.Join(dir, "nonexistent") + ": cannot read the secret file: no such file or directory",
		"both TOKEN and TOKEN_FILE are set: unset one of them",
		`DAYS="abc" is not a whole number (e.g. DAYS=7)`,
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"DSN": true, "HOOK": true, "TOKEN": true, "DAYS": true}, Unread(err)); diff != "" {
		t.Errorf("Unread (-want +got):\n%s", diff)
	}
}
