package elido

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Summary is Elido's total for a range of days.
type Summary struct {
	From, To     reconcile.Date
	TZ           string
	Clicks       int64
	UniqueClicks int64
}

// DayCount is the clicks of one calendar day.
type DayCount = reconcile.DayCount

// HourCount is the clicks of one hour, from Start (UTC) for an hour.
type HourCount = reconcile.HourCount

// LinkCount is the clicks of one link. The id is opaque.
type LinkCount struct {
	LinkID string
	Clicks int64
}

// CountryCount is the clicks from one country: an ISO 3166-1 alpha-2 code,
// or "" where Elido does not know it.
type CountryCount struct {
	CountryCode string
	Clicks      int64
}

// Summary returns Elido's totals for the days from..to (inclusive) in the
// time zone loc (from time.LoadLocation, whose name is sent; nil is UTC).
// The answer must echo the range and zone asked for.
func (c *Client) Summary(ctx context.Context, from, to reconcile.Date, loc *time.Location) (Summary, error) {
	tz := zoneName(loc)
	op := fmt.Sprintf("GET %s %s..%s", endpointSummary, from, to)
	if err := checkRange(from, to); err != nil {
		return Summary{}, fmt.Errorf("elido: %s: %w", op, err)
	}
	var s Summary
	err := c.get(ctx, op, endpointSummary, rangeQuery(from, to, tz, ""), func(data []byte) error {
		var err error
		if s, err = decodeSummary(data); err != nil {
			return err
		}
		return checkSummary(s, from, to, tz)
	})
	if err != nil {
		return Summary{}, err
	}
	return s, nil
}

// Timeseries returns the clicks of each day from..to (inclusive) in loc,
// oldest first, one entry per day. An answer that does not hold exactly
// those days is an error.
func (c *Client) Timeseries(ctx context.Context, from, to reconcile.Date, loc *time.Location) ([]DayCount, error) {
	op := fmt.Sprintf("GET %s %s..%s", endpointTimeseries, from, to)
	return c.days(ctx, op, from, to, loc, "")
}

// LinkTimeseries is Timeseries restricted to one link.
func (c *Client) LinkTimeseries(ctx context.Context, from, to reconcile.Date, loc *time.Location, linkID string) ([]DayCount, error) {
	op := fmt.Sprintf("GET %s %s..%s link %q", endpointTimeseries, from, to, linkID)
	if linkID == "" {
		return nil, fmt.Errorf("elido: %s: the link id is empty", op)
	}
	return c.days(ctx, op, from, to, loc, linkID)
}

