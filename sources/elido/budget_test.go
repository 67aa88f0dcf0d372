package elido_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// A breakdown that keeps returning new cursors is paged only as long as
// the budget allows: every page asks it first, and a read stopped there
// returns no links at all, never a part of them.
func TestBudgetStopsEndlessPaging(t *testing.T) {
	clicks, _ := manyLinks(10)
	f := newFixture(t, clicks, nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.EndlessCursor})
	var asked atomic.Int64
	const budget = 5
	ctx := elido.WithBudget(t.Context(), func() bool { return asked.Add(1) <= budget })
	day := date(t, "2026-11-28")
	got, err := f.client.LinkBreakdown(ctx, day, day, time.UTC)
	if !errors.Is(err, elido.ErrBudget) {
		t.Fatalf("err %v, want ErrBudget", err)
	}
	if got != nil {
		t.Errorf("got %d links with the error, want none", len(got))
	}
	if n := f.client.Requests()["breakdown/link"]; n != budget {
		t.Errorf("sent %d requests, want the budget of %d", n, budget)
	}
}

// Retries ask the budget too: a 503 storm under a budget of 2 sends 2
// requests, not the client's 5 attempts.
func TestBudgetCountsRetries(t *testing.T) {
	f := newFixture(t, novemberClicks(t), nil)
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.ServerError, Status: 503})
	var asked atomic.Int64
	ctx := elido.WithBudget(t.Context(), func() bool { return asked.Add(1) <= 2 })
	day := date(t, "2026-11-28")
	if _, err := f.client.CountryBreakdown(ctx, day, day, time.UTC); !errors.Is(err, elido.ErrBudget) {
		t.Fatalf("err %v, want ErrBudget", err)
	}
	if n := f.client.Requests()["breakdown/country"]; n != 2 {
		t.Errorf("sent %d requests, want 2", n)
	}
}
