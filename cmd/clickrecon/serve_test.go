package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/reporttest"
	"github.com/clickrecon/clickrecon/report/storage"
)

// clickrecon serve listens on 127.0.0.1 unless told otherwise, serves
// until its context ends and then exits 0; a bad flag or destination
// exits 2 before it listens.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	rep := reporttest.New(reporttest.Day("2026-11-24", 100, 100, reconcile.Match, reconcile.OK))
	if _, err := storage.Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	t.Run("bad_settings", func(t *testing.T) {
		unmigrated := filepath.Join(t.TempDir(), "history.db")
		if err := os.WriteFile(unmigrated, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			args []string
			env  map[string]string
			want string // what stderr must say
		}{
			{args: []string{"serve", "--addr", "8080"}, want: `--addr "8080" is not HOST:PORT`},
			{args: []string{"serve", "--report-dir", filepath.Join(dir, "nope")}, want: "is not a folder"},
			{args: []string{"serve", "--report-dir", "ftp://host/reports"}, want: "RECON_REPORT_DIR"},
			{args: []string{"serve", "--report-dir", "s3://?region=x"}, want: "RECON_REPORT_DIR"},
			{args: []string{"serve", "--bogus"}, want: "-bogus"},
			{args: []string{"serve", "extra"}, want: `unexpected argument "extra"`},
			{args: []string{"serve", "--addr", "127.0.0.1:0", "--report-dir", dir}, env: map[string]string{"LOG_FORMAT": "xml"}, want: "LOG_FORMAT"},
			{args: []string{"serve", "--addr", "127.0.0.1:0", "--report-dir", dir}, env: map[string]string{"LOG_LEVEL": "loud"}, want: "LOG_LEVEL"},
			// The trend page reads HISTORY_DSN when set: a bad one, or a
			// database clickrecon did not migrate, is refused before
			// listening.
			{args: []string{"serve", "--addr", "127.0.0.1:0", "--report-dir", dir}, env: map[string]string{"HISTORY_DSN": "ftp://x"}, want: "HISTORY_DSN"},
			{args: []string{"serve", "--addr", "127.0.0.1:0", "--report-dir", dir}, env: map[string]string{"HISTORY_DSN": "sqlite:" + unmigrated}, want: "clickrecon migrate"},
		} {
			var stdout, stderr bytes.Buffer
			// A setting let through would serve: the deadline stops it.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			code := run(ctx, tt.args, envconfig.MapLookuper(tt.env), &stdout, &stderr)
			cancel()
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("%q %v: exit %d, stderr %q: want 2 and a message with %q", tt.args, tt.env, code, stderr.String(), tt.want)
			}
		}
	})
	t.Run("serves_until_stopped", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out, w := io.Pipe()
		codes := make(chan int, 1)
		env := envconfig.MapLookuper(map[string]string{"RECON_REPORT_DIR": dir, "LOG_FORMAT": "json"})
		go func() {
			codes <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, env, w, io.Discard)
			w.Close()
		}()
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, out)
		m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("serve printed %q: want its http://127.0.0.1:PORT/", line)
		}
		for host, want := range map[string]int{
			m[1]:                                    http.StatusOK,
			"localhost:" + m[1][len("127.0.0.1:"):]: http.StatusOK,
			"reports.example.com":                   http.StatusMisdirectedRequest, // a rebound name
		} {
			req, err := http.NewRequest(http.MethodGet, "http://"+m[1]+"/"+rep.RunKey+"/report.html", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET report.html as Host %s: %s, want %d", host, resp.Status, want)
			}
		}
		cancel()
		select {
		case code := <-codes:
			if code != exitOK {
				t.Errorf("exit %d after the stop, want 0", code)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("serve did not stop when its context ended")
		}
	})
}

// serve prints the address as --addr gives it, with the port it listens
// on: 0.0.0.0 stays 0.0.0.0, never [::].
func TestServePrintsTheAddressAsGiven(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, []string{"serve", "--addr", "0.0.0.0:0", "--report-dir", t.TempDir()}, envconfig.MapLookuper(nil), w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	if !regexp.MustCompile(`are at http://0\.0\.0\.0:[1-9]\d*/ `).MatchString(line) {
		t.Errorf("serve --addr 0.0.0.0:0 printed %q: want http://0.0.0.0:PORT/", line)
	}
	cancel()
	<-done
}
