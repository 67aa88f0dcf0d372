package viewer

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

// A file is sent with its length, as it is on disk; HEAD sends the
// length and no body.
func TestServeSendsFilesWithTheirLength(t *testing.T) {
	dir, d := localServeDir(t)
	srv, _ := startServe(t, d)
	for _, name := range []string{"days.csv", "report.json", "report.md"} {
		want, err := os.ReadFile(filepath.Join(dir, serveNew, name))
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, srv, http.MethodGet, "/"+serveNew+"/"+name)
		if resp.StatusCode != http.StatusOK || body != string(want) || resp.ContentLength != int64(len(want)) {
			t.Errorf("GET %s: %s, Content-Length %d, %d bytes: want the file's %d bytes", name, resp.Status, resp.ContentLength, len(body), len(want))
		}
		resp, body = get(t, srv, http.MethodHead, "/"+serveNew+"/"+name)
		if resp.StatusCode != http.StatusOK || body != "" || resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
			t.Errorf("HEAD %s: %s, Content-Length %q, body %d bytes: want the length alone", name, resp.Status, resp.Header.Get("Content-Length"), len(body))
		}
	}
	resp, body := get(t, srv, http.MethodGet, "/"+serveNew+"/report.html")
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("GET report.html: Content-Length %d for %d bytes: the bar is counted", resp.ContentLength, len(body))
	}
}

// A served report.html links back to the index and to its run's JSON,
// Markdown and CSVs, and to its repair plan when there is one; every
// link answers.
func TestServeReportPageLinksItsRun(t *testing.T) {
	dir, d := localServeDir(t)
	writeRepair(t, dir, serveNew)
	const plain = "20261024_20261028_bbbbbbbbbbb0" // a run without a plan
	if _, err := d.WriteReport(context.Background(), serveReport(plain, time.Now(), report.StatusOK, 0)); err != nil {
		t.Fatal(err)
	}
	srv, _ := startServe(t, d)
	for key, repair := range map[string]bool{serveNew: true, plain: false} {
		_, body := get(t, srv, http.MethodGet, "/"+key+"/report.html")
		var got []string
		for _, m := range regexp.MustCompile(`<nav[^>]*>.*?</nav>`).FindAllString(body, -1) {
			for _, l := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(m, -1) {
				got = append(got, l[1])
			}
		}
		want := []string{"/", "/trend", "/" + key + "/report.json", "/" + key + "/report.md", "/" + key + "/days.csv",
			"/" + key + "/links.csv", "/" + key + "/countries.csv", "/" + key + "/hours.csv"}
		if repair {
			want = append(want, "/repair-"+key+"/")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the links of the page's bar (-want +got):\n%s", key, diff)
		}
		for _, l := range got {
			if resp, _ := get(t, srv, http.MethodGet, l); resp.StatusCode != http.StatusOK {
				t.Errorf("%s: the bar's link %s answers %s", key, l, resp.Status)
			}
		}
	}
}

