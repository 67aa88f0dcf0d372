package reconcile

import (
	"fmt"
	"time"
)

// Window is an inclusive range of calendar days in one time zone.
type Window struct {
	From, To Date
	Loc      *time.Location
}

// Days returns every day of the window, oldest first.
func (w Window) Days() []Date {
	var days []Date
	for d := w.From; !d.After(w.To); d = d.AddDays(1) {
		days = append(days, d)
	}
	return days
}

// Len returns the number of days in the window.
func (w Window) Len() int {
	return daysBetween(w.From, w.To) + 1
}

// daysBetween returns the number of calendar days from a to b. It counts
// in Unix seconds, not a time.Duration, which saturates past 292 years.
func daysBetween(a, b Date) int {
	ta := time.Date(a.Year, a.Month, a.Day, 0, 0, 0, 0, time.UTC)
	tb := time.Date(b.Year, b.Month, b.Day, 0, 0, 0, 0, time.UTC)
	return int((tb.Unix() - ta.Unix()) / 86400)
}

// maxDefaultDays bounds RECON_DAYS whatever RECON_MAX_DAYS says: counting
// back further than that (over 270 years) would leave the calendar
// clickrecon can compute with.
const maxDefaultDays = 100_000

// WindowSpec is what a user asked for: a single day, a range, or nothing
// (the default window). Dates are unparsed so that NewWindow can say which
// flag was wrong.
type WindowSpec struct {
	Date     string // --date
	From, To string // --from, --to
	Days     int    // RECON_DAYS: the default window's length
	MaxDays  int    // RECON_MAX_DAYS
	Shard    string // --shard I/N: only the I-th of N slices; "" for all
}

// NewWindow checks spec against the window rules of docs/contract.md and returns the
// window it names in loc, given the current time now. Every error says
// what to fix.
func NewWindow(spec WindowSpec, loc *time.Location, now time.Time) (Window, error) {
	if loc == nil {
		return Window{}, fmt.Errorf("no time zone given")
	}
	today := DateOf(now.In(loc))
	var w Window
	switch {
	case spec.Date != "" && (spec.From != "" || spec.To != ""):
		return Window{}, fmt.Errorf("--date cannot be combined with --from/--to: give one day with --date, or a range with --from and --to")
	case spec.Date != "":
		d, err := ParseDate(spec.Date)
		if err != nil {
			return Window{}, fmt.Errorf("--date: %w", err)
		}
		w = Window{From: d, To: d}
	case spec.From != "" || spec.To != "":
		if spec.From == "" || spec.To == "" {
			return Window{}, fmt.Errorf("--from and --to go together: give both (the range is inclusive), or --date for one day")
		}
		from, err := ParseDate(spec.From)
		if err != nil {
			return Window{}, fmt.Errorf("--from: %w", err)
		}
		to, err := ParseDate(spec.To)
		if err != nil {
			return Window{}, fmt.Errorf("--to: %w", err)
		}
		if from.After(to) {
			return Window{}, fmt.Errorf("--from %s is after --to %s: swap them", from, to)
		}
		w = Window{From: from, To: to}
	default:
		if spec.Days < 1 || spec.Days > maxDefaultDays {
			return Window{}, fmt.Errorf("RECON_DAYS must be from 1 to %d, got %d", maxDefaultDays, spec.Days)
		}
		w = Window{From: today.AddDays(-spec.Days), To: today.AddDays(-1)}
	}
	w.Loc = loc
	if !w.To.Before(today) {
		return Window{}, fmt.Errorf("%s has not ended yet in %s (today there is %s): the last day must be %s or earlier",
			w.To, loc, today, today.AddDays(-1))
	}
	if spec.MaxDays > 0 && w.Len() > spec.MaxDays {
		return Window{}, fmt.Errorf("the window %s..%s has %d days, over RECON_MAX_DAYS=%d: split it into smaller ranges or raise RECON_MAX_DAYS",
			w.From, w.To, w.Len(), spec.MaxDays)
	}
	if spec.Shard == "" {
		return w, nil
	}
	var i, n int
	if _, err := fmt.Sscanf(spec.Shard, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != spec.Shard {
		return Window{}, fmt.Errorf("--shard (RECON_SHARD) must be I/N, such as 0/4, got %q", spec.Shard)
	}
	return w.Shard(i, n)
}

// LoadZone loads the IANA zone the days are calendar days in. "Local" is
// refused: a nightly job's answer must not depend on the machine it runs
// on.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("--tz (RECON_TZ) must be an IANA zone name such as Europe/Warsaw or UTC, got %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("--tz (RECON_TZ): unknown time zone %q: use an IANA name such as Europe/Warsaw or America/New_York", name)
	}
	return loc, nil
}

// String formats the window as FROM..TO in ZONE.
func (w Window) String() string {
	if w.From == w.To {
		return fmt.Sprintf("%s (%s)", w.From, w.Loc)
	}
	return fmt.Sprintf("%s..%s (%s)", w.From, w.To, w.Loc)
}

// Shard returns the i-th (0-based, as Kubernetes' JOB_COMPLETION_INDEX) of
// n contiguous slices of w, as even as they can be: the first len%n slices
// have one day more.
func (w Window) Shard(i, n int) (Window, error) {
	switch {
	case n < 1:
		return Window{}, fmt.Errorf("--shard I/N: N must be at least 1, got %d", n)
	case i < 0 || i >= n:
		return Window{}, fmt.Errorf("--shard I/N: I must be from 0 to %d (0-based, as JOB_COMPLETION_INDEX), got %d", n-1, i)
	case w.Len() < n:
		return Window{}, fmt.Errorf("--shard %d/%d: the window %s..%s has only %d days, fewer than %d shards: use at most %d shards",
			i, n, w.From, w.To, w.Len(), n, w.Len())
	}
	size, extra := w.Len()/n, w.Len()%n
	start := i*size + min(i, extra)
	length := size
	if i < extra {
		length++
	}
	from := w.From.AddDays(start)
	return Window{From: from, To: from.AddDays(length - 1), Loc: w.Loc}, nil
}
