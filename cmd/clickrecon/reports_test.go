package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/report/storage"
)

// newS3 starts an in-process S3 (gofakes3, in memory) with the bucket
// "reports" and returns the RECON_REPORT_DIR naming prefix in it. The AWS
// settings come from the test alone, never from the machine.
func newS3(t *testing.T, prefix string) (dir string, keys func() []string) {
	return s3test.New(t, prefix, nil)
}

// rawWebhook is slacktest's Slack, posted to through its webhook: its
// URL, and each payload whole.
func rawWebhook(t *testing.T) (string, func() []string) {
	t.Helper()
	s := slacktest.New(t)
	return s.WebhookURL(), s.Bodies
}

// A run writes its reports to object storage and its Slack alert links
// to the report.html served from RECON_REPORT_URL.
func TestRunWritesToS3AndSlackLinksToIt(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	dir, keys := newS3(t, "clickrecon/nightly")
	hook, posted := rawWebhook(t)
	f.env["RECON_REPORT_DIR"] = dir
	f.env["RECON_REPORT_URL"] = "https://reports.example.com/clickrecon/nightly"
	f.env["SLACK_WEBHOOK_URL"] = hook
	health := newRecorder(t)
	f.env["HEALTHCHECK_URL"] = health.URL + "/ping/uuid"
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}

	puts := keys()
	if len(puts) != len(report.Files) || !strings.HasSuffix(puts[len(puts)-1], "/report.json") {
		t.Fatalf("objects written %q, want the %d report files, report.json last", puts, len(report.Files))
	}
	runKey := strings.TrimPrefix(filepath.Dir(puts[0]), "/reports/clickrecon/nightly/")
	rep, err := storage.ReadReport(t.Context(), strings.Replace(dir, "clickrecon/nightly", "clickrecon/nightly/"+runKey, 1))
	if err != nil {
		t.Fatalf("read the report back from S3: %v", err)
	}
	if rep.RunKey != runKey || rep.Status != "discrepancies" {
		t.Errorf("report from S3: run %q status %q, want %q discrepancies", rep.RunKey, rep.Status, runKey)
	}
	if !strings.Contains(r.stdout, `"report_dir":"s3://reports/clickrecon/nightly/`+runKey+`"`) {
		t.Errorf("stdout does not name the report's S3 location (without the query):\n%s", r.stdout)
	}

	msgs := posted()
	link := "https://reports.example.com/clickrecon/nightly/" + runKey + "/report.html"
	if len(msgs) != 1 || !strings.Contains(msgs[0], "<"+link+"|the report>") {
		t.Errorf("Slack got %q, want one alert linking to %s", msgs, link)
	}
	if pings := health.requests(); len(pings) != 2 || !strings.HasSuffix(pings[1], ", report "+link) {
		t.Errorf("healthcheck pings %q, want the end ping to link to %s", pings, link)
	}
}

// Local report folders older than RECON_REPORT_KEEP_DAYS are removed after
// a run writes its own, and only clickrecon's; 0 keeps them all.
func TestRunPrunesOldReports(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	old := filepath.Join(f.reportDir, "20260801_20260803_0123456789ab")
	other := filepath.Join(f.reportDir, "not-a-report")
	// Another tool's report, in a folder named like a run, and a
	// dot-folder named like a leftover of a write but not one.
	theirs := filepath.Join(f.reportDir, "20260802_20260803_0123456789ab")
	dotOld := filepath.Join(f.reportDir, ".cache.old-1")
	for _, d := range []string{old, other, theirs, dotOld} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mark := `{"schema_version": 1, "tool": "clickrecon", "run_key": "20260801_20260803_0123456789ab"}`
	if err := os.WriteFile(filepath.Join(old, "report.json"), []byte(mark), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"report.json": `{"schema_version": 1}`, "report.html": "<html>"} {
		if err := os.WriteFile(filepath.Join(theirs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := testNow.AddDate(0, -3, 0)
	for _, d := range []string{old, other, theirs, dotOld} {
		if err := os.Chtimes(d, long, long); err != nil {
			t.Fatal(err)
		}
	}

	f.env["RECON_REPORT_KEEP_DAYS"] = "0"
	if r := f.run("--date", "2026-10-25"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("RECON_REPORT_KEEP_DAYS=0 removed an old report: %v", err)
	}
	delete(f.env, "RECON_REPORT_KEEP_DAYS") // the default, 30
	if r := f.run("--date", "2026-10-25"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a report three months old is still there (%v)", err)
	}
	for _, d := range []string{other, theirs, dotOld} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a folder that is not clickrecon's was removed: %v", err)
		}
	}
	// This run's report is kept (readReport takes the one report.json
	// there is: the other tool's goes first).
	os.RemoveAll(theirs)
	f.readReport()
}

// A RECON_REPORT_DIR or RECON_REPORT_URL that cannot work stops the run
// before any request, naming the variable.
func TestRunRejectsBadReportSettings(t *testing.T) {
	for _, tt := range []struct{ name, variable, value string }{
		{"unknown_scheme", "RECON_REPORT_DIR", "ftp://reports/clickrecon"},
		{"bucket_missing", "RECON_REPORT_DIR", "s3:///clickrecon"},
		{"url_not_http", "RECON_REPORT_URL", "reports.example.com/clickrecon"},
		{"url_with_password", "RECON_REPORT_URL", "https://u:pw@reports.example.com/"},
		{"keep_negative", "RECON_REPORT_KEEP_DAYS", "-1"},
		{"keep_not_a_number", "RECON_REPORT_KEEP_DAYS", "thirty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, api)
			f.env[tt.variable] = tt.value
			r := f.run("--date", "2026-10-25")
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.variable) {
				t.Errorf("exit %d, want 2 naming %s\n%s", r.code, tt.variable, r.stderr)
			}
			if strings.Contains(r.stderr, ":pw@") {
				t.Errorf("the password appears in the error:\n%s", r.stderr)
			}
			if reqs := f.elido.RequestLog(); len(reqs) != 0 {
				t.Errorf("requests were made: %q", reqs)
			}
		})
	}
}
