package viewer

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

const (
	serveOld     = "20261020_20261022_aaaaaaaaaaaa"
	serveNew     = "20261024_20261028_bbbbbbbbbbbb"
	serveForeign = "20261024_20261028_cccccccccccc"
	servePartial = "20261101_20261101_dddddddddddd"
	serveLink    = "20261024_20261028_eeeeeeeeeeee"
)

// serveReport is a run's report as clickrecon writes it.
func serveReport(key string, made time.Time, status report.Status, delta int64) report.Report {
	api, local := int64(100), 100+delta
	return report.Report{
		SchemaVersion: report.SchemaVersion,
		RunKey:        key,
		WorkspaceID:   "ws_1",
		Window:        report.Window{From: key[0:4] + "-" + key[4:6] + "-" + key[6:8], To: key[9:13] + "-" + key[13:15] + "-" + key[15:17], TZ: "Europe/Warsaw"},
		GeneratedAt:   made,
		Status:        status,
		Totals:        report.Totals{API: api, Local: local, Delta: delta},
		Coverage:      report.Coverage{Days: 3, Match: 2, Missing: 1},
		Days: []report.Day{
			{Date: "2026-10-24", Hours: 24, API: &api, Local: &local, Delta: &delta, Status: "missing", Severity: "fail", Settled: true},
		},
		Drilldown: report.Drilldown{Mode: report.DrillOff},
	}
}

// writeRuns writes two runs of clickrecon's to dest and returns d.
func writeRuns(t *testing.T, dest string) *storage.Dest {
	t.Helper()
	ctx := context.Background()
	d, err := storage.Open(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, r := range []report.Report{
		serveReport(serveOld, time.Date(2026, 10, 23, 1, 0, 0, 0, time.UTC), report.StatusOK, 0),
		serveReport(serveNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC), report.StatusDiscrepancies, -42),
	} {
		if _, err := d.WriteReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// localServeDir is a folder with two runs and, beside them, what must
// never be served: another tool's report.json in a folder named as a run
// key, a folder without a report.json, a link to a run folder, and a
// report.html that is a link to a file outside the folder.
func localServeDir(t *testing.T) (string, *storage.Dest) {
	t.Helper()
	dir := t.TempDir()
	d := writeRuns(t, dir)
	put := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(dir, serveForeign, "report.json"), `{"schema_version":1,"tool":"other","run_key":"`+serveForeign+`"}`)
	put(filepath.Join(dir, serveForeign, "report.html"), "<p>another tool's page</p>")
	put(filepath.Join(dir, servePartial, "days.csv"), "date\n")
	secret := filepath.Join(t.TempDir(), "secret.html")
	put(secret, "TOP SECRET")
	if err := os.Symlink(filepath.Join(dir, serveNew), filepath.Join(dir, serveLink)); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, serveOld, "report.html")
	if err := os.Remove(html); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, html); err != nil {
		t.Fatal(err)
	}
	return dir, d
}

// startServe serves d with the real handler.
func startServe(t *testing.T, d *storage.Dest) (*httptest.Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	srv := httptest.NewServer(New(d, slog.New(slog.NewTextHandler(logs, nil)), true))
	t.Cleanup(srv.Close)
	return srv, logs
}

// logBuffer is the server's log, read by the test while a handler may
// still write to it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// get sends method and the request target exactly as given (no cleaning
// of dot segments or escapes by the client).
func get(t *testing.T, srv *httptest.Server, method, target string) (*http.Response, string) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL = &url.URL{Scheme: "http", Host: u.Host, Opaque: target}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// checkHeaders checks the headers every answer carries.
func checkHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'unsafe-inline'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q allows scripts: the report has none", csp)
	}
}

// servedDests are the destinations the serve tests run over: a folder
// (localServeDir's) and a bucket, each holding writeRuns' runs.
func servedDests() map[string]func(t *testing.T) *storage.Dest {
	return map[string]func(t *testing.T) *storage.Dest{
		"folder": func(t *testing.T) *storage.Dest { _, d := localServeDir(t); return d },
		"s3": func(t *testing.T) *storage.Dest {
			dir, _ := newS3(t, "nightly")
			return writeRuns(t, dir)
		},
	}
}

func TestServeIndexListsRunsNewestFirst(t *testing.T) {
	for name, dest := range servedDests() {
		t.Run(name, func(t *testing.T) {
			srv, _ := startServe(t, dest(t))
			resp, body := get(t, srv, http.MethodGet, "/")
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("GET /: %s %s\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
			}
			checkHeaders(t, resp)
			links := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(body, -1)
			var got []string
			for _, l := range links {
				got = append(got, l[1])
			}
			want := []string{"/trend", "/" + serveNew + "/report.html", "/" + serveOld + "/report.html"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("links of the index, the trend then the runs newest first (-want +got):\n%s", diff)
			}
			for _, s := range []string{"2026-10-24 to 2026-10-28 (Europe/Warsaw)", `class="discrepancies">gaps<`, `class="n delta">-42<`, `class="ok">ok<`, `class="n delta">0<`} {
				if !strings.Contains(body, s) {
					t.Errorf("the index lacks %q:\n%s", s, body)
				}
			}
			if name == "folder" {
				if !strings.Contains(body, servePartial) || !strings.Contains(body, "being written") {
					t.Errorf("the folder without report.json is not listed as being written:\n%s", body)
				}
				if strings.Contains(body, serveForeign) || strings.Contains(body, serveLink) {
					t.Errorf("the index lists another tool's folder or a link:\n%s", body)
				}
			}
		})
	}
}