func (c *Client) days(ctx context.Context, op string, from, to reconcile.Date, loc *time.Location, linkID string) ([]DayCount, error) {
	tz := zoneName(loc)
	if err := checkRange(from, to); err != nil {
		return nil, fmt.Errorf("elido: %s: %w", op, err)
	}
	var days []DayCount
	q := timeseriesQuery(from, to, tz, linkID, intervalDay)
	err := c.get(ctx, op, endpointTimeseries, q, func(data []byte) error {
		h, d, err := decodeDays(data)
		if err != nil {
			return err
		}
		if err := checkHeader(h, intervalDay, tz); err != nil {
			return err
		}
		if err := checkDays(d, from, to); err != nil {
			return err
		}
		days = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	return days, nil
}

// HourlyTimeseries returns the clicks of each hour of day in loc (nil:
// UTC), oldest first: 24 entries, or 23 or 25 on a DST day. linkID
// restricts them to one link; "" means the whole workspace.
//
// Elido does not document the items of interval=hour. This project
// assumes {"ts": "<RFC 3339 instant the hour starts, in UTC>", "clicks": n},
// one item per hour from the day's first instant in loc, zero hours
// included; anything else is an error (see hourItem in wire.go).
func (c *Client) HourlyTimeseries(ctx context.Context, day reconcile.Date, loc *time.Location, linkID string) ([]HourCount, error) {
	if loc == nil {
		loc = time.UTC
	}
	tz := zoneName(loc)
	op := fmt.Sprintf("GET %s %s hourly", endpointTimeseries, day)
	if linkID != "" {
		op += fmt.Sprintf(" link %q", linkID)
	}
	var hours []HourCount
	q := timeseriesQuery(day, day, tz, linkID, intervalHour)
	err := c.get(ctx, op, endpointTimeseries, q, func(data []byte) error {
		h, hs, err := decodeHours(data)
		if err != nil {
			return err
		}
		if err := checkHeader(h, intervalHour, tz); err != nil {
			return err
		}
		if err := checkHours(hs, day, loc); err != nil {
			return err
		}
		hours = hs
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hours, nil
}

// LinkBreakdown returns the clicks per link for the days from..to in loc,
// highest first, following the cursor through every page. Where the API
// has no link breakdown the error matches ErrNotFound, and the caller falls
// back to LinkTimeseries per link.
func (c *Client) LinkBreakdown(ctx context.Context, from, to reconcile.Date, loc *time.Location) ([]LinkCount, error) {
	tz := zoneName(loc)
	op := fmt.Sprintf("GET %s %s..%s", endpointLinkBreakdown, from, to)
	if err := checkRange(from, to); err != nil {
		return nil, fmt.Errorf("elido: %s: %w", op, err)
	}
	query := func(cursor string) url.Values { return linkBreakdownQuery(from, to, tz, cursor) }
	links, err := breakdown(ctx, c, op, endpointLinkBreakdown, query, breakdownPage.links)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(links))
	for _, l := range links {
		if seen[l.LinkID] {
			return nil, fmt.Errorf("elido: %s: %w", op, LinkTwiceError(l.LinkID))
		}
		seen[l.LinkID] = true
	}
	return links, nil
}

// LinkBreakdownPages reads the link breakdown as LinkBreakdown does, but
// hands each page's links to fn as it arrives and keeps none: a day of a
// large workspace is 100 pages of 1000 links. An error from fn stops the
// paging and is returned, after the operation's name. Noticing a link
// named twice is the caller's (return LinkTwiceError), as remembering
// every link seen would cost what the pages are not kept for.
func (c *Client) LinkBreakdownPages(ctx context.Context, from, to reconcile.Date, loc *time.Location, fn func([]LinkCount) error) error {
	tz := zoneName(loc)
	op := fmt.Sprintf("GET %s %s..%s", endpointLinkBreakdown, from, to)
	if err := checkRange(from, to); err != nil {
		return fmt.Errorf("elido: %s: %w", op, err)
	}
	query := func(cursor string) url.Values { return linkBreakdownQuery(from, to, tz, cursor) }
	return pages(ctx, c, op, endpointLinkBreakdown, query, breakdownPage.links, fn)
}

// TallyPage adds the links of a breakdown page to t, Elido's side of a
// day's per-link comparison (reconcile.LinkTally.Add), and stops at a
// link the breakdown names twice (LinkTwiceError).
func TallyPage(t *reconcile.LinkTally, page []LinkCount) error {
	for _, l := range page {
		if !t.Add(l.LinkID, l.Clicks) {
			return LinkTwiceError(l.LinkID)
		}
	}
	return nil
}

// LinkTwiceError says that a link breakdown named link id twice: its
// ranking changed while it was paged, so a link may also have been missed.
func LinkTwiceError(id string) error {
	return fmt.Errorf("link %q appears twice: the breakdown changed while it was paged; run again", id)
}

// CountryBreakdown returns the clicks per country for the days from..to in
// loc, highest first.
func (c *Client) CountryBreakdown(ctx context.Context, from, to reconcile.Date, loc *time.Location) ([]CountryCount, error) {
	tz := zoneName(loc)
	op := fmt.Sprintf("GET %s %s..%s", endpointCountryBreakdown, from, to)
	if err := checkRange(from, to); err != nil {
		return nil, fmt.Errorf("elido: %s: %w", op, err)
	}
	query := func(cursor string) url.Values { return countryBreakdownQuery(from, to, tz, cursor) }
	countries, err := breakdown(ctx, c, op, endpointCountryBreakdown, query, breakdownPage.countries)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(countries))
	for _, cc := range countries {
		if seen[cc.CountryCode] {
			return nil, fmt.Errorf("elido: %s: country %q appears twice", op, cc.CountryCode)
		}
		seen[cc.CountryCode] = true
	}
	return countries, nil
}

// breakdown reads every page of a breakdown and returns their items.
func breakdown[T interface{ clicks() int64 }](ctx context.Context, c *Client, op, endpoint string,
	query func(cursor string) url.Values, convert func(breakdownPage) ([]T, error)) ([]T, error) {
	var all []T
	err := pages(ctx, c, op, endpoint, query, convert, func(items []T) error {
		all = append(all, items...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// pages reads every page of a breakdown, following next_cursor until it is
// null, absent or empty, and hands each page's items to fn once the page
// is read whole. A cursor seen before is an error: following it would loop
// for ever.
//
// The next page is asked for while fn works through the one before: a
// day of a large workspace is 100 pages, and the request's round trip
// need not wait for the comparison. When fn fails, the page already asked
// for is dropped (its request counted).
func pages[T interface{ clicks() int64 }](ctx context.Context, c *Client, op, endpoint string,
	query func(cursor string) url.Values, convert func(breakdownPage) ([]T, error), fn func([]T) error) error {
	type page struct {
		items []T
		err   error
	}
	ctx, cancel := context.WithCancel(ctx)
	// Unbuffered: a page is handed over only when fn is done with the one
	// before, so one page at most is asked for ahead of fn. A buffer would
	// let a slow fn fall two pages behind, and a breakdown stopped at its
	// first page (job's pageGuard) spend a third request.
	read := make(chan page)
	done := make(chan struct{})
	// The next page's request ends with the read: none is sent, nor asks
	// the budget, once the read has returned.
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		defer close(read)
		send := func(p page) bool {
			select {
			case read <- p:
				return true
			case <-ctx.Done():
				return false
			}
		}
		var total int64
		seen := map[string]bool{}
		cursor := ""
		for n := 1; ; n++ {
			pageOp := op
			if n > 1 {
				pageOp = fmt.Sprintf("%s page %d", op, n)
			}
			var items []T
			var next string
			err := c.get(ctx, pageOp, endpoint, query(cursor), func(data []byte) error {
				p, err := decodeBreakdown(data)
				if err != nil {
					return err
				}
				its, err := convert(p)
				if err != nil {
					return err
				}
				// A page that fails below and is retried must not count twice.
				sum, err := checkCounts(its, total)
				if err != nil {
					return err
				}
				items, next, total = its, p.nextCursor, sum
				return nil
			})
			if err != nil {
				send(page{err: err})
				return
			}
			if !send(page{items: items}) || next == "" {
				return
			}
			if seen[next] {
				send(page{err: fmt.Errorf("elido: %s: page %d repeats an earlier cursor: stopping rather than looping", op, n)})
				return
			}
			seen[next] = true
			cursor = next
		}
	}()
	for p := range read {
		if p.err != nil {
			return p.err
		}
		if err := fn(p.items); err != nil {
			return fmt.Errorf("elido: %s: %w", op, err)
		}
	}
	return nil
}

// checkCounts checks a breakdown page's counts: none negative, and their
// sum with the earlier pages' total still fits an int64 (the caller sums
// the breakdown). It returns the new total.
func checkCounts[T interface{ clicks() int64 }](items []T, total int64) (int64, error) {
	for i, it := range items {
		if it.clicks() < 0 {
			return 0, fmt.Errorf("item %d has a negative count %d", i, it.clicks())
		}
		var err error
		if total, err = addClicks(total, it.clicks()); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func (l LinkCount) clicks() int64    { return l.Clicks }
func (c CountryCount) clicks() int64 { return c.Clicks }

// zoneName is the zone sent for loc: its IANA name, or the API's own
// default, UTC, for nil.
func zoneName(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	return loc.String()
}

func checkRange(from, to reconcile.Date) error {
	if from.After(to) {
		return fmt.Errorf("from %s is after to %s", from, to)
	}
	return nil
}

func checkSummary(s Summary, from, to reconcile.Date, tz string) error {
	switch {
	case s.From != from || s.To != to:
		return fmt.Errorf("the answer is for %s..%s, not the %s..%s asked for", s.From, s.To, from, to)
	case s.TZ != tz:
		return fmt.Errorf("the answer is in time zone %q, not the %q asked for", s.TZ, tz)
	case s.Clicks < 0 || s.UniqueClicks < 0:
		return fmt.Errorf("negative counts: %d clicks, %d unique", s.Clicks, s.UniqueClicks)
	case s.UniqueClicks > s.Clicks:
		return fmt.Errorf("%d unique clicks is more than %d clicks", s.UniqueClicks, s.Clicks)
	}
	return nil
}

func checkHeader(h timeseriesHeader, interval, tz string) error {
	switch {
	case h.interval != interval:
		return fmt.Errorf("the answer has interval %q, not the %q asked for", h.interval, interval)
	case h.tz != tz:
		return fmt.Errorf("the answer is in time zone %q, not the %q asked for", h.tz, tz)
	}
	return nil
}

// checkDays checks that days holds each day from..to once, oldest first,
// with no negative count and a sum that fits an int64.
func checkDays(days []DayCount, from, to reconcile.Date) error {
	// Order first: days that are all there but newest first are out of
	// order, not missing.
	for i := 1; i < len(days); i++ {
		if days[i].Date.Before(days[i-1].Date) {
			return fmt.Errorf("the items are out of order: item %d (%s) comes after item %d (%s); days must come oldest first, once each",
				i, days[i].Date, i-1, days[i-1].Date)
		}
	}
	var total int64
	want := from
	for i, d := range days {
		switch {
		case d.Date.Before(from) || d.Date.After(to):
			return fmt.Errorf("item %d is for %s, outside the %s..%s asked for", i, d.Date, from, to)
		case i > 0 && d.Date == days[i-1].Date:
			return fmt.Errorf("day %s appears twice", d.Date)
		case d.Date.After(want):
			return fmt.Errorf("day %s is missing (item %d is for %s)", want, i, d.Date)
		case d.Date.Before(want):
			return fmt.Errorf("item %d is for %s, out of order (days must come oldest first, once each)", i, d.Date)
		case d.Clicks < 0:
			return fmt.Errorf("day %s has a negative count %d", d.Date, d.Clicks)
		}
		var err error
		if total, err = addClicks(total, d.Clicks); err != nil {
			return err
		}
		want = want.AddDays(1)
	}
	if !want.After(to) {
		return fmt.Errorf("day %s is missing (the answer has %d items, for %d days)", want, len(days), daysIn(from, to))
	}
	return nil
}

func daysIn(from, to reconcile.Date) int {
	n := 0
	for d := from; !d.After(to); d = d.AddDays(1) {
		n++
	}
	return n
}

// checkHours checks that hours holds each hour of day in loc once, oldest
// first: hour i starts i hours after the day does.
func checkHours(hours []HourCount, day reconcile.Date, loc *time.Location) error {
	start, end := day.Bounds(loc)
	n := int((end.Sub(start) + time.Hour - 1) / time.Hour)
	var total int64
	for i, h := range hours {
		want := start.Add(time.Duration(i) * time.Hour)
		switch {
		case i >= n:
			return fmt.Errorf("item %d starts at %s, after %s ends in %s (%d hours)", i, fmtHour(h.Start), day, loc, n)
		case i > 0 && h.Start.Equal(hours[i-1].Start):
			return fmt.Errorf("hour %s appears twice", fmtHour(h.Start))
		case !h.Start.Equal(want):
			return fmt.Errorf("item %d starts at %s, want %s (hours must come oldest first, once each)", i, fmtHour(h.Start), fmtHour(want))
		case h.Clicks < 0:
			return fmt.Errorf("hour %s has a negative count %d", fmtHour(h.Start), h.Clicks)
		}
		var err error
		if total, err = addClicks(total, h.Clicks); err != nil {
			return err
		}
	}
	if len(hours) < n {
		return fmt.Errorf("hour %s is missing (the answer has %d items, for the %d hours of %s in %s)",
			fmtHour(start.Add(time.Duration(len(hours))*time.Hour)), len(hours), n, day, loc)
	}
	return nil
}

func fmtHour(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// addClicks returns sum+n for a non-negative n, or an error where the sum
// would pass the largest int64 and wrap negative. No real count comes
// near it: such an answer is misread or corrupt, and its days are
// unverifiable rather than a gap computed from a wrapped total.
func addClicks(sum, n int64) (int64, error) {
	total, ok := reconcile.AddClicks(sum, n)
	if !ok {
		return 0, fmt.Errorf("the counts add up to more than %d, which no real total reaches: the answer is corrupt", int64(math.MaxInt64))
	}
	return total, nil
}
