package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// A report store that refuses every write does not silence the night: a
// run that found gaps still alerts them, saying the report could not be
// stored and linking nothing, and posts nothing else (it did check: no
// notice says it could not). The storage failure is remembered as told,
// so the next night stays quiet, and the night reports are stored again
// says so once. The exit code stays 3.
func TestReportNotStoredIsStillHeard(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, lossAndDuplicate(api))
	hook := withSlack(t, f, "postgres")
	good := f.env["RECON_REPORT_DIR"]
	f.env["RECON_REPORT_DIR"] = refusingS3(t) // takes the probe's marker, refuses the report
	f.env["RECON_REPORT_URL"] = "https://reports.example.com/clickrecon/"
	health := newRecorder(t)
	f.env["HEALTHCHECK_URL"] = health.URL + "/ping/uuid"

	f.runs(2, exitIncomplete, window...)
	for _, p := range health.requests() {
		if strings.Contains(p, "reports.example.com") {
			t.Errorf("the healthcheck's ping links the report that was not stored: %s", p)
		}
	}
	got := hook.posted()
	if len(got) != 1 {
		t.Fatalf("two runs with the report store refusing posted %d messages, want the alert alone: %q", len(got), got)
	}
	m := got[0]
	if strings.Contains(m, "reports.example.com") {
		t.Errorf("the alert links the report that was not stored: %s", m)
	}
	if !strings.Contains(m, "Click gaps") || !strings.Contains(m, "report could not be stored") {
		t.Errorf("the message is not the gap alert saying the report could not be stored: %s", m)
	}
	if strings.Contains(m, "could not check") {
		t.Errorf("the message says the run could not check, which it did: %s", m)
	}

	f.env["RECON_REPORT_DIR"] = good
	f.runs(1, exitOK, window...)
	got = hook.posted()
	if len(got) != 2 || !strings.Contains(got[1], "again") || strings.Contains(got[1], "could not check") {
		t.Fatalf("the run that stored its report posted %q, want one message saying reports are stored again", got[1:])
	}
	noSecrets(t, hook.posted())
}

// A run with no gap whose report cannot be stored posts the failure
// notice, once over two nights.
func TestReportNotStoredWithoutGapsIsANotice(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	hook := withSlack(t, f, "postgres")
	f.env["RECON_REPORT_DIR"] = refusingS3(t)
	f.runs(2, exitIncomplete, window...)
	got := hook.posted()
	if len(got) != 1 || !strings.Contains(got[0], "RECON_REPORT_DIR") || !strings.Contains(got[0], "not stored") {
		t.Fatalf("posted %q, want one notice that the report was not stored, naming RECON_REPORT_DIR", got)
	}
}

// A notice about the store is kept under what failed, not under how
// STORE_DSN spells it: the run whose corrected STORE_DSN reaches the
// store hears the recovery, and a later failure under the old spelling is
// told again rather than taken as told.
func TestCorrectedStoreDSNHearsTheRecovery(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(u *url.URL)
		exit  int // the wrong STORE_DSN's exit code
	}{
		// A database that does not exist: the probe refuses it before any
		// Elido request (exit 2) and the end of the run tells Slack.
		{"no_such_database", func(u *url.URL) { u.Path = "/no_such_database_here" }, exitUsage},
		// A port nothing listens on: the probe leaves a store that does
		// not answer to the run, which reads no day and tells Slack.
		{"nothing_listens", func(u *url.URL) { u.Host = "127.0.0.1:1" }, exitIncomplete},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := uniqueFixture(t, api, api)
			hook := withSlack(t, f, "postgres")
			good := buildStore(t, "postgres", api)
			u, err := url.Parse(good)
			if err != nil {
				t.Fatal(err)
			}
			tt.spoil(u)
			bad := u.String()

			f.env["STORE_DSN"] = bad
			f.runs(2, tt.exit, window...)
			if got := hook.posted(); len(got) != 1 || !strings.Contains(got[0], "STORE_DSN") {
				t.Fatalf("two runs with a wrong STORE_DSN posted %q, want one notice naming STORE_DSN", got)
			}
			f.env["STORE_DSN"] = good
			f.runs(1, exitOK, window...)
			got := hook.posted()
			if len(got) != 2 || !strings.Contains(got[1], "again") {
				t.Fatalf("the run with the corrected STORE_DSN posted %q, want one message saying checking works again", got[1:])
			}
			f.env["STORE_DSN"] = bad
			f.runs(1, tt.exit, window...)
			if got := hook.posted(); len(got) != 3 || !strings.Contains(got[2], "STORE_DSN") {
				t.Fatalf("the old spelling failing again posted %q, want a new notice", got[2:])
			}
		})
	}
}

