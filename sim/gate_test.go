package sim

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
)

// A point is a side-effect boundary a night passes: a statement reaching
// a database, a request reaching Slack or the object store. The gate sees
// every one and decides, by the night's plan, whether it goes through.
type point struct {
	kind string // "history", "store", "write" (the repair's role), "slack", "s3"
	what string // the statement, or METHOD path
}

// A plan is the fault of one night: where it strikes (match, the n-th
// point matching, from 1) and how.
type plan struct {
	name  string // the fault's kind, for the figures
	match func(p point) bool
	nth   int
	// after: the point's effect happens, then the fault (a kill after the
	// post, an answer lost); else before it.
	after bool
	// how: "kill" (the process dies: the night's context ends and every
	// later side effect fails), "term" (SIGTERM: the context ends, the run
	// ends as it can), "lose" (the point's effect happens, its answer is
	// lost), "fail" (the point fails, once).
	how string
}

// gate is the night's fault controller, shared by every wrapper.
type gate struct {
	mu     sync.Mutex
	plan   *plan
	seen   int
	fired  bool
	at_    string // the point the fault struck
	dead   bool
	down   map[string]bool // a database kind gone for the night
	refuse bool            // the object store refuses writes for the night
	status int             // Slack answers this status to every post for the night
	cancel context.CancelFunc
	// unsent are the bodies of the Slack posts that died at the gate
	// before they reached Slack, every night's: a webhook's run marked
	// them sent, and counts what they told as possibly told.
	unsent []string
}

var errDead = errors.New("sim: the process is dead")

// refusedErr is what a database that is gone answers: a refused
// connection.
func refusedErr() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func (g *gate) reset(p *plan, cancel context.CancelFunc) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.plan, g.seen, g.fired, g.dead, g.at_ = p, 0, false, false, ""
	g.down, g.refuse, g.status, g.cancel = map[string]bool{}, false, 0, cancel
}

func (g *gate) isDead() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dead
}

// die ends the process: g.mu is held.
func (g *gate) die(term bool) {
	if !term {
		g.dead = true
	}
	if g.cancel != nil {
		g.cancel()
	}
}

// decision is what happens at a point.
type decision struct {
	err       error // fail before the effect
	afterKill bool  // do it, then die
	afterTerm bool  // do it, then SIGTERM
	lose      bool  // do it, lose its answer
	termLost  bool  // do it, then SIGTERM, its answer lost
	status    int   // answer this HTTP status instead
}

// at is the gate's decision for p.
func (g *gate) at(p point) decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return decision{err: errDead}
	}
	if g.down[p.kind] {
		return decision{err: refusedErr()}
	}
	if p.kind == "slack" && g.status != 0 {
		if g.plan != nil && g.plan.match(p) {
			g.fired = true // the night's fault struck a post
		}
		return decision{status: g.status}
	}
	pl := g.plan
	if pl == nil || g.fired || !pl.match(p) {
		return decision{}
	}
	g.seen++
	if g.seen != pl.nth {
		return decision{}
	}
	g.fired = true
	g.at_ = p.kind + " " + firstWords(statementOf(p.what))
	switch {
	case pl.how == "status500":
		return decision{status: 500}
	case pl.how == "lose":
		return decision{lose: true}
	case pl.how == "fail":
		return decision{err: errors.New("sim: injected failure at " + p.kind + " " + firstWords(p.what))}
	case pl.after && pl.how == "kill":
		return decision{afterKill: true}
	case pl.after:
		return decision{afterTerm: true}
	}
	if pl.how == "term" {
		switch {
		case p.kind == "slack" || p.kind == "s3":
			// SIGTERM as the request arrives: it takes effect, then the
			// run is told to stop, and never reads its answer. Served,
			// the answer would race the ended context in the client;
			// told to stop first, the run could end, and the night be
			// checked, before the effect: a replay could end otherwise.
			return decision{lose: true, termLost: true}
		case p.what == "COMMIT":
			// SIGTERM as the transaction commits: it commits, then the
			// run is told to stop. Cancelled first, database/sql would
			// race the commit with its own rollback.
			return decision{afterTerm: true}
		}
		// SIGTERM as the statement is sent: its context has ended, and
		// the statement is not run (conn_.pass), whatever the driver
		// would make of an ended context.
		g.die(true)
		return decision{}
	}
	g.die(false)
	return decision{err: errDead}
}

// then carries out what a decision says happens after the effect.
func (g *gate) then(d decision) {
	if !d.afterKill && !d.afterTerm && !d.termLost {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.die(d.afterTerm || d.termLost)
}

func (g *gate) didFire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fired
}

func statementOf(q string) string { return statement(q) }

