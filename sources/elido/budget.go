package elido

import (
	"context"
	"errors"
)

// ErrBudget matches (with errors.Is) a read stopped because the budget set
// with WithBudget refused its next request: a page of a breakdown, a retry
// or a first attempt. What was read before is dropped: a part of a
// breakdown must never pass for the whole of it.
var ErrBudget = errors.New("elido: request budget spent")

type budgetKey struct{}

type budget struct {
	take     func() bool
	giveBack func()
}

// WithBudget returns a context under which every HTTP request the client
// sends (every attempt, every page of a breakdown) first asks take; when
// take returns false the request is not sent and the read fails with
// ErrBudget. A request take allowed that does not go out after all (its
// read was cancelled or reached its deadline while it waited for the rate
// limiter, or the connection could not be made) is handed back with
// giveBack, so that what take counts is exactly the requests sent. A
// caller with a request budget, as the drill-down's
// RECON_DRILLDOWN_MAX_REQUESTS, can so never exceed it, however many pages
// or retries a read turns out to need, nor count a request Elido never
// received.
func WithBudget(ctx context.Context, take func() bool, giveBack func()) context.Context {
	return context.WithValue(ctx, budgetKey{}, budget{take: take, giveBack: giveBack})
}

// allowed reports whether ctx's budget, if it has one, allows one more
// request.
func allowed(ctx context.Context) bool {
	b, ok := ctx.Value(budgetKey{}).(budget)
	return !ok || b.take()
}

// unsent hands back to ctx's budget, if it has one, a request it allowed
// that was not sent.
func unsent(ctx context.Context) {
	if b, ok := ctx.Value(budgetKey{}).(budget); ok && b.giveBack != nil {
		b.giveBack()
	}
}