// A change of RECON_TZ alerts the same lost clicks under the new zone's
// days: the first alert after it says the zone changed, from what to what,
// and that these days may have been alerted under the old zone; the next
// run in the new zone repeats nothing.
func TestZoneChangeIsSaid(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, lossAndDuplicate(api))
	hook := withSlack(t, f, "postgres")
	f.runs(1, exitOK, window...)
	if got := hook.posted(); len(got) != 1 || strings.Contains(got[0], "zone changed") {
		t.Fatalf("the first run posted %q, want one alert with no word of a zone change", got)
	}
	f.env["RECON_TZ"] = "UTC"
	f.runs(1, exitOK, window...)
	got := hook.posted()
	if len(got) != 2 {
		t.Fatalf("the run in the new zone posted %q, want one alert", got[1:])
	}
	for _, s := range []string{"zone changed from Europe/Warsaw to UTC", "alerted under the old zone"} {
		if !strings.Contains(got[1], s) {
			t.Errorf("the alert after the zone change lacks %q: %s", s, got[1])
		}
	}
	f.runs(1, exitOK, window...)
	if got := hook.posted(); len(got) != 2 {
		t.Errorf("a second run in the new zone posted %q", got[2:])
	}
}

// A run stopped by its deadline tells Slack once over two nights: the
// history is read for the last notice after the deadline too, so the
// second run knows it was told.
func TestDeadlineNoticeIsToldOnce(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	hook := withSlack(t, f, "postgres")
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute})
	// Long enough for the store to be opened and identified on a loaded
	// machine: the notice is kept under the store's identity, and a run
	// whose deadline passed before it knew the store keeps it elsewhere.
	f.env["RECON_TIMEOUT"] = "2s"
	f.runs(2, exitIncomplete, window...)
	got := hook.posted()
	if len(got) != 1 || !strings.Contains(got[0], "RECON_TIMEOUT=2s") {
		t.Fatalf("two runs stopped by their deadline posted %q, want one notice naming the deadline", got)
	}
	if strings.Contains(got[0], "run history") {
		t.Errorf("the notice blames the history, which is up: %s", got[0])
	}
}

// A re-check whose rewrite of the report in object storage dies midway
// links no report: the one it rewrote is no longer whole in its place
// (the old report.json is gone), so the message that tells the report was
// not stored names no link to it.
func TestRecheckWhoseRewriteDiesLinksNothing(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, lossAndDuplicate(api))
	hook := withSlack(t, f, "postgres")
	dir, _ := newS3(t, "nightly")
	u, err := url.Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	backend, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(backend)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The run's probe marker is let through: the rewrite dies, not the
		// run before it starts.
		if refuse.Load() && r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/.clickrecon-check-") {
			http.Error(w, "the bucket refuses writes", http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	q.Set("endpoint", srv.URL)
	u.RawQuery = q.Encode()
	f.env["RECON_REPORT_DIR"] = u.String()
	f.env["RECON_REPORT_URL"] = "https://reports.example.com/nightly/"

	f.runs(1, exitOK, window...)
	if got := hook.Bodies(); len(got) != 1 || !strings.Contains(got[0], "reports.example.com/nightly/") {
		t.Fatalf("the first run posted %q, want one alert linking its report", got)
	}
	refuse.Store(true)
	f.runs(1, exitIncomplete, window...)
	got := hook.Bodies()
	if len(got) != 2 || !strings.Contains(got[1], "not stored") {
		t.Fatalf("the re-check whose rewrite died posted %q, want one message saying the report was not stored", got[1:])
	}
	if strings.Contains(got[1], "reports.example.com") {
		t.Errorf("the re-check links a report its rewrite left incomplete: %s", got[1])
	}
}