func firstWords(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// --- databases ---

// wrap is a dsn.Target's Wrap for the database kind.
func (g *gate) wrap(kind string) func(driver.Connector) driver.Connector {
	return func(c driver.Connector) driver.Connector { return &connector{c: c, g: g, kind: kind} }
}

type connector struct {
	c    driver.Connector
	g    *gate
	kind string
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	c.g.mu.Lock()
	dead, down := c.g.dead, c.g.down[c.kind]
	c.g.mu.Unlock()
	switch {
	case dead:
		return nil, errDead
	case down:
		return nil, refusedErr()
	}
	conn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn_{Conn: conn, g: c.g, kind: c.kind}, nil
}

func (c *connector) Driver() driver.Driver { return c.c.Driver() }

// conn_ passes every statement through the gate. A kill after a
// statement inside a transaction strikes once the transaction commits.
type conn_ struct {
	driver.Conn
	g         *gate
	kind      string
	killAtEnd *decision // a kill or SIGTERM due when the transaction ends
	inTx      bool
}

// pass is the gate's decision for the statement q, sent under ctx. A
// statement whose context has ended (a SIGTERM at it, or before it) is not
// run: a driver handed an ended context may run it or not, by timing.
func (c *conn_) pass(ctx context.Context, q string) (decision, error) {
	d := c.g.at(point{c.kind, q})
	if d.err != nil {
		return d, d.err
	}
	if err := ctx.Err(); err != nil {
		return d, err
	}
	return d, nil
}

func (c *conn_) after(d decision, inTx bool) {
	if inTx && (d.afterKill || d.afterTerm) {
		c.killAtEnd = &d
		return
	}
	c.g.then(d)
}

func (c *conn_) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	d, err := c.pass(ctx, q)
	if err != nil {
		return nil, err
	}
	r, err := e.ExecContext(ctx, q, args)
	if err == driver.ErrSkip {
		return nil, err
	}
	c.after(d, c.inTx)
	return r, err
}

func (c *conn_) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	e, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	d, err := c.pass(ctx, q)
	if err != nil {
		return nil, err
	}
	r, err := e.QueryContext(ctx, q, args)
	c.after(d, c.inTx)
	return r, err
}

func (c *conn_) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if c.g.isDead() {
		return nil, errDead
	}
	var s driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, q)
	} else {
		s, err = c.Conn.Prepare(q)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: s, c: c, q: q}, nil
}

func (c *conn_) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *conn_) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if _, err := c.pass(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	var tx driver.Tx
	var err error
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		//lint:ignore SA1019 the driver has no BeginTx
		tx, err = c.Conn.Begin()
	}
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return &tx_{Tx: tx, c: c}, nil
}

func (c *conn_) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn_) Ping(ctx context.Context) error {
	if _, err := c.pass(ctx, "PING"); err != nil {
		return err
	}
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn_) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn_) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn_) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type tx_ struct {
	driver.Tx
	c *conn_
}

func (t *tx_) Commit() error {
	c := t.c
	c.inTx = false
	// database/sql checked the transaction's context before this.
	d, err := c.pass(context.Background(), "COMMIT")
	if err != nil {
		t.Tx.Rollback() // the server rolls back what a dead client left open
		c.killAtEnd = nil
		return err
	}
	err = t.Tx.Commit()
	if k := c.killAtEnd; k != nil {
		c.killAtEnd = nil
		c.g.then(*k)
	}
	c.g.then(d)
	return err
}

func (t *tx_) Rollback() error {
	t.c.inTx = false
	t.c.killAtEnd = nil
	return t.Tx.Rollback()
}

type stmt struct {
	driver.Stmt
	c *conn_
	q string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	d, err := s.c.pass(ctx, s.q)
	if err != nil {
		return nil, err
	}
	var r driver.Result
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		r, err = e.ExecContext(ctx, args)
	} else {
		return nil, errors.New("sim: the driver's statement has no ExecContext")
	}
	s.c.after(d, s.c.inTx)
	return r, err
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	d, err := s.c.pass(ctx, s.q)
	if err != nil {
		return nil, err
	}
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("sim: the driver's statement has no QueryContext")
	}
	r, err := q.QueryContext(ctx, args)
	s.c.after(d, s.c.inTx)
	return r, err
}

func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.c.CheckNamedValue(nv)
}

// --- HTTP: Slack and the object store ---

// front serves h behind the gate: kind names the points, post says which
// requests are points (the others pass, unless the process is dead).
func (g *gate) front(kind string, h http.Handler, isPoint func(r *http.Request) bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isPoint(r) {
			if g.isDead() {
				drop(w)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		d := g.at(point{kind, r.Method + " " + r.URL.Path})
		if d.err != nil {
			if kind == "slack" {
				b, _ := io.ReadAll(r.Body)
				g.mu.Lock()
				g.unsent = append(g.unsent, string(b))
				g.mu.Unlock()
			}
			drop(w)
			return
		}
		if d.status != 0 {
			http.Error(w, "internal_error", d.status)
			return
		}
		if kind == "s3" && g.refusing() && (r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodPost) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
			return
		}
		if !d.lose && !d.afterKill && !d.afterTerm {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		g.then(d)
		if d.afterTerm { // SIGTERM: the answer still comes, to a run told to stop
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		drop(w) // the effect happened; its answer never arrives
	}))
}

// unsentSince returns the bodies of the Slack posts that died at the gate
// since *seen of them were read, and counts them read.
func (g *gate) unsentSince(seen *int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.unsent[*seen:]
	*seen = len(g.unsent)
	return b
}

// neverLeft reports whether a Slack post that died at the gate named
// date as a gap: "*date*", as a message's day lines write it.
func (g *gate) neverLeft(date string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.unsent {
		if strings.Contains(b, "*"+date+"*") {
			return true
		}
	}
	return false
}

func (g *gate) refusing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refuse
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}
