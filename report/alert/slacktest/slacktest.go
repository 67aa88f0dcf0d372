// Package slacktest is a Slack for tests, in one httptest server: an
// incoming webhook at WebhookPath and the Web API methods clickrecon calls
// with a bot token under /api/ (auth.test, chat.postMessage with its metadata,
// chat.update, conversations.history, which reads the metadata back, and
// the files upload v2 flow). Each endpoint can be made to fail (Fail). The
// code under test talks to it through the real slack-go client and
// net/http, as it talks to Slack.
package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// WebhookPath is the webhook's path in WebhookURL; its last segment is
// the webhook's secret, which a test can look for where it must never
// appear. Any path under /services/ is the webhook.
const WebhookPath = "/services/T000/B000/SECRETPART"

// ChannelID is the channel the bot API knows, unless an Option names
// another.
const ChannelID = "C0SLACKTEST"

// Option adjusts a Server.
type Option func(*Server)

// WithToken makes the Web API and the upload refuse any token but token
// (invalid_auth).
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithChannel makes channel the one channel the bot API knows.
func WithChannel(channel string) Option { return func(s *Server) { s.channel = channel } }

// WithClock makes the server stamp each post's ts by now instead of the
// wall clock: a simulation whose clock is virtual reads back, by its own
// time, what it posted.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// Request is one request the server received: its path, and the form (Web
// API), the JSON payload (webhook) or the file (upload) it carried.
type Request struct {
	Path string
	Form url.Values
	Hook json.RawMessage
	File []byte
}

// Fault is a canned failure of one endpoint.
type Fault struct {
	Status     int    // HTTP status; 0 with SlackErr for an ok:false answer
	RetryAfter string // Retry-After header
	SlackErr   string // {"ok":false,"error":SlackErr}
	Always     bool   // stays instead of being used up
}

// Post is a message Slack took: its ts, its fallback text, its blocks and
// (bot posts) its metadata as sent; Body is the request's body, whole.
type Post struct {
	TS       string            `json:"ts"`
	Text     string            `json:"text"`
	Blocks   []json.RawMessage `json:"blocks,omitempty"`
	Metadata json.RawMessage   `json:"metadata,omitempty"`
	Body     string            `json:"-"`
}

// Server is the fake Slack.
type Server struct {
	*httptest.Server
	t *testing.T

	token, channel string
	now            func() time.Time // ts of a post; time.Now unless WithClock

	mu       sync.Mutex
	requests []Request
	faults   map[string][]Fault
	posts    []Post
	updates  []Post
	status   int
	// hook runs on the i-th post (from 0) once it is kept, before the
	// answer; it returns whether to withhold the answer until the poster
	// gives up (its timeout, its death); the wait is bounded.
	hook func(i int) (stall bool)
}

// New starts a fake Slack, closed when t ends.
func New(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, status: http.StatusOK, channel: ChannelID, faults: map[string][]Fault{}, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// WebhookURL is the incoming webhook's URL (SLACK_WEBHOOK_URL).
func (s *Server) WebhookURL() string { return s.URL + WebhookPath }

// APIURL is the Web API's base (SLACK_API_URL).
func (s *Server) APIURL() string { return s.URL + "/api/" }

// SetStatus makes the webhook answer status (with a body of Slack's kind)
// instead of taking the post; http.StatusOK takes posts again.
func (s *Server) SetStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Fail makes the next request to path (every one, with Always) fail as
// f says.
func (s *Server) Fail(path string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], f)
}

// Clear drops the faults of path not used yet.
func (s *Server) Clear(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, path)
}

// Requests returns the requests received on path (every request, for
// ""), oldest first.
func (s *Server) Requests(path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rs []Request
	for _, r := range s.requests {
		if path == "" || r.Path == path {
			rs = append(rs, r)
		}
	}
	return rs
}

// SetHook sets the hook run on each post (see Server.hook).
func (s *Server) SetHook(hook func(i int) (stall bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

// Posts returns the messages posted, oldest first.
func (s *Server) Posts() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Post(nil), s.posts...)
}

// Texts returns the fallback text of each message posted, oldest first.
func (s *Server) Texts() []string {
	var out []string
	for _, p := range s.Posts() {
		out = append(out, p.Text)
	}
	return out
}

// unescape reads back what JSON escapes and Slack does not.
var unescape = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// Bodies returns each post's request body whole, with <, > and & as
// Slack reads them.
func (s *Server) Bodies() []string {
	var out []string
	for _, p := range s.Posts() {
		out = append(out, unescape.Replace(p.Body))
	}
	return out
}

