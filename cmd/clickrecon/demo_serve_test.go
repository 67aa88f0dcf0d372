package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// clickrecon demo --serve serves a clicks file as Elido's truth and prints
// what points a run at it; a run on a store that lost clicks, with exactly
// those variables, finds the gap; SIGINT ends the server, exit 0.
func TestDemoServeFindsTheGapInYourStore(t *testing.T) {
	var elidoClicks, storeClicks []elidotest.Click
	var csv strings.Builder
	csv.WriteString("ts,link_id,country_code\n")
	for day := 20; day <= 22; day++ {
		for i := 0; i < 10; i++ {
			c := elidotest.Click{TS: time.Date(2026, 10, day, 9+i, 30, 0, 0, time.UTC), LinkID: "lnk_a", CountryCode: "PL"}
			elidoClicks = append(elidoClicks, c)
			if day == 21 && i < 4 {
				continue // the store lost four clicks on the 21st
			}
			storeClicks = append(storeClicks, c)
		}
	}
	for i, c := range elidoClicks {
		ts := c.TS.Format(time.RFC3339)
		if i%2 == 1 { // as PostgreSQL's COPY writes a timestamptz
			ts = c.TS.Format("2006-01-02 15:04:05-07")
		}
		fmt.Fprintf(&csv, "%s,%s,%s\n", ts, c.LinkID, c.CountryCode)
	}
	file := filepath.Join(t.TempDir(), "clicks.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(t.Context()) // stop is SIGINT
	defer stop()
	out, w := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runWith(ctx, []string{"demo", "--serve", "--clicks", file, "--tz", "UTC"}, envconfig.MapLookuper(nil), w, &stderr,
			deps{now: func() time.Time { return testNow }})
		w.Close()
	}()
	env := map[string]string{}
	var command string
	lines := bufio.NewScanner(out)
	for lines.Scan() && command == "" {
		line := strings.TrimSpace(lines.Text())
		if vars, ok := strings.CutPrefix(line, "export "); ok {
			for _, kv := range strings.Fields(vars) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		}
		if rest, ok := strings.CutPrefix(line, "clickrecon run "); ok {
			command = rest
		}
	}
	go io.Copy(io.Discard, out)
	if command == "" {
		t.Fatalf("no run command printed; stderr:\n%s", stderr.String())
	}
	for _, k := range []string{"ELIDO_API_BASE", "ELIDO_API_KEY", "ELIDO_WORKSPACE_ID"} {
		if env[k] == "" {
			t.Errorf("%s not printed: %v", k, env)
		}
	}
	if command != "--from 2026-10-20 --to 2026-10-22 --tz UTC --dry-run" {
		t.Errorf("printed command: clickrecon run %s", command)
	}

	env["STORE_DSN"] = buildStore(t, "sqlite", storeClicks)
	env["RECON_REPORT_DIR"] = filepath.Join(t.TempDir(), "reports")
	var runOut, runErr bytes.Buffer
	code := runWith(t.Context(), append([]string{"run"}, strings.Fields(command)...), envconfig.MapLookuper(env), &runOut, &runErr,
		deps{now: func() time.Time { return testNow }})
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, runOut.String(), runErr.String())
	}
	paths, _ := filepath.Glob(filepath.Join(env["RECON_REPORT_DIR"], "*", "report.json"))
	if len(paths) != 1 {
		t.Fatalf("report.json: %v", paths)
	}
	b, _ := os.ReadFile(paths[0])
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rep.Days {
		got = append(got, fmt.Sprintf("%s %s %s", d.Date, d.Status, report.OptSigned(d.Delta)))
	}
	want := []string{"2026-10-20 match 0", "2026-10-21 missing -4", "2026-10-22 match 0"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("days: %v, want %v", got, want)
	}

	stop()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("demo --serve: exit %d after SIGINT\n%s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("demo --serve did not stop on SIGINT")
	}
}

// A clicks file that cannot be read exits 2 naming the line and what to
// fix, before anything listens.
func TestDemoServeRejectsABadClicksFile(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"no_header", "2026-10-20T10:00:00Z,lnk_a,PL\n", "header ts,link_id,country_code"},
		{"bad_time", "ts,link_id\n1729418400,lnk_a\n", `line 2: ts "1729418400" is not a time`},
		{"empty_link", "ts,link_id,country_code\n2026-10-20T10:00:00Z,,PL\n", "line 2: link_id is empty"},
		{"bad_country", "ts,link_id,country_code\n2026-10-20T10:00:00Z,lnk_a,Poland\n", `line 2: country_code "POLAND"`},
		{"no_click", "ts,link_id\n", "no click"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "clicks.csv")
			if err := os.WriteFile(file, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := runWith(t.Context(), []string{"demo", "--serve", "--clicks", file}, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: time.Now})
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "--clicks") {
				t.Errorf("exit %d, stderr %q; want 2 naming --clicks and %q", code, stderr.String(), tt.want)
			}
		})
	}
}
