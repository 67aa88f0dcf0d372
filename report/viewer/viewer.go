// Package viewer is clickrecon serve's web server: a read-only view of a
// report destination (a folder or a bucket), with an index of its runs,
// each run's files and its repair plan. It never writes nor deletes there,
// and holds no file whole: the index reads the few fields it lists from
// each report.json, and a file is copied out as it is read.
package viewer

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// The headers of every answer. The report page is self-contained: its
// styles are inline (a <style> element and style attributes), its chart
// inline SVG, and it has no script, so the policy allows inline styles
// and nothing else; no page is framed, sniffed or cached, nothing is
// loaded from another origin nor lent to one, and a link followed from a
// report sends no Referer.
var headers = map[string]string{
	"Content-Security-Policy":      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cache-Control":                "no-store",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// New returns the handler that answers GET / with the index of d's runs,
// GET /<run key>/<file> with one file of a run, as
// storage.Dest.OpenRunFile allows (a report.html with a bar of links to
// the index and to the run's other files), GET /repair-<run key>/ with
// the files of a run's repair plan and GET /repair-<run key>/<file> with
// one of them, as storage.Dest.OpenRepairFile allows; anything else is
// 404 (no run folder is ever listed) or 405. With loopback, it answers
// only a request addressed to a loopback host: a web page elsewhere that
// makes its own name resolve to 127.0.0.1 (DNS rebinding) must not read
// the reports through the visitor's browser.
//
// A folder under d named as a fleet's workspace (storage.WorkspaceName)
// that holds runs is listed on the index with its newest run, and served
// at /<name>/ as d itself is at /: its index, its runs' files, its repair
// plans and its trend.
//
// With a run history (WithHistory), the trend page of / reads the
// history, as clickrecon trend does: every recorded run, pruned or not,
// and when Slack was told; a workspace folder's reads its reports.
func New(d *storage.Dest, log *slog.Logger, loopback bool, opts ...Option) http.Handler {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
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
		p := r.URL.EscapedPath()
		name, rest, nested := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if sub, ok := d.Sub(name); ok && p != "/trend" {
			if !nested {
				http.Redirect(w, r, "/"+name+"/", http.StatusMovedPermanently)
				return
			}
			if ok, err := sub.IsDir(); err != nil || !ok {
				http.NotFound(w, r)
				return
			}
			serve(w, r, sub, nil, "/"+name, "/"+rest, log)
			return
		}
		serve(w, r, d, o.history, "", p, log)
	})
}

// Option is a setting of New.
type Option func(*options)

type options struct {
	history *history.History
}

// WithHistory has the trend page of / read the run history h.
func WithHistory(h *history.History) Option {
	return func(o *options) { o.history = h }
}

// serve answers the request for the path p (escaped) of the destination
// d, whose pages are under prefix ("" or "/<workspace>"); h, when not nil,
// is the run history its trend page reads.
func serve(w http.ResponseWriter, r *http.Request, d *storage.Dest, h *history.History, prefix, p string, log *slog.Logger) {
	switch p {
	case "/":
		serveIndex(w, r, d, prefix, log)
		return
	case "/trend":
		serveTrend(w, r, d, h, prefix, log, time.Now())
		return
	}
	segs, ok := pathSegments(p)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if key, isRepair := strings.CutPrefix(segs[0], storage.RepairPrefix); isRepair {
		if len(segs) == 2 && segs[1] == "" {
			serveRepair(w, r, d, prefix, key, log)
			return
		}
		f, err := d.OpenRepairFile(key, strings.Join(segs[1:], "/"))
		serveFile(w, r, f, err, nil, log)
		return
	}
	if len(segs) != 2 || segs[1] == "" {
		http.NotFound(w, r)
		return
	}
	key, name := segs[0], segs[1]
	f, err := d.OpenRunFile(r.Context(), key, name)
	var bar []byte
	if err == nil && name == "report.html" {
		bar = runBar(d, prefix, key)
	}
	serveFile(w, r, f, err, bar, log)
}

