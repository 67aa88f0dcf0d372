package job

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// budget counts the drill-down's API requests against
// RECON_DRILLDOWN_MAX_REQUESTS. The Elido client asks it before every
// request it sends (elido.WithBudget): every page of a breakdown and every
// retry counts, so the drill-down never exceeds the limit, and a request
// allowed but never sent is given back, so that used is the requests Elido
// received. A failure no later request can mend (fatal) spends what is
// left.
type budget struct {
	max int
	// rate (requests a minute, ELIDO_RATE_LIMIT) and deadline (zero:
	// none) bound the requests that fit in the time left (room).
	rate     float64
	deadline time.Time

	mu    sync.Mutex
	spent int
	held  int // set aside for days drilled beside each other (hold)
	fatal error
}

func newBudget(max int) *budget { return &budget{max: max} }

// take spends one request, or reports that the budget is spent.
func (b *budget) take() bool { return (&hold{b: b}).take() }

// giveBack returns a request take spent that was not sent after all
// (elido.WithBudget): the budget counts the requests Elido received.
func (b *budget) giveBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent--
}

// left reports whether one more request may be sent, without spending it.
func (b *budget) left() bool { return (&hold{b: b}).left() }

// room returns how many more requests may be sent: what is left of the
// budget, and no more than fit before the deadline at the rate, less what
// days being drilled hold.
func (b *budget) room() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.roomLocked()
}

func (b *budget) roomLocked() int {
	if b.fatal != nil {
		return 0
	}
	n := b.max - b.spent
	if !b.deadline.IsZero() && b.rate > 0 {
		fit := time.Until(b.deadline).Minutes() * b.rate
		n = min(n, int(max(fit, 0)))
	}
	return max(n-b.held, 0)
}

// hold is requests set aside for one day, drilled beside others: what it
// holds no other day can spend, so a day's breakdown, once started, can
// finish.
type hold struct {
	b        *budget
	n        int  // still held; guarded by b.mu
	released bool // guarded by b.mu
}

// reserve sets n requests aside, if they are there.
func (b *budget) reserve(n int) (*hold, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.roomLocked() < n {
		return &hold{b: b}, false
	}
	b.held += n
	return &hold{b: b, n: n}, true
}

// take spends one request: a held one first, else one nobody holds.
func (h *hold) take() bool {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fatal != nil || b.spent >= b.max || (h.n == 0 && b.spent+b.held >= b.max) {
		return false
	}
	b.spent++
	if h.n > 0 {
		h.n--
		b.held--
	}
	return true
}

// ensure makes h hold at least n requests, setting aside more if they are
// there, and reports whether it holds them.
func (h *hold) ensure(n int) bool {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.n >= n {
		return true
	}
	if h.released || b.roomLocked() < n-h.n {
		return false
	}
	b.held += n - h.n
	h.n = n
	return true
}

// giveBack returns a request h.take spent that was not sent: to h, which
// release gives back in turn, or once released to the budget.
func (h *hold) giveBack() {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent--
	if !h.released {
		h.n++
		b.held++
	}
}

// left reports whether take would spend one more request.
func (h *hold) left() bool {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal == nil && b.spent < b.max && (h.n > 0 || b.spent+b.held < b.max)
}

// release gives back what h still holds.
func (h *hold) release() {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	h.b.held -= h.n
	h.n = 0
	h.released = true
}

func (b *budget) used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// check records err when no later request can succeed either: Elido
// refusing the key (401, 403) or redirecting to another origin. The
// drill-down then stops, and the run exits 2 (cmd/clickrecon needsFixing).
func (b *budget) check(err error) {
	var ae *elido.APIError
	fatal := errors.Is(err, safehttp.ErrRedirect) ||
		(errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden))
	if !fatal {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fatal == nil {
		b.fatal = err
	}
}

func (b *budget) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal
}

// budgetNote says why a part of a day was not read: the budget ran out
// before or during the read, or a fatal error stopped the drill-down.
func budgetNote(b *budget, what string, err error) string {
	if fatal := b.err(); fatal != nil {
		return what + " not read: the drill-down stopped: " + fatal.Error()
	}
	if err != nil {
		return what + " not read: RECON_DRILLDOWN_MAX_REQUESTS ran out while reading them"
	}
	return what + " not read: RECON_DRILLDOWN_MAX_REQUESTS ran out"
}