// writeRepair writes a repair plan for runKey into dir, and beside its
// files what must never be served from it.
func writeRepair(t *testing.T, dir, runKey string) string {
	t.Helper()
	plan := filepath.Join(dir, "repair-"+runKey)
	for name, data := range map[string]string{
		"repair.csv":                  "day,hour,ts,link,country\n",
		"surplus.csv":                 "day,ts\n",
		"repair.sql":                  "BEGIN;\nCOMMIT;\n",
		"apply.log":                   "2026-11-01T00:00:00Z intend 2026-10-24 insert 1 clicks\n",
		"attempt-2/repair.csv":        "day,hour,ts,link,country\n2026-10-24,1,x,l,PL\n",
		"attempt-2/deeper/repair.csv": "too deep",
		"notes.html":                  "<script>alert(1)</script>",
		".hidden.csv":                 "hidden",
	} {
		p := filepath.Join(plan, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(plan, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(plan, "linked")); err != nil {
		t.Fatal(err)
	}
	return plan
}

// A run's repair plan is listed with it, and a plan whose run is gone on
// its own; its page lists its CSV, SQL and log files, one folder deep,
// and serves them as text, read-only; nothing else is reachable.
func TestServeRepairPlans(t *testing.T) {
	dir, d := localServeDir(t)
	writeRepair(t, dir, serveNew)
	const gone = "20260901_20260901_abcabcabcabc"
	writeRepair(t, dir, gone)
	before := tree(t, dir)
	srv, _ := startServe(t, d)

	_, index := get(t, srv, http.MethodGet, "/")
	for _, want := range []string{`href="/repair-` + serveNew + `/"`, `href="/repair-` + gone + `/"`, "no longer here"} {
		if !strings.Contains(index, want) {
			t.Errorf("the index lacks %q:\n%s", want, index)
		}
	}
	if strings.Contains(index, `href="/`+gone+`/report.html"`) {
		t.Errorf("the index links the report of a run that is gone")
	}

	resp, page := get(t, srv, http.MethodGet, "/repair-"+serveNew+"/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the plan's page: %s", resp.Status)
	}
	checkHeaders(t, resp)
	var got []string
	for _, l := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		got = append(got, l[1])
	}
	p := "/repair-" + serveNew + "/"
	want := []string{"/", "/" + serveNew + "/report.html", p + "apply.log", p + "attempt-2/repair.csv", p + "repair.csv", p + "repair.sql", p + "surplus.csv"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the plan's links (-want +got):\n%s", diff)
	}
	for target, ctype := range map[string]string{
		p + "repair.sql":           "text/plain; charset=utf-8",
		p + "apply.log":            "text/plain; charset=utf-8",
		p + "attempt-2/repair.csv": "text/csv; charset=utf-8",
	} {
		resp, body := get(t, srv, http.MethodGet, target)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype || body == "" {
			t.Errorf("GET %s: %s %q: want it as %s", target, resp.Status, resp.Header.Get("Content-Type"), ctype)
		}
		checkHeaders(t, resp)
	}
	for _, target := range []string{
		p + "notes.html",  // not a kind of file a plan holds
		p + ".hidden.csv", // not a plain name
		p + "link.csv",    // a link out of the folder
		p + "linked/secret.csv",
		p + "attempt-2/deeper/repair.csv", // deeper than one folder
		p + "attempt-2/",
		p + "../" + serveNew + "/report.json",
		p + "%2e%2e/" + serveNew + "/report.json",
		p + "attempt-2%2Frepair.csv",
		"/repair-" + serveNew,           // no trailing slash
		"/repair-nota_run_key/",         // not a run key
		"/repair-" + serveNew + "x/",    //
		"/repair-" + servePartial + "/", // no plan
		"/repair-" + serveNew + "//repair.csv",
	} {
		resp, body := get(t, srv, http.MethodGet, target)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404\n%.200s", target, resp.Status, body)
		}
		if strings.Contains(body, "TOP SECRET") || strings.Contains(body, "<script") {
			t.Errorf("GET %s served what a plan must not", target)
		}
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		if resp, _ := get(t, srv, method, p+"repair.csv"); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s a plan's file: %s, want 405", method, resp.Status)
		}
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("the folder changed (-before +after):\n%s", diff)
	}
}

// A bucket object rewritten while it is sent (another run writing the
// same report) is cut off: the client gets an error, never a
// whole-looking answer of a file that is not the listed report's.
func TestServeBucketFileChangedWhileSent(t *testing.T) {
	var once sync.Once
	var rewrite func()
	dir, _ := s3test.New(t, "nightly", func(key string) {
		if key == "nightly/"+serveNew+"/days.csv" {
			once.Do(rewrite)
		}
	})
	d := writeRuns(t, dir)
	rewrite = func() {
		other, err := storage.Open(context.Background(), dir)
		if err != nil {
			t.Error(err)
			return
		}
		defer other.Close()
		if err := other.Write(context.Background(), serveNew, []report.File{{Name: "days.csv", Data: []byte("date\nrewritten\n")}}); err != nil {
			t.Error(err)
		}
	}
	srv, logs := startServe(t, d)
	resp, err := srv.Client().Get(srv.URL + "/" + serveNew + "/days.csv")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatalf("GET days.csv rewritten while it was sent: %s, read whole; want the answer cut off", resp.Status)
	}
	if !strings.Contains(logs.String(), "changed while it was sent") {
		t.Errorf("the log %q does not say why the answer was cut off", logs.String())
	}
	// The rewrite has not written its report.json yet: no report, 404.
	if resp, _ := get(t, srv, http.MethodGet, "/"+serveNew+"/days.csv"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET days.csv of a report being rewritten: %s, want 404", resp.Status)
	}
}

// The address is printed with the host as given, and the port listened
// on.
func TestAddressAsGiven(t *testing.T) {
	for _, tt := range []struct {
		addr  string
		bound net.Addr
		want  string
	}{
		{"0.0.0.0:18082", &net.TCPAddr{IP: net.IPv6zero, Port: 18082}, "http://0.0.0.0:18082/"},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}, "http://127.0.0.1:41234/"},
		{"localhost:8080", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://localhost:8080/"},
		{"[::1]:9000", &net.TCPAddr{IP: net.IPv6loopback, Port: 9000}, "http://[::1]:9000/"},
		{":8080", &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, "http://localhost:8080/"},
	} {
		if got := Address(tt.addr, tt.bound); got != tt.want {
			t.Errorf("Address(%q, %v) = %q, want %q", tt.addr, tt.bound, got, tt.want)
		}
	}
}
