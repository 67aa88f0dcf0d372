// Package repair puts back the clicks a click store lost, as pt-table-sync
// does for tables: it computes exactly which rows differ, prints them by
// default, inserts them only when asked, and refuses where it cannot be
// sure. It never deletes: a row the store has and Elido does not is
// listed as surplus, never removed.
//
// A repair is planned per settled missing day and localised to the hours
// whose Elido count differs from the store's, and those whose counts agree
// but whose store rows repeat one another exactly (a click lost beside a
// duplicate in the same hour leaves its count unchanged). For each such
// hour it reads
// every click Elido has (clicks/recent), checks that they add up to
// Elido's hourly count (else the endpoint does not reach that far back, or
// the hour changed while it was read, and the hour is refused), reads them
// again with other page boundaries and requires the same clicks (else a
// page lost or repeated a click where it ended), reads the store's rows
// for the hour, and takes the multiset difference keyed by (instant at the
// API's millisecond precision, link, country).
package repair

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/sources/store"
)

// Click is one click, as both sides are compared: its instant in UTC
// truncated to the millisecond (the API's precision), its link and its
// country ("" where unknown, NULL in the store).
type Click struct {
	TS          time.Time
	LinkID      string
	CountryCode string
}

// key is a click as a map key: time.Time's location pointer must not tell
// two equal instants apart.
type key struct {
	ms      int64
	link    string
	country string
}

// fromStore is the store's row c as a click of the comparison (its wall
// time aside).
func fromStore(c store.Click) Click {
	return Click{TS: c.TS, LinkID: c.LinkID, CountryCode: c.CountryCode}
}

// toStore is c as a row the store writes.
func (c Click) toStore() store.Click {
	return store.Click{TS: c.TS, LinkID: c.LinkID, CountryCode: c.CountryCode}
}

func (c Click) key() key { return key{c.TS.UnixMilli(), c.LinkID, c.CountryCode} }

// normal returns c at the precision the comparison uses.
func (c Click) normal() Click {
	c.TS = time.UnixMilli(c.TS.UnixMilli()).UTC()
	return c
}

func compareClicks(a, b Click) int {
	return cmp.Or(a.TS.Compare(b.TS), strings.Compare(a.LinkID, b.LinkID), strings.Compare(a.CountryCode, b.CountryCode))
}

// Diff returns the multiset difference of Elido's clicks and the store's:
// add holds each click Elido has more often than the store (as many times
// as it is missing), surplus each row the store has more often than
// Elido. Both are sorted by instant, link and country.
func Diff(api, local []Click) (add, surplus []Click) {
	counts := map[key]int{}
	first := map[key]Click{}
	for _, c := range api {
		c = c.normal()
		counts[c.key()]++
		first[c.key()] = c
	}
	for _, c := range local {
		c = c.normal()
		counts[c.key()]--
		first[c.key()] = c
	}
	for k, n := range counts {
		for ; n > 0; n-- {
			add = append(add, first[k])
		}
		for ; n < 0; n++ {
			surplus = append(surplus, first[k])
		}
	}
	slices.SortFunc(add, compareClicks)
	slices.SortFunc(surplus, compareClicks)
	return add, surplus
}

// Hour is an hour of a day, [From, To), with both sides' counts for it.
type Hour struct {
	From, To time.Time
	API      int64 // Elido's hourly count (timeseries?interval=hour)
	Store    int64 // the store's count when the repair was planned
}

// HourPlan is what a repair does with one hour that differs.
type HourPlan struct {
	Hour
	Add     []Click // the clicks to put back
	Surplus []Click // rows the store has and Elido does not: listed, never deleted
	// Refused is why the hour is not repaired; "" when it is.
	Refused string
}

// PlanHour compares an hour's clicks: api, every click clicks/recent gave
// for it, again, every click it gave when read a second time with its page
// boundaries elsewhere, and local, the store's rows. The hour is refused
// unless the two reads hold the same clicks (else a page lost or repeated
// one where it ended, or the hour changed while it was read), api holds
// exactly Elido's hourly count and local the store's (else the source is
// incomplete, or a side changed while it was read), the difference
// accounts for the whole gap of the hour, and every click to add can be
// written as SQL text (no NUL byte, valid UTF-8).
func PlanHour(h Hour, api, again, local []Click) HourPlan {
	p := HourPlan{Hour: h, Refused: checkReads(h, api, again, len(local))}
	if p.Refused != "" {
		return p
	}
	p.Add, p.Surplus = Diff(api, local)
	if p.Refused = checkAdd(h, p.Add, p.Surplus, ""); p.Refused != "" {
		p.Add, p.Surplus = nil, nil
	}
	return p
}

// checkReads says why an hour's reads cannot be compared ("" when they
// can): the two reads of Elido's clicks differ, they do not add up to
// Elido's hourly count, or the store's rows to its count.
func checkReads(h Hour, api, again []Click, local int) string {
	switch {
	case !sameClicks(api, again):
		add, lost := Diff(api, again)
		return fmt.Sprintf("clicks/recent gave other clicks when read again with other page boundaries (%d and %d clicks, %d not in both): its answer is not stable; nothing of this hour is written", len(api), len(again), len(add)+len(lost))
	case int64(len(api)) != h.API:
		return fmt.Sprintf("clicks/recent gave %d clicks for this hour, Elido counts %d: it does not reach this far back, or the hour changed while it was read", len(api), h.API)
	case int64(local) != h.Store:
		return fmt.Sprintf("the store read %d rows for this hour, then counted %d: it changed while it was read", local, h.Store)
	}
	return ""
}

// checkAdd says why the clicks to add do not make a repair of h ("" when
// they do): they do not account for its gap, or one cannot be written.
func checkAdd(h Hour, add, surplus []Click, how string) string {
	if gap := h.API - h.Store; int64(len(add)-len(surplus)) != gap {
		return fmt.Sprintf("the difference (%d to add, %d surplus%s) does not account for the hour's gap of %d", len(add), len(surplus), how, gap)
	}
	for _, c := range add {
		if err := c.writable(); err != nil {
			return fmt.Sprintf("its click at %s cannot be written: %v", c.TS.Format(tsLayout), err)
		}
	}
	return ""
}

// holdable returns p refused when the store's columns cannot hold one of
// its clicks to add (a 4-byte character in a utf8mb3 link_id, a character
// a latin1 column lacks), naming the click, its value and the column's
// character set: nothing of the hour is written, rather than an insert
// failing, or storing another value, when it is applied.
func (p HourPlan) holdable(cols store.Columns) HourPlan {
	if !p.Repairable() {
		return p
	}
	for _, c := range p.Add {
		if err := cols.Holds(c.LinkID, c.CountryCode); err != nil {
			p.Refused = fmt.Sprintf("its click at %s cannot be stored: its %v", c.TS.Format(tsLayout), err)
			p.Add = nil
			return p
		}
	}
	return p
}

// sameClicks reports whether a and b hold the same multiset of clicks.
func sameClicks(a, b []Click) bool {
	add, surplus := Diff(a, b)
	return len(a) == len(b) && len(add) == 0 && len(surplus) == 0
}

// writable says why c cannot be written as SQL text, if it cannot.
func (c Click) writable() error {
	if _, err := sqlString(c.LinkID); err != nil {
		return fmt.Errorf("its link id %w", err)
	}
	if _, err := sqlString(c.CountryCode); err != nil {
		return fmt.Errorf("its country %w", err)
	}
	return nil
}

// Repairable reports whether the hour is repaired, and has clicks to add.
func (p HourPlan) Repairable() bool { return p.Refused == "" && len(p.Add) > 0 }