// Updates returns the chat.update calls taken, oldest first.
func (s *Server) Updates() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Post(nil), s.updates...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.read(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	fault, faulty := s.fault(r.URL.Path)
	s.mu.Unlock()
	if faulty {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		if fault.SlackErr != "" {
			answer(w, map[string]any{"ok": false, "error": fault.SlackErr})
			return
		}
		http.Error(w, http.StatusText(fault.Status), fault.Status)
		return
	}
	switch path := r.URL.Path; {
	case strings.HasPrefix(path, "/services/"):
		s.webhook(w, r, rec)
	case strings.HasPrefix(path, "/upload/"):
		fmt.Fprintf(w, "OK - %d", len(rec.File))
	case path == "/api/chat.postMessage":
		s.postMessage(w, r, rec)
	case path == "/api/chat.update":
		s.update(w, rec)
	case path == "/api/conversations.history":
		s.history(w, rec)
	case path == "/api/auth.test":
		answer(w, map[string]any{"ok": true, "url": s.URL + "/", "team": "Test", "user": "clickrecon", "user_id": "U0BOT"})
	case path == "/api/files.getUploadURLExternal":
		answer(w, map[string]any{"ok": true, "upload_url": s.URL + "/upload/F0CSV", "file_id": "F0CSV"})
	case path == "/api/files.completeUploadExternal":
		answer(w, map[string]any{"ok": true, "files": []map[string]string{{"id": "F0CSV", "title": "report.csv"}}})
	default:
		answer(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// read reads r into a Request, checking the token; false: answered.
func (s *Server) read(w http.ResponseWriter, r *http.Request) (Request, bool) {
	rec := Request{Path: r.URL.Path}
	authorized := func(form url.Values) bool {
		return s.token == "" || form.Get("token") == s.token || r.Header.Get("Authorization") == "Bearer "+s.token
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/services/"):
		rec.Hook, _ = io.ReadAll(r.Body)
	case strings.HasPrefix(r.URL.Path, "/upload/"):
		if !authorized(nil) {
			s.t.Errorf("upload without the bot token")
		}
		file, _, err := r.FormFile("file")
		if err != nil {
			s.t.Errorf("upload: %v", err)
			http.Error(w, "bad upload", http.StatusBadRequest)
			return rec, false
		}
		rec.File, _ = io.ReadAll(file)
	case strings.HasPrefix(r.URL.Path, "/api/"):
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return rec, false
		}
		rec.Form = r.PostForm
		if !authorized(r.PostForm) {
			s.mu.Lock()
			s.requests = append(s.requests, rec)
			s.mu.Unlock()
			answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return rec, false
		}
	default:
		http.NotFound(w, r)
		return rec, false
	}
	return rec, true
}

// fault uses up the next fault of path, if any; s.mu is held.
func (s *Server) fault(path string) (Fault, bool) {
	fs := s.faults[path]
	if len(fs) == 0 {
		return Fault{}, false
	}
	if !fs[0].Always {
		s.faults[path] = fs[1:]
	}
	return fs[0], true
}

// webhook takes a message as Slack's incoming webhook does: JSON with a
// text and at most 50 blocks, answered "ok".
func (s *Server) webhook(w http.ResponseWriter, r *http.Request, rec Request) {
	s.mu.Lock()
	status := s.status
	s.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, "internal_error", status)
		return
	}
	var p Post
	if err := json.Unmarshal(rec.Hook, &p); err != nil || p.Text == "" || len(p.Blocks) > 50 {
		http.Error(w, "invalid_blocks", http.StatusBadRequest)
		return
	}
	p.Body = string(rec.Hook)
	if s.keep(r, p) {
		io.WriteString(w, "ok")
	}
}

// postMessage takes chat.postMessage's form, metadata included, into
// the one channel, named by its ID or, as Slack allows, by a #name.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, rec Request) {
	if ch := rec.Form.Get("channel"); ch != s.channel && !strings.HasPrefix(ch, "#") {
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	p := Post{Text: rec.Form.Get("text"), Body: rec.Form.Encode()}
	if md := rec.Form.Get("metadata"); md != "" {
		p.Metadata = json.RawMessage(md)
	}
	if b := rec.Form.Get("blocks"); b != "" { // a plain-text fallback has none
		if err := json.Unmarshal([]byte(b), &p.Blocks); err != nil {
			s.t.Errorf("chat.postMessage: blocks are not JSON: %v", err)
		}
	}
	if s.keep(r, p) {
		s.mu.Lock()
		ts := s.posts[len(s.posts)-1].TS
		s.mu.Unlock()
		answer(w, map[string]any{"ok": true, "channel": s.channel, "ts": ts})
	}
}

