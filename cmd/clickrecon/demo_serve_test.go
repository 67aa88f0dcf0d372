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

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
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
	if command != "--from 2026-10-20 --to 2026-10-22 --dry-run" || env["RECON_TZ"] != "UTC" {
		t.Errorf("printed: export RECON_TZ=%s, clickrecon run %s", env["RECON_TZ"], command)
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
		got = append(got, fmt.Sprintf("%s %s %s", d.Date, d.Status, words.OptSigned(d.Delta)))
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

// A fault in a clicks file is named by the line an editor shows, blank
// lines counted.
func TestDemoServeNamesTheFilesLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clicks.csv")
	body := "ts,link_id,country_code\n2026-10-20T10:00:00Z,lnk_a,PL\n\n\n2026-10-20T11:00:00Z,,PL\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runWith(t.Context(), []string{"demo", "--serve", "--clicks", file}, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: time.Now})
	if code != exitUsage || !strings.Contains(stderr.String(), "line 5: link_id is empty") {
		t.Errorf("exit %d, stderr %q; want 2 naming line 5", code, stderr.String())
	}
}

// serveLines runs demo --serve over a clicks file with env, at now, and
// returns what it prints before it serves.
func serveLines(t *testing.T, clicks []time.Time, env map[string]string, now time.Time, args ...string) string {
	t.Helper()
	var csv strings.Builder
	csv.WriteString("ts,link_id\n")
	for _, ts := range clicks {
		fmt.Fprintf(&csv, "%s,lnk_a\n", ts.UTC().Format(time.RFC3339))
	}
	file := filepath.Join(t.TempDir(), "clicks.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	out, w := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runWith(ctx, append([]string{"demo", "--serve", "--clicks", file}, args...), envconfig.MapLookuper(env), w, &stderr,
			deps{now: func() time.Time { return now }})
		w.Close()
	}()
	var printed strings.Builder
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		printed.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "It serves until") {
			break
		}
	}
	stop()
	go io.Copy(io.Discard, out)
	if code := <-done; code != exitOK {
		t.Fatalf("demo --serve: exit %d\n%s\n%s", code, printed.String(), stderr.String())
	}
	return printed.String()
}

// The commands demo --serve prints are ones a run accepts, with the zone
// exported as RECON_TZ for every command after them: the days that have
// ended, in windows of at most RECON_MAX_DAYS, never a --from after --to.
func TestDemoServePrintsWindowsARunAccepts(t *testing.T) {
	warsaw, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	days := func(from time.Time, n int) []time.Time {
		var out []time.Time
		for i := range n {
			out = append(out, from.AddDate(0, 0, i))
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		clicks  []time.Time
		env     map[string]string
		want    []string // the windows printed
		wantSay string
	}{
		{"two_years", days(time.Date(2024, 11, 30, 10, 0, 0, 0, warsaw), 730), nil,
			[]string{"--from 2024-11-30 --to 2026-01-03", "--from 2026-01-04 --to 2026-11-28"}, "RECON_MAX_DAYS=400"},
		{"max_days_from_the_environment", days(time.Date(2026, 10, 1, 10, 0, 0, 0, warsaw), 45), map[string]string{"RECON_MAX_DAYS": "30"},
			[]string{"--from 2026-10-01 --to 2026-10-30", "--from 2026-10-31 --to 2026-11-14"}, "RECON_MAX_DAYS=30"},
		{"up_to_today", days(time.Date(2026, 11, 27, 10, 0, 0, 0, warsaw), 3), nil,
			[]string{"--from 2026-11-27 --to 2026-11-28"}, "The clicks of 2026-11-29 and later are left out"},
		{"today_only", []time.Time{time.Date(2026, 11, 29, 8, 0, 0, 0, warsaw)}, nil,
			nil, "clickrecon run --date 2026-11-29 --dry-run"},
		// 23:30 UTC on the 28th is already the 29th, today, in Warsaw.
		{"today_in_the_zone", []time.Time{time.Date(2026, 11, 28, 23, 30, 0, 0, time.UTC)}, nil,
			nil, "From 2026-11-30 00:00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			printed := serveLines(t, tt.clicks, tt.env, now, "--tz", "Europe/Warsaw")
			if !strings.Contains(printed, "\n  export RECON_TZ=Europe/Warsaw\n") || strings.Contains(printed, "--tz") {
				t.Errorf("the zone is not exported as RECON_TZ for every command after it:\n%s", printed)
			}
			if !strings.Contains(printed, tt.wantSay) {
				t.Errorf("printed no %q:\n%s", tt.wantSay, printed)
			}
			maxDays := 400
			if v := tt.env["RECON_MAX_DAYS"]; v != "" {
				fmt.Sscan(v, &maxDays)
			}
			var got []string
			for line := range strings.Lines(printed) {
				cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "clickrecon run ")
				if !ok || strings.Contains(line, "(") {
					continue // not a command line, or one for later
				}
				got = append(got, strings.TrimSuffix(cmd, " --dry-run"))
				f := strings.Fields(cmd)
				if len(f) < 4 || f[0] != "--from" || f[2] != "--to" {
					t.Errorf("clickrecon run %s: want --from and --to", cmd)
					continue
				}
				spec := reconcile.WindowSpec{From: f[1], To: f[3], MaxDays: maxDays}
				if _, err := reconcile.NewWindow(spec, warsaw, now); err != nil {
					t.Errorf("clickrecon run %s: a run refuses it: %v", cmd, err)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("windows printed %q, want %q\n%s", got, tt.want, printed)
			}
		})
	}
}
