package alert

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
)

// Secrets the fake Slack accepts. Tests check that neither ever shows in an
// error, a log line or an Outcome.
const (
	testToken     = "xoxb-1234-5678-s3cretTokenValue"
	testHookPath  = "/services/T0000/B0000/s3cretHookPath"
	testChannelID = "C0ALERTS"
)

// fault is a canned failure for one endpoint.
type fault struct {
	status     int    // HTTP status; 0 with slackErr for an ok:false answer
	retryAfter string // Retry-After header
	slackErr   string // {"ok":false,"error":slackErr}
	always     bool   // stays instead of being used up
}

// call is one request the fake received.
type received struct {
	path string
	form url.Values      // Web API methods (form-encoded)
	hook json.RawMessage // webhook payload
	file []byte          // an upload's file part
}

// fakeSlack speaks the incoming webhook protocol and the parts of the Web
// API clickrecon uses: chat.postMessage, chat.update and the files upload
// v2 flow (files.getUploadURLExternal, the upload URL,
// files.completeUploadExternal).
type fakeSlack struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []received
	faults   map[string][]fault
	messages map[string]bool // ts of messages posted, which chat.update accepts
	nextTS   int
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{t: t, faults: map[string][]fault{}, messages: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) webhookURL() string { return f.srv.URL + testHookPath }
func (f *fakeSlack) apiURL() string     { return f.srv.URL + "/api/" }

// fail makes the next request to path (or all, with always) fail.
func (f *fakeSlack) fail(path string, ft fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[path] = append(f.faults[path], ft)
}

// got returns the requests received on path, in order.
func (f *fakeSlack) got(path string) []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rs []received
	for _, r := range f.requests {
		if r.path == path {
			rs = append(rs, r)
		}
	}
	return rs
}

func (f *fakeSlack) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeSlack) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := received{path: r.URL.Path}
	switch {
	case r.URL.Path == testHookPath:
		b, _ := io.ReadAll(r.Body)
		rec.hook = b
	case strings.HasPrefix(r.URL.Path, "/upload/"):
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			f.t.Errorf("upload without the bot token")
		}
		file, _, err := r.FormFile("file")
		if err != nil {
			f.t.Errorf("upload: %v", err)
			http.Error(w, "bad upload", http.StatusBadRequest)
			return
		}
		rec.file, _ = io.ReadAll(file)
	case strings.HasPrefix(r.URL.Path, "/api/"):
		if err := r.ParseForm(); err != nil {
			f.t.Errorf("%s: %v", r.URL.Path, err)
		}
		rec.form = r.PostForm
		if r.PostForm.Get("token") != testToken && r.Header.Get("Authorization") != "Bearer "+testToken {
			f.reply(w, map[string]any{"ok": false, "error": "invalid_auth"})
			f.requests = append(f.requests, rec)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	f.requests = append(f.requests, rec)

	if fs := f.faults[r.URL.Path]; len(fs) > 0 {
		ft := fs[0]
		if !ft.always {
			f.faults[r.URL.Path] = fs[1:]
		}
		if ft.retryAfter != "" {
			w.Header().Set("Retry-After", ft.retryAfter)
		}
		if ft.slackErr != "" {
			f.reply(w, map[string]any{"ok": false, "error": ft.slackErr})
			return
		}
		http.Error(w, http.StatusText(ft.status), ft.status)
		return
	}

	switch r.URL.Path {
	case testHookPath:
		var m map[string]any
		if err := json.Unmarshal(rec.hook, &m); err != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	case "/api/chat.postMessage":
		f.nextTS++
		ts := fmt.Sprintf("1700000000.%06d", f.nextTS)
		f.messages[ts] = true
		if b := rec.form.Get("blocks"); b != "" && !json.Valid([]byte(b)) { // a plain-text fallback has none
			f.t.Errorf("chat.postMessage: blocks are not JSON")
		}
		f.reply(w, map[string]any{"ok": true, "channel": testChannelID, "ts": ts})
	case "/api/chat.update":
		ts := rec.form.Get("ts")
		if rec.form.Get("channel") != testChannelID || !f.messages[ts] {
			f.reply(w, map[string]any{"ok": false, "error": "message_not_found"})
			return
		}
		f.reply(w, map[string]any{"ok": true, "channel": testChannelID, "ts": ts, "text": rec.form.Get("text")})
	case "/api/files.getUploadURLExternal":
		f.reply(w, map[string]any{"ok": true, "upload_url": f.srv.URL + "/upload/F0CSV", "file_id": "F0CSV"})
	case "/api/files.completeUploadExternal":
		f.reply(w, map[string]any{"ok": true, "files": []map[string]string{{"id": "F0CSV", "title": "report.csv"}}})
	default:
		if strings.HasPrefix(r.URL.Path, "/upload/") {
			fmt.Fprintf(w, "OK - %d", len(rec.file))
			return
		}
		f.reply(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

func (f *fakeSlack) reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// blocksOf decodes the blocks a request carried.
func blocksOf(t *testing.T, r received) []slack.Block {
	t.Helper()
	var raw []byte
	switch {
	case r.hook != nil:
		var m struct {
			Blocks json.RawMessage `json:"blocks"`
		}
		if err := json.Unmarshal(r.hook, &m); err != nil {
			t.Fatal(err)
		}
		raw = m.Blocks
	default:
		raw = []byte(r.form.Get("blocks"))
	}
	var bs slack.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatalf("blocks %s: %v", raw, err)
	}
	return bs.BlockSet
}

// headerOf returns the text of a request's header block.
func headerOf(t *testing.T, r received) string {
	t.Helper()
	for _, b := range blocksOf(t, r) {
		if h, ok := b.(*slack.HeaderBlock); ok {
			return h.Text.Text
		}
	}
	t.Fatal("no header block")
	return ""
}
