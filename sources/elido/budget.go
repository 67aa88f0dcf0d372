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

// WithBudget returns a context under which every HTTP request the client
// sends (every attempt, every page of a breakdown) first asks take; when
// take returns false the request is not sent and the read fails with
// ErrBudget. A caller with a request budget, as the drill-down's
// RECON_DRILLDOWN_MAX_REQUESTS, can so never exceed it, however many pages
// or retries a read turns out to need.
func WithBudget(ctx context.Context, take func() bool) context.Context {
	return context.WithValue(ctx, budgetKey{}, take)
}

// allowed reports whether ctx's budget, if it has one, allows one more
// request.
func allowed(ctx context.Context) bool {
	take, ok := ctx.Value(budgetKey{}).(func() bool)
	return !ok || take()
}
