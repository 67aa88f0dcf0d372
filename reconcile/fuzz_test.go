package reconcile

import (
	"testing"
	"time"
)

// FuzzParseDate: ParseDate never panics, and a date it accepts is written
// back as the same text and parses to the same date.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-11-28", "2026-02-30", "0000-01-01", "9999-12-31", "2026-1-1", " 2026-11-28", "2026-11-28\n", "+2026-11-28", "2026-11-28T00:00:00Z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		if d.String() != s {
			t.Fatalf("ParseDate(%q) = %v, written back as %q", s, d, d.String())
		}
		back, err := ParseDate(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDate(%q) = %v, %v; want %v", d.String(), back, err, d)
		}
		var u Date
		if err := u.UnmarshalText([]byte(s)); err != nil || u != d {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", s, u, err, d)
		}
	})
}

// FuzzNewWindow: NewWindow never panics, and a window it accepts is a
// non-empty range of ended days within RECON_MAX_DAYS; its shards tile it.
func FuzzNewWindow(f *testing.F) {
	f.Add("", "", "", 3, 400, 2)
	f.Add("2026-11-28", "", "", 3, 400, 1)
	f.Add("", "2026-01-01", "2026-11-28", 3, 400, 7)
	f.Add("", "2026-11-28", "2026-01-01", 3, 400, 7)
	f.Add("", "0000-01-01", "9999-12-31", 0, 0, 3)
	f.Add("", "", "", -1, 400, 0)
	f.Add("", "", "", 1<<62, 0, 1)
	f.Add("2026-02-30", "", "", 3, 400, 1)
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	warsaw, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, date, from, to string, days, maxDays, shards int) {
		w, err := NewWindow(WindowSpec{Date: date, From: from, To: to, Days: days, MaxDays: maxDays}, warsaw, now)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no message")
			}
			return
		}
		today := DateOf(now.In(warsaw))
		switch {
		case w.From.After(w.To):
			t.Fatalf("window %v runs backwards", w)
		case !w.To.Before(today):
			t.Fatalf("window %v ends on a day that has not ended (today %v)", w, today)
		case w.Len() < 1:
			t.Fatalf("window %v has %d days", w, w.Len())
		case maxDays > 0 && w.Len() > maxDays:
			t.Fatalf("window %v has %d days, over the maximum %d", w, w.Len(), maxDays)
		}
		if w.Len() > 1000 {
			return // too long to tile day by day in a fuzz run
		}
		n := shards%8 + 1
		if n < 1 {
			n = -n + 2
		}
		next := w.From
		for i := range n {
			s, err := w.Shard(i, n)
			if err != nil {
				if w.Len() >= n {
					t.Fatalf("Shard(%d, %d) of %v: %v", i, n, w, err)
				}
				return
			}
			if s.From != next || s.To.Before(s.From) {
				t.Fatalf("shard %d/%d of %v is %v, want it to start at %v", i, n, w, s, next)
			}
			next = s.To.AddDays(1)
		}
		if next != w.To.AddDays(1) {
			t.Fatalf("the shards of %v end at %v", w, next.AddDays(-1))
		}
	})
}
