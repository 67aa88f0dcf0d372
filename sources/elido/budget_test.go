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
	ctx := elido.WithBudget(t.Context(), func() bool { return asked.Add(1) <= budget }, nil)
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
	ctx := elido.WithBudget(t.Context(), func() bool { return asked.Add(1) <= 2 }, nil)
	day := date(t, "2026-11-28")
	if _, err := f.client.CountryBreakdown(ctx, day, day, time.UTC); !errors.Is(err, elido.ErrBudget) {
		t.Fatalf("err %v, want ErrBudget", err)
	}
	if n := f.client.Requests()["breakdown/country"]; n != 2 {
		t.Errorf("sent %d requests, want 2", n)
	}
}

// A request the budget allowed that never reached Elido is handed back:
// the budget counts the requests sent. With nothing listening, 3 attempts
// spend nothing; with the fake answering, every request it received is
// spent.
func TestBudgetCountsOnlyTheRequestsSent(t *testing.T) {
	for _, listening := range []bool{false, true} {
		f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) { cfg.MaxAttempts = 3 })
		if !listening {
			f.srv.Close()
		}
		var taken, spent atomic.Int64
		ctx := elido.WithBudget(t.Context(), func() bool { taken.Add(1); spent.Add(1); return true }, func() { spent.Add(-1) })
		day := date(t, "2026-11-28")
		_, err := f.client.CountryBreakdown(ctx, day, day, time.UTC)
		if listening != (err == nil) {
			t.Fatalf("listening %v: err %v", listening, err)
		}
		received := int64(f.srv.Requests()["breakdown/country"])
		if spent.Load() != received || taken.Load() < received {
			t.Errorf("listening %v: %d requests taken, %d spent, %d received: want spent = received", listening, taken.Load(), spent.Load(), received)
		}
		if !listening && taken.Load() != 3 {
			t.Errorf("%d attempts asked the budget, want 3", taken.Load())
		}
	}
}
