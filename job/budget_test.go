package job

import "testing"

// A request given back goes to the hold it came from while the hold is
// there, else to the budget: what is spent is what was sent.
func TestBudgetGiveBack(t *testing.T) {
	b := newBudget(4)
	h, _ := b.reserve(2)
	h.take()
	h.giveBack()
	if b.used() != 0 || b.room() != 2 || h.n != 2 {
		t.Errorf("used %d, room %d, held %d after a held request given back: want 0, 2, 2", b.used(), b.room(), h.n)
	}
	h.take()
	h.release()
	h.giveBack() // the read outlived the day
	if b.used() != 0 || b.room() != 4 {
		t.Errorf("used %d, room %d after a request given back past release: want 0 and 4", b.used(), b.room())
	}
	b.take()
	b.giveBack()
	if b.used() != 0 || b.room() != 4 {
		t.Errorf("used %d, room %d: want 0 and 4", b.used(), b.room())
	}
}