// serveFile answers with the file f (err when it could not be opened):
// its length and type, then its bytes as they are read, never the whole
// file in memory. bar, when not nil, is put right after the page's
// <body>. A file that turns out to have changed while it was sent (an
// object rewritten meanwhile) is cut off, the connection dropped, so that
// no client takes it for whole.
func serveFile(w http.ResponseWriter, r *http.Request, f *storage.RunFile, err error, bar []byte, log *slog.Logger) {
	switch {
	case errors.Is(err, storage.ErrNoReport):
		http.NotFound(w, r)
		return
	case err != nil:
		log.Error("read a report file", "path", r.URL.EscapedPath(), "err", err)
		http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
		return
	}
	var head []byte
	if bar != nil {
		// <body> is in the page's first few kilobytes, after its styles.
		buf := make([]byte, 16<<10)
		n, err := io.ReadFull(f, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			f.Close()
			log.Error("read a report file", "path", r.URL.EscapedPath(), "err", err)
			http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
			return
		}
		head = buf[:n]
		if i := bytes.Index(head, []byte("<body>")); i >= 0 {
			i += len("<body>")
			head = append(append(append([]byte(nil), head[:i]...), bar...), head[i:]...)
		}
		f.Size += int64(len(head) - n)
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	if !strings.HasPrefix(f.ContentType, "text/html") && !strings.HasPrefix(f.ContentType, "application/json") && !strings.HasPrefix(f.ContentType, "text/plain") {
		// A CSV or Markdown file opens as a download, never as a page.
		name := r.URL.EscapedPath()
		name = name[strings.LastIndexByte(name, '/')+1:]
		w.Header().Set("Content-Disposition", "attachment; filename="+name)
	}
	if r.Method == http.MethodHead {
		f.Close()
		return
	}
	_, err = w.Write(head)
	if err == nil {
		err = copyOut(w, f, f.Size-int64(len(head)))
	}
	if cerr := f.Close(); cerr != nil && err == nil {
		log.Error("a report file changed while it was sent: the answer is cut off", "path", r.URL.EscapedPath(), "err", cerr)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		log.Warn("a report file was not sent whole", "path", r.URL.EscapedPath(), "err", err)
		panic(http.ErrAbortHandler)
	}
}

// copyOut copies the size bytes of f to w a buffer at a time; each
// write has a minute of its own, so that a large file reaches a slow
// client while one that stops reading is let go. A file longer or
// shorter than size is an error: what was declared is never overrun.
func copyOut(w http.ResponseWriter, f io.Reader, size int64) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if int64(n) > size {
			return fmt.Errorf("the file is longer than the %d bytes its answer declared", size)
		}
		size -= int64(n)
		if err == io.EOF && size > 0 {
			return fmt.Errorf("the file ended %d bytes short of what its answer declared", size)
		}
		if n > 0 {
			rc.SetWriteDeadline(time.Now().Add(time.Minute))
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// IsLoopback reports whether a server listens on a loopback address only:
// New's loopback.
func IsLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Address is the URL to print for a server told to listen on addr
// (HOST:PORT, as given) and listening on bound: the host as given, so
// that 0.0.0.0:8080 prints http://0.0.0.0:8080/ and localhost:8080
// http://localhost:8080/, with the port it listens on (port 0 is a free
// one). No host (":8080", every address) prints localhost.
func Address(addr string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		host = "localhost"
	}
	port := ""
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
	} else if _, p, err := net.SplitHostPort(bound.String()); err == nil {
		port = p
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
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

// pathSegments splits the request's path into two or three segments as
// sent, none holding an escaped slash or backslash, a dot segment or
// anything else that is not a plain name; only the last may be empty (a
// folder's trailing slash). OpenRunFile and OpenRepairFile then admit
// only a run key's shape and the names of their files.
func pathSegments(escaped string) ([]string, bool) {
	parts := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, false
	}
	for i, p := range parts {
		if p == "" && i == len(parts)-1 && i == 1 {
			continue
		}
		s, err := url.PathUnescape(p)
		if err != nil || s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) || s != p {
			return nil, false
		}
	}
	return parts, true
}

//go:embed pages.html.tmpl
var pages string

var templates = template.Must(template.New("pages").Funcs(template.FuncMap{
	"gap":    indexDelta,
	"status": report.StatusText,
	"path":   func(prefix, key string) string { return prefix + "/" + url.PathEscape(key) + "/report.html" },
	"repair": func(prefix, key string) string {
		return prefix + "/" + storage.RepairPrefix + url.PathEscape(key) + "/"
	},
	"file": func(prefix, key, name string) string {
		return prefix + "/" + storage.RepairPrefix + url.PathEscape(key) + "/" + name
	},
	"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"size": func(n int64) string { return words.Num(n) + " B" },
}).Parse(pages))

