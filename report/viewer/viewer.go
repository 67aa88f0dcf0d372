// Package viewer is clickrecon serve's web server: a read-only view of a
// report destination (a folder or a bucket), with an index of its runs
// and each run's files. It never writes nor deletes there.
package viewer

import (
	"bytes"
	_ "embed"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

// The headers of every answer. The report page is self-contained: its
// styles are inline (a <style> element and style attributes), its chart
// inline SVG, and it has no script, so the policy allows inline styles
// and nothing else; no page is framed, sniffed or cached, and a link
// followed from a report sends no Referer.
var headers = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"X-Frame-Options":         "DENY",
	"Cache-Control":           "no-store",
}

// New returns the handler that answers GET / with the index of d's runs and GET
// /<run key>/<file> with one file of a run, as report.Dest.ReadRunFile
// allows; anything else is 404 (no folder is ever listed) or 405. With
// loopback, it answers only a request addressed to a loopback host: a
// web page elsewhere that makes its own name resolve to 127.0.0.1 (DNS
// rebinding) must not read the reports through the visitor's browser.
func New(d *report.Dest, log *slog.Logger, loopback bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if loopback && !loopbackHost(r.Host) {
			http.Error(w, "clickrecon serve answers http://127.0.0.1 or http://localhost only", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "clickrecon serve only reads", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.EscapedPath() == "/" {
			serveIndex(w, r, d, log)
			return
		}
		key, name, ok := runFilePath(r.URL)
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, ctype, err := d.ReadRunFile(r.Context(), key, name)
		switch {
		case errors.Is(err, report.ErrNoReport):
			http.NotFound(w, r)
			return
		case err != nil:
			log.Error("read a report file", "run_key", key, "file", name, "err", err)
			http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", ctype)
		if !strings.HasSuffix(name, ".html") && !strings.HasSuffix(name, ".json") {
			// A CSV or Markdown file opens as a download, never as a page.
			w.Header().Set("Content-Disposition", "attachment; filename="+name)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	})
}

// IsLoopback reports whether a server listens on a loopback address only:
// New's loopback.
func IsLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// loopbackHost reports whether a request's Host names this machine:
// localhost or a loopback address, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runFilePath splits the request's path into a run key and a file name:
// exactly two segments as sent, neither holding an escaped slash or
// backslash, a dot segment or anything else that is not a plain name.
// ReadRunFile then admits only a run key's shape and clickrecon's file
// names.
func runFilePath(u *url.URL) (key, name string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if len(parts) != 2 {
		return "", "", false
	}
	var plain [2]string
	for i, p := range parts {
		s, err := url.PathUnescape(p)
		if err != nil || s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) || s != p {
			return "", "", false
		}
		plain[i] = s
	}
	return plain[0], plain[1], true
}

//go:embed index.html.tmpl
var indexPage string

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"gap":    indexDelta,
	"status": report.StatusText,
	"path":   func(key string) string { return "/" + url.PathEscape(key) + "/report.html" },
	"time":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
}).Parse(indexPage))

// indexDelta is a run's delta in the index, signed as the summary table
// and report.html sign it (+12, -1,234, 0), or unknown when no day was
// read on both sides.
func indexDelta(r report.Report) string {
	if r.Totals.Unknown {
		return "unknown"
	}
	return report.Signed(r.Totals.Delta)
}

// serveIndex writes the index of d's runs, newest first.
func serveIndex(w http.ResponseWriter, r *http.Request, d *report.Dest, log *slog.Logger) {
	runs, err := d.Runs(r.Context())
	if err != nil {
		log.Error("list the reports", "err", err)
		http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
		return
	}
	var page strings.Builder
	if err := indexTemplate.Execute(&page, struct {
		Base string
		Runs []report.Run
	}{d.Base(), runs}); err != nil {
		log.Error("render the index of reports", "err", err)
		http.Error(w, "the index could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, page.String())
}
