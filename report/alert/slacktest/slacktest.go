// Package slacktest is a Slack for tests, in one httptest server: an
// incoming webhook at WebhookPath and the Web API methods clickrecon calls
// with a bot token under /api/ (chat.postMessage with its metadata,
// chat.update, conversations.history, which reads the metadata back, and
// the CSV upload, which it refuses: a warning, never a failure). The code
// under test talks to it through the real slack-go client and net/http,
// as it talks to Slack.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// WebhookPath is the webhook's path; its last segment is the webhook's
// secret, which a test can look for where it must never appear.
const WebhookPath = "/services/T000/B000/SECRETPART"

// ChannelID is the one channel the bot API knows.
const ChannelID = "C0SLACKTEST"

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

	mu      sync.Mutex
	posts   []Post
	updates []Post
	status  int
	// hook runs on the i-th post (from 0) once it is kept, before the
	// answer; it returns whether to withhold the answer until the poster
	// gives up (its timeout, its death); the wait is bounded.
	hook func(i int) (stall bool)
}

// New starts a fake Slack, closed when t ends.
func New(t *testing.T) *Server {
	t.Helper()
	s := &Server{t: t, status: http.StatusOK}
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
	switch r.URL.Path {
	case WebhookPath:
		s.webhook(w, r)
	case "/api/chat.postMessage":
		s.postMessage(w, r)
	case "/api/chat.update":
		s.update(w, r)
	case "/api/conversations.history":
		s.history(w, r)
	default: // the CSV upload: a warning, never a failure
		answer(w, map[string]any{"ok": false, "error": "not_allowed_token_type"})
	}
}

// webhook takes a message as Slack's incoming webhook does: JSON with a
// text and 1 to 50 blocks, answered "ok".
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	status := s.status
	s.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, "internal_error", status)
		return
	}
	var p Post
	if err := json.Unmarshal(b, &p); err != nil || p.Text == "" || len(p.Blocks) == 0 || len(p.Blocks) > 50 {
		http.Error(w, "invalid_blocks", http.StatusBadRequest)
		return
	}
	p.Body = string(b)
	if s.keep(r, p) {
		io.WriteString(w, "ok")
	}
}

// postMessage takes chat.postMessage's form, metadata included.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := Post{Text: r.Form.Get("text"), Body: r.Form.Encode()}
	if md := r.Form.Get("metadata"); md != "" {
		p.Metadata = json.RawMessage(md)
	}
	if blocks := r.Form.Get("blocks"); blocks != "" {
		_ = json.Unmarshal([]byte(blocks), &p.Blocks)
	}
	if s.keep(r, p) {
		s.mu.Lock()
		ts := s.posts[len(s.posts)-1].TS
		s.mu.Unlock()
		answer(w, map[string]any{"ok": true, "channel": ChannelID, "ts": ts})
	}
}

// keep records p with a new ts and runs the hook; it returns false when
// the answer is withheld.
func (s *Server) keep(r *http.Request, p Post) bool {
	s.mu.Lock()
	i := len(s.posts)
	now := time.Now()
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

// update takes chat.update of a message that was posted.
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ts := r.Form.Get("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.posts {
		if p.TS == ts {
			s.updates = append(s.updates, Post{TS: ts, Text: r.Form.Get("text"), Body: r.Form.Encode()})
			answer(w, map[string]any{"ok": true, "channel": ChannelID, "ts": ts})
			return
		}
	}
	answer(w, map[string]any{"ok": false, "error": "message_not_found"})
}

// history answers conversations.history: the posts since oldest, newest
// first, with their metadata when include_all_metadata is set.
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Form.Get("channel") != ChannelID {
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	oldest, _ := strconv.ParseFloat(r.Form.Get("oldest"), 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Post{}
	for i := len(s.posts) - 1; i >= 0; i-- {
		p := s.posts[i]
		if ts, _ := strconv.ParseFloat(p.TS, 64); ts < oldest {
			continue
		}
		p.Blocks = nil
		if r.Form.Get("include_all_metadata") != "1" {
			p.Metadata = nil
		}
		out = append(out, p)
	}
	answer(w, map[string]any{"ok": true, "messages": out, "has_more": false})
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