// indexDelta is a run's delta in the index, signed as the summary table
// and report.html sign it (+12, -1,234, 0), or unknown when no day was
// read on both sides.
func indexDelta(r report.Report) string {
	if r.Totals.Unknown {
		return "unknown"
	}
	return words.Signed(r.Totals.Delta)
}

// serveIndex writes the index of d's runs, newest first, under prefix:
// at the top ("" prefix), the fleet's workspaces under d first, each with
// its newest run.
func serveIndex(w http.ResponseWriter, r *http.Request, d *storage.Dest, prefix string, log *slog.Logger) {
	runs, err := d.Runs(r.Context())
	var workspaces []storage.Workspace
	if err == nil && prefix == "" {
		workspaces, err = d.Workspaces(r.Context())
	}
	if err != nil {
		log.Error("list the reports", "err", err)
		http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
		return
	}
	servePage(w, "index", struct {
		Base       string
		Prefix     string
		Workspace  string
		Workspaces []storage.Workspace
		Runs       []storage.Run
	}{d.Base(), prefix, strings.TrimPrefix(prefix, "/"), workspaces, runs}, log)
}

// serveTrend writes the trend page of the days from ?from= to ?to=
// (YYYY-MM-DD; by default the ?nights= days, 90 unless given, that ended
// by yesterday, UTC), of ?workspace= (every workspace when not given),
// read from the run history h when there is one, else from d's reports
// one at a time; the page links back to prefix's index. A bad parameter
// is 400, saying which.
func serveTrend(w http.ResponseWriter, r *http.Request, d *storage.Dest, h *history.History, prefix string, log *slog.Logger, now time.Time) {
	q := r.URL.Query()
	from, to, err := trend.Range(q.Get("from"), q.Get("to"), q.Get("nights"), now)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t, err := trend.New(from, to)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	base := d.Base()
	if h != nil {
		base = "the run history (HISTORY_DSN)"
		if _, err := trend.ReadHistory(r.Context(), h, t, q.Get("workspace")); err != nil {
			log.Error("read the run history for the trend", "err", err)
			http.Error(w, "the run history could not be read; see the server's log", http.StatusBadGateway)
			return
		}
	} else if _, err := trend.Read(r.Context(), d, t, q.Get("workspace")); err != nil {
		log.Error("read the reports for the trend", "err", err)
		http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
		return
	}
	var page bytes.Buffer
	data := trend.PageData{Base: base, From: from.String(), To: to.String(), Workspace: q.Get("workspace"), Series: t.Series(), Back: prefix + "/"}
	if err := trend.WritePage(&page, data); err != nil {
		log.Error("render a page", "page", "trend", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	writePage(w, page.Bytes())
}

// serveRepair writes the page of the run runKey's repair plan: its files.
func serveRepair(w http.ResponseWriter, r *http.Request, d *storage.Dest, prefix, runKey string, log *slog.Logger) {
	files, err := d.RepairFiles(runKey)
	switch {
	case errors.Is(err, storage.ErrNoReport):
		http.NotFound(w, r)
		return
	case err != nil:
		log.Error("list a repair plan", "run_key", runKey, "err", err)
		http.Error(w, "the report destination could not be read; see the server's log", http.StatusBadGateway)
		return
	}
	// Whether the run's report is there to link to: it is not read.
	page, err := d.OpenRunFile(r.Context(), runKey, "report.html")
	if err == nil {
		page.Close()
	}
	servePage(w, "repair", struct {
		Prefix string
		Key    string
		Report bool
		Files  []storage.RepairFile
	}{prefix, runKey, err == nil, files}, log)
}

// servePage renders the page name of the templates with data.
func servePage(w http.ResponseWriter, name string, data any, log *slog.Logger) {
	var page bytes.Buffer
	if err := templates.ExecuteTemplate(&page, name, data); err != nil {
		log.Error("render a page", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	writePage(w, page.Bytes())
}

// writePage answers with the rendered page b.
func writePage(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// runBar is the bar of links put at the top of a served report.html: back
// to the index, and to the run's other files and its repair plan.
func runBar(d *storage.Dest, prefix, runKey string) []byte {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "bar", struct {
		Prefix string
		Key    string
		Repair bool
	}{prefix, runKey, d.HasRepair(runKey)}); err != nil {
		return nil
	}
	return b.Bytes()
}
