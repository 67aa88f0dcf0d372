package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

// check runs clickrecon check over the fixture's environment.
func (f *fixture) check(args ...string) result {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), append([]string{"check"}, args...), envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps())
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if strings.Contains(r.stdout+r.stderr, testKey) {
		f.t.Errorf("the API key appears in the output:\n%s%s", r.stdout, r.stderr)
	}
	return r
}

// lineOf returns the line of out about the dependency name.
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// check probes every dependency the configuration names, one line each,
// and touches nothing of the user's: no click is read, no report is
// written, nothing is posted, and the report folder holds what it held.
func TestCheckProbesEveryDependency(t *testing.T) {
	f := newFixture(t, "postgres", nil, nil)
	hist := filepath.Join(t.TempDir(), "history.db")
	f.env["HISTORY_DSN"] = "sqlite:" + hist
	if r := runWith(t.Context(), []string{"migrate"}, envconfig.MapLookuper(f.env), &bytes.Buffer{}, &bytes.Buffer{}, f.deps()); r != exitOK {
		t.Fatalf("migrate: exit %d", r)
	}
	slack := slacktest.New(t, slacktest.WithToken("xoxb-test"))
	f.env["SLACK_BOT_TOKEN"] = "xoxb-test"
	f.env["SLACK_CHANNEL"] = slacktest.ChannelID
	f.env["SLACK_API_URL"] = slack.APIURL()
	if err := os.MkdirAll(f.reportDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.reportDir, "someone-elses.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := f.check()
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"configuration", "store", "history", "reports", "slack", "elido"} {
		if l := lineOf(r.stdout, name); !strings.Contains(l, " ok: ") {
			t.Errorf("%s: line %q, want ok\n%s", name, l, r.stdout)
		}
	}
	if got := f.elido.Requests(); len(got) != 1 || got["summary"] != 1 {
		t.Errorf("Elido was asked %v, want one summary", got)
	}
	if len(slack.Posts()) != 0 {
		t.Errorf("check posted to Slack: %v", slack.Texts())
	}
	entries, _ := os.ReadDir(f.reportDir)
	if len(entries) != 1 || entries[0].Name() != "someone-elses.txt" {
		t.Errorf("the report folder holds %v after check, want what it held", entries)
	}

	// A webhook cannot be tested without posting: said, and not a failure.
	delete(f.env, "SLACK_BOT_TOKEN")
	delete(f.env, "SLACK_CHANNEL")
	delete(f.env, "SLACK_API_URL")
	f.env["SLACK_WEBHOOK_URL"] = slack.WebhookURL()
	r = f.check()
	if l := lineOf(r.stdout, "slack"); r.code != exitOK || !strings.Contains(l, "not checked") || strings.Contains(l, "SECRETPART") {
		t.Errorf("exit %d, slack line %q: want 0 and the webhook not checked", r.code, l)
	}
	if len(slack.Posts()) != 0 {
		t.Errorf("check posted to the webhook: %v", slack.Texts())
	}
}

// Each kind of failure is told on its dependency's line, with what to
// change; a mistake exits 2, a dependency out of reach 3.
func TestCheckTellsWhatToChange(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   func(f *fixture)
		code  int
		line  string
		wants []string
	}{
		{"key_revoked", func(f *fixture) { f.env["ELIDO_API_KEY"] = "sk_live_revoked" }, exitUsage, "elido", []string{"FAILED", "ELIDO_API_KEY"}},
		{"report_folder_unwritable", func(f *fixture) { f.env["RECON_REPORT_DIR"] = filepath.Join(file, "reports") }, exitUsage, "reports", []string{"FAILED", "RECON_REPORT_DIR"}},
		{"history_not_migrated", func(f *fixture) {
			_, dsn := pgtest.New(t)
			f.env["HISTORY_DSN"] = dsn
		}, exitUsage, "history", []string{"FAILED", "clickrecon migrate"}},
		{"slack_bot_not_in_channel", func(f *fixture) {
			s := slacktest.New(t)
			f.env["SLACK_BOT_TOKEN"], f.env["SLACK_CHANNEL"], f.env["SLACK_API_URL"] = "xoxb-test", "C0OTHER", s.APIURL()
		}, exitUsage, "slack", []string{"FAILED", "SLACK_CHANNEL", "invite the bot"}},
		{"elido_down", func(f *fixture) { f.elido.Close() }, exitIncomplete, "elido", []string{"UNREACHABLE"}},
		{"store_preset_wrong", func(f *fixture) { f.env["STORE_PRESET"] = "daily" }, exitUsage, "store", []string{"FAILED", "STORE_PRESET=daily does not fit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", nil, nil)
			tt.env(f)
			r := f.check()
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			l := lineOf(r.stdout, tt.line)
			for _, want := range tt.wants {
				if !strings.Contains(l, want) {
					t.Errorf("%s line %q lacks %q\n%s", tt.line, l, want, r.stdout)
				}
			}
		})
	}
}

// --offline reads the configuration and the files it names, and sends
// nothing anywhere.
func TestCheckOfflineSendsNothing(t *testing.T) {
	f := newFixture(t, "postgres", nil, nil)
	slack := slacktest.New(t)
	f.env["SLACK_BOT_TOKEN"], f.env["SLACK_CHANNEL"], f.env["SLACK_API_URL"] = "xoxb-test", slacktest.ChannelID, slack.APIURL()
	r := f.check("--offline")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := f.elido.Requests(); len(got) != 0 {
		t.Errorf("Elido was asked %v", got)
	}
	if got := slack.Requests("/api/auth.test"); len(got) != 0 {
		t.Errorf("Slack was asked %d times", len(got))
	}
	for _, name := range []string{"store", "slack", "elido"} {
		if l := lineOf(r.stdout, name); !strings.Contains(l, "not checked") {
			t.Errorf("%s line %q, want not checked", name, l)
		}
	}
	if l := lineOf(r.stdout, "reports"); !strings.Contains(l, " ok: ") {
		t.Errorf("reports line %q: a local folder is checked offline too", l)
	}
	// A mistake is still one.
	f.env["RECON_DAYS"] = "x"
	if r := f.check("--offline"); r.code != exitUsage || !strings.Contains(r.stderr, "RECON_DAYS") {
		t.Errorf("exit %d, stderr %q: want 2 naming RECON_DAYS", r.code, r.stderr)
	}
}

// A report folder that cannot be written is found before Elido is asked
// for anything: exit 2, naming RECON_REPORT_DIR, and no request sent.
func TestRunFindsAnUnwritableReportFolderFirst(t *testing.T) {
	f := newFixture(t, "sqlite", nil, nil)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.env["RECON_REPORT_DIR"] = filepath.Join(file, "reports")
	r := f.run("--date", "2026-11-20")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "RECON_REPORT_DIR") {
		t.Errorf("stderr does not name RECON_REPORT_DIR:\n%s", r.stderr)
	}
	if got := f.elido.Requests(); len(got) != 0 {
		t.Errorf("Elido was asked %v before the report folder was found unwritable", got)
	}
}

// refusingS3 is a bucket that takes the marker a run's probe writes and
// removes, and refuses every other write (403): a report store that fails
// only when the run stores its report.
func refusingS3(t *testing.T) string {
	t.Helper()
	dir, _ := newS3(t, "clickrecon")
	u, err := url.Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	upstream, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/.clickrecon-check-") {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	q.Set("endpoint", srv.URL)
	u.RawQuery = q.Encode()
	return u.String()
}