// The trend page counts each day once, by its latest verdict, from the
// reports of clickrecon's alone (never another tool's folder nor a link),
// is self-contained (no script, nothing from another origin), and says
// which parameter is wrong.
func TestServeTrendPage(t *testing.T) {
	for name, dest := range servedDests() {
		t.Run(name, func(t *testing.T) {
			srv, _ := startServe(t, dest(t))
			resp, body := get(t, srv, http.MethodGet, "/trend?from=2026-10-20&to=2026-10-31")
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("GET /trend: %s\n%s", resp.Status, body)
			}
			checkHeaders(t, resp)
			// 2026-10-24 matched in the older run and lacks 42 clicks in the
			// newer: 42 missing, on one day with a gap, once.
			for _, want := range []string{"2026-10-20 to 2026-10-31", "Workspace ws_1", "missing<b>42</b>", "days with a gap<b>1</b>", "never checked<b>11</b>", "<title>2026-10-24: missing, 42 clicks missing</title>"} {
				if !strings.Contains(body, want) {
					t.Errorf("the trend page lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "<script") || regexp.MustCompile(`(src|href)="https?:`).MatchString(body) {
				t.Errorf("the trend page has a script or loads from elsewhere:\n%s", body)
			}
			for _, bad := range []string{"/trend?nights=0", "/trend?from=2026-10-31&to=2026-10-01", "/trend?to=yesterday"} {
				if resp, body := get(t, srv, http.MethodGet, bad); resp.StatusCode != http.StatusBadRequest {
					t.Errorf("GET %s: %s, want 400\n%s", bad, resp.Status, body)
				}
			}
		})
	}
}

// The index signs a run's delta as the summary table and report.html do,
// so a surplus reads +12 there too, not 12.
func TestServeIndexDeltaIsSigned(t *testing.T) {
	for _, tt := range []struct {
		totals report.Totals
		want   string
	}{
		{report.Totals{Delta: 12}, "+12"},
		{report.Totals{Delta: -1234}, "-1,234"},
		{report.Totals{}, "0"},
		{report.Totals{Unknown: true}, "unknown"},
	} {
		if got := indexDelta(report.Report{Totals: tt.totals}); got != tt.want {
			t.Errorf("indexDelta(%+v) = %q, want %q", tt.totals, got, tt.want)
		}
	}
}

func TestServeFilesOnlyFromClickreconsRunFolders(t *testing.T) {
	dir, d := localServeDir(t)
	srv, _ := startServe(t, d)
	html, err := os.ReadFile(filepath.Join(dir, serveNew, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, srv, http.MethodGet, "/"+serveNew+"/report.html")
	// The page as written, with the bar of links served after its <body>.
	bar := string(runBar(d, "", serveNew))
	if resp.StatusCode != http.StatusOK || strings.Replace(body, bar, "", 1) != string(html) || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET report.html: %s %q, %d bytes: want the run's page", resp.Status, resp.Header.Get("Content-Type"), len(body))
	}
	if !strings.Contains(body, "<body>"+bar) || !strings.Contains(bar, `href="/"`) {
		t.Errorf("GET report.html: want the bar %q right after <body>", bar)
	}
	checkHeaders(t, resp)
	if resp, _ := get(t, srv, http.MethodGet, "/"+serveNew+"/days.csv"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("GET days.csv: %s, Content-Disposition %q: want it as a download", resp.Status, resp.Header.Get("Content-Disposition"))
	}
	for _, target := range []string{
		"/" + serveNew + "/",          // no folder listing
		"/" + serveNew,                //
		"/" + serveNew + "/notes.txt", // not a file clickrecon writes
		"/" + serveNew + "/../" + serveOld + "/report.md",
		"/" + serveNew + "/%2e%2e/" + serveOld + "/report.md",
		"/" + serveNew + "%2Freport.html", // an escaped slash
		"/" + serveNew + "%5Creport.html", // an escaped backslash
		"/" + serveNew + "/report%2ehtml", // any escape
		"/../" + filepath.Base(dir) + "/" + serveNew + "/report.html",
		"/" + serveOld + "/report.html",     // a link to a file outside
		"/" + serveLink + "/report.html",    // a link to a run folder
		"/" + serveForeign + "/report.html", // another tool's folder
		"/" + serveForeign + "/report.json",
		"/" + servePartial + "/days.csv", // no report.json: not a report
		"/" + serveNew + "/report.html/x",
		"/./" + serveNew + "/report.html",
		"/" + serveNew + "//report.html",
	} {
		t.Run(target, func(t *testing.T) {
			resp, body := get(t, srv, http.MethodGet, target)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: %s, want 404\n%.200s", target, resp.Status, body)
			}
			if strings.Contains(body, "TOP SECRET") || strings.Contains(body, "another tool") {
				t.Errorf("GET %s served a file that is not clickrecon's", target)
			}
			checkHeaders(t, resp)
		})
	}
}

// serve only reads: a PUT, POST or DELETE is refused, and the folder and
// the bucket are as they were after every request.
func TestServeNeverWrites(t *testing.T) {
	dir, d := localServeDir(t)
	s3dir, puts := newS3(t, "nightly")
	s3dest := writeRuns(t, s3dir)
	before := tree(t, dir)
	written := len(puts())
	for _, d := range []*storage.Dest{d, s3dest} {
		srv, _ := startServe(t, d)
		for _, method := range []string{http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodPatch} {
			for _, target := range []string{"/", "/" + serveNew + "/report.html", "/" + serveNew + "/new.txt"} {
				resp, _ := get(t, srv, method, target)
				if resp.StatusCode != http.StatusMethodNotAllowed {
					t.Errorf("%s %s: %s, want 405", method, target, resp.Status)
				}
			}
		}
		get(t, srv, http.MethodGet, "/")
		get(t, srv, http.MethodGet, "/"+serveNew+"/report.html")
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("the folder changed (-before +after):\n%s", diff)
	}
	if got := puts(); len(got) != written {
		t.Errorf("serve wrote to the bucket: %q", got[written:])
	}
	srv, _ := startServe(t, s3dest)
	if resp, _ := get(t, srv, http.MethodGet, "/"+serveNew+"/report.html"); resp.StatusCode != http.StatusOK {
		t.Errorf("the bucket's report is gone: %s", resp.Status)
	}
}

// tree returns every entry under dir, with a file's content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		default:
			out[rel] = fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The policy fits report.html: the page needs inline styles and nothing
// the policy refuses (a script, an outside resource, a form).
func TestServePolicyFitsTheReportPage(t *testing.T) {
	files, err := report.Render(serveReport(serveNew, time.Now(), report.StatusDiscrepancies, -3))
	if err != nil {
		t.Fatal(err)
	}
	var page string
	for _, f := range files {
		if f.Name == "report.html" {
			page = string(f.Data)
		}
	}
	if !strings.Contains(page, "<style") || !strings.Contains(page, "<svg") {
		t.Fatal("report.html has no inline <style> or <svg>: the test no longer looks at the page it means to")
	}
	for _, refused := range []string{"<script", " src=", "url(", "<link", "@import", "<form", "<iframe", "<object", "<embed"} {
		if strings.Contains(strings.ToLower(page), refused) {
			t.Errorf("report.html holds %q, which the policy %q refuses", refused, headers["Content-Security-Policy"])
		}
	}
}

// A bucket that refuses is a 502 that says to look at the log, never a
// 404 (the report may well be there) nor the destination's query or an
// error's detail; the log says what failed.
func TestServeBucketThatRefuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer http.HandlerFunc
	}{
		{"refused", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>`)
		}},
		// The request reached the bucket and its answer never came back.
		{"answer_lost", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newS3(t, "nightly") // the test's AWS settings
			refusing := httptest.NewServer(tt.answer)
			t.Cleanup(refusing.Close)
			q := url.Values{"endpoint": {refusing.URL}, "use_path_style": {"true"}, "region": {"eu-central-1"}}
			d, err := storage.Open(context.Background(), "s3://reports/nightly?"+q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			srv, logs := startServe(t, d)
			for _, target := range []string{"/", "/" + serveNew + "/report.html"} {
				resp, body := get(t, srv, http.MethodGet, target)
				if resp.StatusCode != http.StatusBadGateway {
					t.Errorf("GET %s: %s, want 502", target, resp.Status)
				}
				if strings.Contains(body, "endpoint") || strings.Contains(body, "AccessDenied") || strings.Contains(body, refusing.URL) {
					t.Errorf("GET %s: the answer %q shows the destination's settings or the store's error", target, body)
				}
				checkHeaders(t, resp)
			}
			if !strings.Contains(logs.String(), "s3://reports/nightly") || strings.Contains(logs.String(), "use_path_style") {
				t.Errorf("the log %q: want the bucket named, without its query", logs.String())
			}
		})
	}
}

// newS3 starts an in-process S3 and returns the destination naming
// prefix in it, and the paths written to it (s3test.New).
func newS3(t *testing.T, prefix string) (dir string, keys func() []string) {
	return s3test.New(t, prefix, nil)
}
