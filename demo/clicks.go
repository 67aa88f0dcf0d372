package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// ClicksHeader is the header a clicks file for `clickrecon demo --serve
// --clicks FILE` starts with; country_code may be left out, and the
// columns may come in any order.
const ClicksHeader = "ts,link_id,country_code"

// timeLayouts are the forms of ts a clicks file may use: RFC 3339, and
// the forms PostgreSQL's COPY and SQLite write. A time without an offset
// is UTC, as the store reads it.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
}

// ReadClicks reads the clicks Elido is to count from a CSV file with the
// header ts,link_id,country_code: one click a line, ts a time (RFC 3339,
// 2026-10-24T14:03:00Z; or 2026-10-24 14:03:00+00 as PostgreSQL exports
// it; UTC when it has no offset), link_id not empty, country_code an ISO
// 3166-1 alpha-2 code or empty. An error names the line (as an editor
// numbers it, blank lines counted) and what to fix.
func ReadClicks(r io.Reader) ([]elidotest.Click, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the file is empty: it starts with the header %s", ClicksHeader)
		}
		return nil, fmt.Errorf("line 1: %w", err)
	}
	col := map[string]int{}
	for i, name := range head {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))] = i
	}
	tsCol, okTS := col["ts"]
	linkCol, okLink := col["link_id"]
	countryCol, okCountry := col["country_code"]
	if !okTS || !okLink {
		return nil, fmt.Errorf("line 1 is %q: the file starts with the header %s (country_code may be left out)", strings.Join(head, ","), ClicksHeader)
	}
	var clicks []elidotest.Click
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err // csv names the line
		}
		// The line of the file the record starts on, blank lines
		// counted: the number an editor shows.
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		field := func(i int) string {
			if i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ts, err := parseTime(field(tsCol))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		c := elidotest.Click{TS: ts, LinkID: field(linkCol)}
		if c.LinkID == "" {
			return nil, fmt.Errorf("line %d: link_id is empty", line)
		}
		if okCountry {
			c.CountryCode = strings.ToUpper(field(countryCol))
			if n := len(c.CountryCode); n != 0 && n != 2 {
				return nil, fmt.Errorf("line %d: country_code %q is not a two-letter code (ISO 3166-1 alpha-2, or empty)", line, c.CountryCode)
			}
		}
		clicks = append(clicks, c)
	}
	if len(clicks) == 0 {
		return nil, errors.New("the file has a header but no click")
	}
	slices.SortStableFunc(clicks, func(a, b elidotest.Click) int { return a.TS.Compare(b.TS) })
	return clicks, nil
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("ts %q is not a time: write RFC 3339, such as 2026-10-24T14:03:00Z", s)
}
