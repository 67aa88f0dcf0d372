package elido

import (
	"context"
	"fmt"
	"time"
)

// Click is one raw human click as clicks/recent reports it: its instant
// (UTC, at the API's millisecond precision), its link (opaque) and its
// country (ISO 3166-1 alpha-2, or "" where Elido does not know it).
type Click struct {
	TS          time.Time
	LinkID      string
	CountryCode string
}

// ClicksRecent returns every click Elido has in [from, to), newest first,
// following next_cursor through every page until it is null, absent or
// empty: one page only would silently lose clicks under load. Each page is
// paced, retried and kept on Elido's host as any other request is. A click
// outside [from, to), a page out of order, or a cursor seen before is an
// error. A page that starts with the click the page before ended with is
// read as repeating it at the boundary, and that click is kept once. How
// far back the endpoint reaches is not documented: a caller compares what
// it gets with Elido's count for the span before trusting it.
func (c *Client) ClicksRecent(ctx context.Context, from, to time.Time) ([]Click, error) {
	return c.ClicksRecentPaged(ctx, from, to, clickPageSize)
}

// ClicksRecentPaged is ClicksRecent asking for pages of pageSize clicks
// (1 to 1000): read again with another size, the same span has its page
// boundaries elsewhere, so a caller can tell a stable answer from one that
// lost or repeated a click where a page ended.
func (c *Client) ClicksRecentPaged(ctx context.Context, from, to time.Time, pageSize int) ([]Click, error) {
	op := fmt.Sprintf("GET %s %s..%s", endpointRecentClicks, from.UTC().Format(tsLayout), to.UTC().Format(tsLayout))
	switch {
	case !from.Before(to):
		return nil, fmt.Errorf("elido: %s: from is not before to", op)
	case pageSize < 1 || pageSize > clickPageSize:
		return nil, fmt.Errorf("elido: %s: a page holds 1 to %d clicks, not %d", op, clickPageSize, pageSize)
	}
	var all []Click
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		pageOp := op
		if page > 1 {
			pageOp = fmt.Sprintf("%s page %d", op, page)
		}
		var p clickPage
		err := c.get(ctx, pageOp, endpointRecentClicks, recentClicksQuery(from, to, pageSize, cursor), func(data []byte) error {
			got, err := decodeClicks(data)
			if err != nil {
				return err
			}
			var prev *Click
			if len(all) > 0 {
				prev = &all[len(all)-1]
			}
			if err := checkClicks(got.clicks, prev, from, to); err != nil {
				return err
			}
			p = got
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(all) > 0 && len(p.clicks) > 0 && p.clicks[0].same(all[len(all)-1]) {
			p.clicks = p.clicks[1:] // the boundary's click, repeated
		}
		all = append(all, p.clicks...)
		if p.nextCursor == "" {
			return all, nil
		}
		if seen[p.nextCursor] {
			return nil, fmt.Errorf("elido: %s: page %d repeats an earlier cursor: stopping rather than looping", op, page)
		}
		seen[p.nextCursor] = true
		cursor = p.nextCursor
	}
}

// checkClicks checks a page of clicks: each in [from, to), newest first,
// continuing from prev, the last click of the page before (nil for the
// first page).
func checkClicks(clicks []Click, prev *Click, from, to time.Time) error {
	for i, cl := range clicks {
		switch {
		case cl.TS.Before(from) || !cl.TS.Before(to):
			return fmt.Errorf("item %d at %s is outside the %s..%s asked for", i, cl.TS.Format(tsLayout), from.UTC().Format(tsLayout), to.UTC().Format(tsLayout))
		case prev != nil && cl.TS.After(prev.TS):
			return fmt.Errorf("item %d at %s is newer than the click before it (%s): clicks must come newest first", i, cl.TS.Format(tsLayout), prev.TS.Format(tsLayout))
		}
		prev = &clicks[i]
	}
	return nil
}

// same reports whether two clicks are the same click as the API tells
// them apart: its instant, link and country.
func (cl Click) same(o Click) bool {
	return cl.TS.Equal(o.TS) && cl.LinkID == o.LinkID && cl.CountryCode == o.CountryCode
}
