package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// zones are the workspaces' RECON_TZ, in turn: each zone's last three
// days hold the gap's instant (see gapAt).
var zones = []string{"UTC", "Europe/Warsaw", "America/New_York", "Asia/Tokyo"}

// workspace is one entry of the fleet: its Elido side and its store's.
type workspace struct {
	index  int
	name   string // the fleet file's [name]
	id     string // ELIDO_WORKSPACE_ID
	key    string // its own API key
	zone   string
	gap    bool // the store lost the clicks of one hour (gapAt)
	elido  []elidotest.Click
	stored []elidotest.Click // what the receiver kept
	schema string            // the store's schema on the server
}

// gapAt is the hour whose clicks a gapped workspace's store lost: noon
// UTC two days ago, a day inside the default window (the last three
// complete days) in every zone of zones, whatever the hour of the bench.
func gapAt(now time.Time) (time.Time, time.Time) {
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -2).Add(12 * time.Hour)
	return start, start.Add(time.Hour)
}

// newWorkspaces makes n workspaces, every gapEvery-th (from 0) with a gap,
// each with a week of clicks up to now: about perHour an hour over five
// links, from a seed of its own.
func newWorkspaces(n, gapEvery, perHour int, now time.Time) []*workspace {
	gapStart, gapEnd := gapAt(now)
	first := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -7)
	countries := []string{"PL", "DE", "US", "JP", "FR", ""}
	var ws []*workspace
	for i := range n {
		w := &workspace{
			index: i,
			name:  fmt.Sprintf("ws-%03d", i),
			id:    strconv.Itoa(50000 + i),
			key:   fmt.Sprintf("sk_fleet_%03d_not_a_secret", i),
			zone:  zones[i%len(zones)],
			gap:   gapEvery > 0 && i%gapEvery == 0,
		}
		rng := rand.New(rand.NewPCG(uint64(i), 20261205))
		for t := first; t.Add(time.Hour).Before(now); t = t.Add(time.Hour) {
			for range perHour/2 + rng.IntN(perHour+1) {
				c := elidotest.Click{
					TS:          t.Add(time.Duration(rng.Int64N(int64(time.Hour)))).Truncate(time.Millisecond),
					LinkID:      fmt.Sprintf("lnk_%d", rng.IntN(5)),
					CountryCode: countries[rng.IntN(len(countries))],
				}
				w.elido = append(w.elido, c)
				if !w.gap || c.TS.Before(gapStart) || !c.TS.Before(gapEnd) {
					w.stored = append(w.stored, c)
				}
			}
		}
		ws = append(ws, w)
	}
	return ws
}

// truth is what a workspace's report must say of day (YYYY-MM-DD, in
// its zone): Elido's count and the store's.
func (w *workspace) truth(day string) (api, local int64, err error) {
	loc, err := time.LoadLocation(w.zone)
	if err != nil {
		return 0, 0, err
	}
	d, err := time.ParseInLocation(time.DateOnly, day, loc)
	if err != nil {
		return 0, 0, err
	}
	start, end := d, time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc)
	count := func(cs []elidotest.Click) (n int64) {
		for _, c := range cs {
			if !c.TS.Before(start) && c.TS.Before(end) {
				n++
			}
		}
		return n
	}
	return count(w.elido), count(w.stored), nil
}

// fake is one Elido API for every workspace: a fake of its own per
// workspace (sources/elidotest) behind one address, with a rate limit
// per API key, as Elido's: at most limit requests in a calendar minute,
// a 429 with X-RateLimit-Reset beyond it.
type fake struct {
	srv   *http.Server
	url   string
	limit int
	by    map[string]*elidotest.Server // by workspace id
	keys  map[string]string            // workspace id → key

	mu       sync.Mutex
	minute   map[string]time.Time // by key: the minute counted…
	count    map[string]int       // … and its requests
	requests int
	limited  int // 429s answered
	maxCount int // the most requests one key made in a minute
}

func startFake(ws []*workspace, limit int) (*fake, error) {
	f := &fake{limit: limit, by: map[string]*elidotest.Server{}, keys: map[string]string{},
		minute: map[string]time.Time{}, count: map[string]int{}}
	for _, w := range ws {
		s := elidotest.NewServer(w.id, w.key, w.elido)
		f.by[w.id], f.keys[w.id] = s, w.key
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.close()
		return nil, err
	}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(l)
	f.url = "http://" + l.Addr().String() + "/v1"
	return f, nil
}

func (f *fake) close() {
	if f.srv != nil {
		f.srv.Close()
	}
	for _, s := range f.by {
		s.Close()
	}
}

// counts returns the requests received and the 429s answered so far.
func (f *fake) counts() (requests, limited, maxPerMinute int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.limited, f.maxCount
}

// ServeHTTP counts the request against its key's minute, answers 429
// beyond the limit, and otherwise hands it to its workspace's fake.
func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/v1/workspaces/")
	id, _, _ := strings.Cut(rest, "/")
	s, ok := f.by[id]
	if !ok {
		http.Error(w, `{"error":"not_found","message":"no such workspace"}`, http.StatusNotFound)
		return
	}
	key := r.Header.Get("Authorization")
	now := time.Now()
	minute := now.Truncate(time.Minute)
	f.mu.Lock()
	f.requests++
	if !f.minute[key].Equal(minute) {
		f.minute[key], f.count[key] = minute, 0
	}
	f.count[key]++
	n := f.count[key]
	f.maxCount = max(f.maxCount, n)
	over := n > f.limit
	if over {
		f.limited++
	}
	f.mu.Unlock()
	h := w.Header()
	reset := strconv.FormatInt(minute.Add(time.Minute).Unix(), 10)
	if over {
		h.Set("X-RateLimit-Limit", strconv.Itoa(f.limit))
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", reset)
		h.Set("X-RateLimit-Scope", "key")
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":"rate_limited","message":"rate limit exceeded for this API key"}`)
		return
	}
	s.ServeHTTP(&limitHeaders{ResponseWriter: w, limit: f.limit, remaining: f.limit - n, reset: reset}, r)
}

// limitHeaders replaces the per-workspace fake's X-RateLimit-* headers
// with the key's, as the answer's status is written.
type limitHeaders struct {
	http.ResponseWriter
	limit, remaining int
	reset            string
	wrote            bool
}

func (l *limitHeaders) WriteHeader(status int) {
	if !l.wrote {
		l.wrote = true
		h := l.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(l.limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(l.remaining, 0)))
		h.Set("X-RateLimit-Reset", l.reset)
	}
	l.ResponseWriter.WriteHeader(status)
}

func (l *limitHeaders) Write(b []byte) (int, error) {
	if !l.wrote {
		l.WriteHeader(http.StatusOK)
	}
	return l.ResponseWriter.Write(b)
}
