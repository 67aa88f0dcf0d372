package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each variable is judged on its own: a secret file that cannot be read,
// or a secret given twice, is told once, in words that are true, and
// never makes another variable "not set"; every real mistake is listed in
// the same run, before anything is asked of Elido.
func TestConfigErrorsAreIndependentAndTrue(t *testing.T) {
	secrets := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(secrets, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o440); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(secrets, "nonexistent")
	tests := []struct {
		name string
		env  func(f *fixture) map[string]string // added to the fixture's
		drop []string                           // removed from it
		want []string                           // each line of stderr, in full or as a prefix
	}{
		{
			name: "webhook_file_missing",
			env:  func(*fixture) map[string]string { return map[string]string{"SLACK_WEBHOOK_URL_FILE": missing} },
			want: []string{"clickrecon: SLACK_WEBHOOK_URL_FILE=" + missing + ": cannot read the secret file: no such file or directory"},
		},
		{
			name: "api_key_twice",
			env: func(*fixture) map[string]string {
				return map[string]string{"ELIDO_API_KEY_FILE": file("elido-api-key", testKey)}
			},
			want: []string{"clickrecon: both ELIDO_API_KEY and ELIDO_API_KEY_FILE are set: unset one of them"},
		},
		{
			// Set and unreadable: one mistake, said once.
			name: "store_dsn_twice_file_unreadable",
			env:  func(*fixture) map[string]string { return map[string]string{"STORE_DSN_FILE": missing} },
			want: []string{"clickrecon: both STORE_DSN and STORE_DSN_FILE are set: unset one of them"},
		},
		{
			// The bot token deployment with the webhook's file still
			// named: what is wrong is that file, and only that.
			name: "bot_token_with_webhook_file_named",
			env: func(*fixture) map[string]string {
				return map[string]string{
					"SLACK_WEBHOOK_URL_FILE": missing,
					"SLACK_BOT_TOKEN_FILE":   file("slack-bot-token", "xoxb-1-2-abc"),
					"SLACK_CHANNEL":          "C0123ABCD",
				}
			},
			want: []string{"clickrecon: SLACK_WEBHOOK_URL_FILE=" + missing + ": cannot read the secret file"},
		},
		{
			// Several real mistakes: every one, and nothing else.
			name: "every_mistake_at_once",
			env: func(f *fixture) map[string]string {
				return map[string]string{
					"SLACK_WEBHOOK_URL_FILE": missing,
					"HISTORY_DSN_FILE":       missing,
					"ELIDO_API_KEY_FILE":     file("key2", testKey),
					"STORE_DSN_FILE":         file("store-dsn", f.env["STORE_DSN"]),
					"RECON_DAYS":             "three",
				}
			},
			drop: []string{"STORE_DSN"},
			want: []string{
				"clickrecon: 4 configuration errors:",
				"  - both ELIDO_API_KEY and ELIDO_API_KEY_FILE are set: unset one of them",
				"  - HISTORY_DSN_FILE=" + missing + ": cannot read the secret file",
				"  - SLACK_WEBHOOK_URL_FILE=" + missing + ": cannot read the secret file",
				`  - RECON_DAYS="three" is not a whole number`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", nil, nil)
			for k, v := range tt.env(f) {
				f.env[k] = v
			}
			for _, k := range tt.drop {
				delete(f.env, k)
			}
			r := f.run("--date", "2026-11-20")
			if r.code != exitUsage {
				t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(tt.want), r.stderr)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d is %q, want %q", i+1, lines[i], want)
				}
			}
			if strings.Contains(r.stderr, "not set") || strings.Contains(r.stderr, testKey) {
				t.Errorf("stderr says a variable given is not set, or shows the key:\n%s", r.stderr)
			}
			if got := f.elido.Requests(); len(got) != 0 {
				t.Errorf("Elido was asked %v", got)
			}
		})
	}
}
