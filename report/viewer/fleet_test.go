package viewer

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

// A report location that holds a fleet's workspaces, each under its name
// as a run of it writes (config.Under), is served with every workspace
// on the index, by name, with its newest run's status, and each at
// /<name>/ as a location of its own: its index, its runs' files, its
// trend. A folder of another name, or with no run, is not listed.
func TestServeListsEveryWorkspaceOfAFleet(t *testing.T) {
	for name, base := range map[string]func(t *testing.T) string{
		"folder": func(t *testing.T) string { return t.TempDir() },
		"s3": func(t *testing.T) string {
			dir, _ := newS3(t, "nightly")
			return dir
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := base(t)
			writeRuns(t, config.Under(dir, "acme")) // ok, then discrepancies
			b, err := storage.Open(context.Background(), config.Under(dir, "brand-b"))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := b.WriteReport(context.Background(), serveReport(serveOld, time.Date(2026, 10, 23, 1, 0, 0, 0, time.UTC), report.StatusOK, 0)); err != nil {
				t.Fatal(err)
			}
			if name == "folder" {
				for _, other := range []string{"empty", "Notes"} {
					if err := os.Mkdir(filepath.Join(dir, other), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			d, err := storage.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			srv, logs := startServe(t, d)

			resp, index := get(t, srv, http.MethodGet, "/")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /: %s\n%s", resp.Status, logs.String())
			}
			acme := strings.Index(index, `href="/acme/"`)
			brandB := strings.Index(index, `href="/brand-b/"`)
			if acme < 0 || brandB < acme {
				t.Errorf("the index lists acme at %d and brand-b at %d, want both, by name:\n%s", acme, brandB, index)
			}
			for _, want := range []string{
				`<a href="/acme/` + serveNew + `/report.html">` + report.StatusText(report.StatusDiscrepancies) + `</a>`,
				`<a href="/brand-b/` + serveOld + `/report.html">` + report.StatusText(report.StatusOK) + `</a>`,
			} {
				if !strings.Contains(index, want) {
					t.Errorf("the index lacks the newest run's status %s", want)
				}
			}
			for _, not := range []string{"/empty/", "/Notes/", "No report yet"} {
				if strings.Contains(index, not) {
					t.Errorf("the index shows %q", not)
				}
			}

			resp, page := get(t, srv, http.MethodGet, "/acme/")
			if resp.StatusCode != http.StatusOK || !strings.Contains(page, `href="/acme/`+serveNew+`/report.html"`) ||
				!strings.Contains(page, `href="/acme/`+serveOld+`/report.html"`) || !strings.Contains(page, "clickrecon reports: acme") {
				t.Errorf("GET /acme/: %s, want acme's index with both its runs\n%s", resp.Status, page)
			}
			if strings.Contains(page, `href="/brand-b/`) {
				t.Errorf("acme's index lists brand-b")
			}
			resp, html := get(t, srv, http.MethodGet, "/acme/"+serveNew+"/report.html")
			if resp.StatusCode != http.StatusOK || !strings.Contains(html, `href="/acme/`+serveNew+`/report.json"`) || !strings.Contains(html, `href="/acme/">`) {
				t.Errorf("GET acme's report.html: %s, want the page with a bar of acme's links", resp.Status)
			}
			for target, want := range map[string]int{
				"/acme/" + serveNew + "/days.csv":    http.StatusOK,
				"/acme/trend":                        http.StatusOK,
				"/brand-b/" + serveNew + "/days.csv": http.StatusNotFound, // acme's run, not brand-b's
				"/" + serveNew + "/report.html":      http.StatusNotFound, // not at the top
				"/acme/brand-b/":                     http.StatusNotFound,
				"/acme/..%2fbrand-b/":                http.StatusNotFound,
			} {
				if resp, _ := get(t, srv, http.MethodGet, target); resp.StatusCode != want {
					t.Errorf("GET %s: %s, want %d", target, resp.Status, want)
				}
			}
			if resp, _ := get(t, srv, http.MethodGet, "/acme"); resp.Request.URL.Path != "/acme/" {
				t.Errorf("GET /acme ends at %s, want /acme/", resp.Request.URL.Path)
			}
			// The trend of / holds the workspaces' nights (the top holds
			// no run of its own); a workspace's links back to its index.
			_, all := get(t, srv, http.MethodGet, "/trend?from=2026-10-20&to=2026-10-31")
			if strings.Contains(all, "No run's report holds a day") || !strings.Contains(all, "Workspace ws_1") {
				t.Errorf("the trend of / does not show the workspaces' runs:\n%s", all)
			}
			_, own := get(t, srv, http.MethodGet, "/acme/trend?from=2026-10-20&to=2026-10-31")
			if !strings.Contains(own, `<a href="/acme/">`) || !strings.Contains(own, "Workspace ws_1") {
				t.Errorf("acme's trend does not show its runs or link back to /acme/:\n%s", own)
			}
		})
	}
}