// keep records p with a new ts and runs the hook; it returns false when
// the answer is withheld.
func (s *Server) keep(r *http.Request, p Post) bool {
	s.mu.Lock()
	i := len(s.posts)
	now := s.now()
	p.TS = fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000+i)
	s.posts = append(s.posts, p)
	hook := s.hook
	s.mu.Unlock()
	if hook == nil || !hook(i) {
		return true
	}
	select {
	case <-r.Context().Done(): // the poster gave up or died
	case <-time.After(30 * time.Second):
		s.t.Errorf("the poster waited 30s for the answer to post %d: a post's wait is not bounded", i)
	}
	return false
}

// update takes chat.update of a message posted in the channel; metadata,
// when given, replaces the message's, as Slack does.
func (s *Server) update(w http.ResponseWriter, rec Request) {
	ts := rec.Form.Get("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.posts {
		if p.TS == ts && rec.Form.Get("channel") == s.channel {
			if md := rec.Form.Get("metadata"); md != "" {
				s.posts[i].Metadata = json.RawMessage(md)
			}
			s.updates = append(s.updates, Post{TS: ts, Text: rec.Form.Get("text"), Body: rec.Form.Encode()})
			answer(w, map[string]any{"ok": true, "channel": s.channel, "ts": ts, "text": rec.Form.Get("text")})
			return
		}
	}
	answer(w, map[string]any{"ok": false, "error": "message_not_found"})
}

// history answers conversations.history as Slack does: the posts since
// oldest (up to latest, when given), newest first, with their metadata only when
// include_all_metadata is set, limit posts a page (all, without a limit),
// the next page named by the cursor it returns.
func (s *Server) history(w http.ResponseWriter, rec Request) {
	if rec.Form.Get("channel") != s.channel {
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	oldest, _ := strconv.ParseFloat(rec.Form.Get("oldest"), 64)
	latest, err := strconv.ParseFloat(rec.Form.Get("latest"), 64)
	if err != nil || latest == 0 {
		latest = math.Inf(1)
	}
	limit, _ := strconv.Atoi(rec.Form.Get("limit"))
	start, _ := strconv.Atoi(rec.Form.Get("cursor"))
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Post{}
	for i := len(s.posts) - 1; i >= 0; i-- {
		p := s.posts[i]
		if ts, _ := strconv.ParseFloat(p.TS, 64); ts < oldest || ts > latest {
			continue
		}
		p.Blocks = nil
		if rec.Form.Get("include_all_metadata") != "1" {
			p.Metadata = nil
		}
		out = append(out, p)
	}
	start = min(start, len(out))
	end := len(out)
	if limit > 0 {
		end = min(start+limit, end)
	}
	resp := map[string]any{"ok": true, "messages": out[start:end], "has_more": end < len(out)}
	if end < len(out) {
		resp["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
	}
	answer(w, resp)
}

// Add puts a message into the channel as if it had been posted at ts,
// with metadata (JSON, as Slack keeps it; "" for none): what a channel
// holds besides the posts under test.
func (s *Server) Add(ts time.Time, text, metadata string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Post{TS: fmt.Sprintf("%d.%06d", ts.Unix(), ts.Nanosecond()/1000), Text: text}
	if metadata != "" {
		p.Metadata = json.RawMessage(metadata)
	}
	s.posts = append(s.posts, p)
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Blocks decodes the blocks request r carried: a webhook's payload or a
// Web API form.
func Blocks(t *testing.T, r Request) []slack.Block {
	t.Helper()
	var raw []byte
	switch {
	case r.Hook != nil:
		var m struct {
			Blocks json.RawMessage `json:"blocks"`
		}
		if err := json.Unmarshal(r.Hook, &m); err != nil {
			t.Fatal(err)
		}
		raw = m.Blocks
	default:
		raw = []byte(r.Form.Get("blocks"))
	}
	var bs slack.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatalf("blocks %s: %v", raw, err)
	}
	return bs.BlockSet
}

// Header returns the text of the header block request r carried.
func Header(t *testing.T, r Request) string {
	t.Helper()
	for _, b := range Blocks(t, r) {
		if h, ok := b.(*slack.HeaderBlock); ok {
			return h.Text.Text
		}
	}
	t.Fatal("no header block")
	return ""
}

// Sleeps stands in for the sleep a notifier waits on between retries
// (alert.WithClock): it records each wait instead of waiting, so that a
// test need not wait out a Retry-After.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns at once: ctx's error, if it has ended.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// Slept returns the waits asked for, in order.
func (s *Sleeps) Slept() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
