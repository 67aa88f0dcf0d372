package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/jmoiron/sqlx"
)

// ErrNotSupported is returned by HourlyCounts and CountryCounts for a query
// other than the events preset: a daily counter or a custom query has no
// click times or countries to break down.
var ErrNotSupported = errors.New("not supported by this store query (only by the events preset)")

// MaxClicks is the largest number of clicks the store believes:
// reconcile.MaxClicks (2^53-1), the largest whole number a JSON reader (a
// float64) holds exactly, the same bound the comparison puts on Elido's
// counts. A count or a day's total above it comes from a wrong query, never
// from clicks, and fails the day's read. It also bounds the sum of a
// window: even 1000 such days add up to less than an int64 holds.
const MaxClicks = reconcile.MaxClicks

// errTooMany ends the error about a count above MaxClicks.
var errTooMany = fmt.Errorf("more clicks than a store can hold (%d): the query does not count clicks", int64(MaxClicks))

// addClicks returns total + n, or an error when the sum passes MaxClicks;
// n and total are at most MaxClicks, so the sum itself cannot overflow.
func addClicks(total, n int64) (int64, error) {
	if n > MaxClicks || total > MaxClicks-n {
		return 0, fmt.Errorf("the clicks add up to %w", errTooMany)
	}
	return total + n, nil
}

// DayCounts are the clicks the store recorded during one day.
type DayCounts struct {
	Date  reconcile.Date
	Total int64            // sum of Links
	Links map[string]int64 // clicks per link id; never nil
}

// HourCount is the number of clicks during one hour of a day; Start is
// the hour's first instant, in the day's zone.
type HourCount = reconcile.HourCount

// Counts runs q for day, a calendar day in loc, and returns the clicks per
// link. loc should come from time.LoadLocation: its name is the :tz
// parameter.
func (s *Store) Counts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) (DayCounts, error) {
	dc, err := s.counts(ctx, q, day, loc)
	if err != nil {
		return DayCounts{}, fmt.Errorf("count clicks for %s: %w", day, err)
	}
	return dc, nil
}

func (s *Store) counts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) (DayCounts, error) {
	dc := DayCounts{Date: day, Links: map[string]int64{}}
	if err := s.eachCount(ctx, q, day, loc, dc.addRow); err != nil {
		return DayCounts{}, err
	}
	return dc, nil
}

// EachCount runs q for day as Counts does, and hands each row to fn as it
// is read instead of collecting the rows in a map: a day of a large
// workspace is 100k links, which a caller may keep more compactly. A link
// may come in more than one row (they add up, as in Counts). The rows are
// checked as Counts checks them; after an error, the rows fn saw are not
// the day's counts.
func (s *Store) EachCount(ctx context.Context, q Query, day reconcile.Date, loc *time.Location, fn func(linkID string, clicks int64)) error {
	var total int64
	err := s.eachCount(ctx, q, day, loc, func(linkVal, clicksVal any) error {
		link, n, sum, err := readRow(linkVal, clicksVal, total)
		if err != nil {
			return err
		}
		fn(link, n)
		total = sum
		return nil
	})
	if err != nil {
		return fmt.Errorf("count clicks for %s: %w", day, err)
	}
	return nil
}

// eachCount runs q for day and passes each row, as the driver scanned it,
// to add.
func (s *Store) eachCount(ctx context.Context, q Query, day reconcile.Date, loc *time.Location, add func(linkVal, clicksVal any) error) error {
	if q.name == "" {
		return errors.New("no query: use PresetQuery or CustomQuery")
	}
	if loc == nil {
		return errors.New("no time zone")
	}
	nq, err := s.countQuery(q)
	if err != nil {
		return fmt.Errorf("%s query: %w", q.name, err)
	}
	if err := s.linkCheck(ctx, q); err != nil {
		return err
	}
	var z sessionZone
	if q.name == nameCustom {
		if z, err = s.customZone(ctx, loc); err != nil {
			return fmt.Errorf("%s query: %w", q.name, err)
		}
	}
	from, to := day.Bounds(loc)
	err = s.readOnlyIn(ctx, z, func(tx *sqlx.Tx) error {
		return s.query(ctx, tx, nq, s.paramsIn(day, from, to, loc, z), func(rows *sql.Rows) error {
			return readLinkCounts(rows, add)
		})
	})
	if err != nil {
		return fmt.Errorf("%s query: %w", q.name, err)
	}
	return nil
}

// HourlyCounts returns the clicks during each hour of day in loc, for the
// events preset. Hours are counted from the day's first instant, so a DST
// day has 23 or 25 of them; the last one is shorter where the day is not a
// whole number of hours long (Australia/Lord_Howe).
func (s *Store) HourlyCounts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) ([]HourCount, error) {
	hours, err := s.hourlyCounts(ctx, q, day, loc)
	if err != nil {
		return nil, fmt.Errorf("count hourly clicks for %s: %w", day, err)
	}
	return hours, nil
}

func (s *Store) hourlyCounts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) ([]HourCount, error) {
	if q.name != PresetEvents {
		return nil, ErrNotSupported
	}
	if loc == nil {
		return nil, errors.New("no time zone")
	}
	span, err := s.span()
	if err != nil {
		return nil, err
	}
	start, end := day.Bounds(loc)
	var hours []HourCount
	err = s.readOnly(ctx, func(tx *sqlx.Tx) error {
		for h := start; h.Before(end); h = h.Add(time.Hour) {
			next := h.Add(time.Hour)
			if next.After(end) {
				next = end
			}
			hc := HourCount{Start: h.In(loc)}
			err := s.query(ctx, tx, span, s.params(day, h, next, loc), func(rows *sql.Rows) error {
				for rows.Next() {
					if err := rows.Scan(&hc.Clicks); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			hours = append(hours, hc)
		}
		return nil
	})
	return hours, err
}

// CountryCounts returns the clicks per country during day in loc, for the
// events preset. Clicks with no country_code are counted under "".
func (s *Store) CountryCounts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) (map[string]int64, error) {
	countries, err := s.countryCounts(ctx, q, day, loc)
	if err != nil {
		return nil, fmt.Errorf("count clicks by country for %s: %w", day, err)
	}
	return countries, nil
}

func (s *Store) countryCounts(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) (map[string]int64, error) {
	if q.name != PresetEvents {
		return nil, ErrNotSupported
	}
	if loc == nil {
		return nil, errors.New("no time zone")
	}
	nq, err := s.countries()
	if err != nil {
		return nil, err
	}
	from, to := day.Bounds(loc)
	countries := map[string]int64{}
	err = s.readOnly(ctx, func(tx *sqlx.Tx) error {
		return s.query(ctx, tx, nq, s.params(day, from, to, loc), func(rows *sql.Rows) error {
			for rows.Next() {
				var code sql.NullString
				var n int64
				if err := rows.Scan(&code, &n); err != nil {
					return err
				}
				countries[code.String] += n
			}
			return nil
		})
	})
	return countries, err
}

// params returns the values of the named parameters in the types s's driver
// compares correctly: timestamptz for PostgreSQL, RFC 3339 UTC text with
// milliseconds for SQLite.
func (s *Store) params(day reconcile.Date, from, to time.Time, loc *time.Location) map[string]any {
	p := map[string]any{"day": day.String(), "tz": loc.String()}
	switch s.dialect {
	case dsn.SQLite:
		p["from"], p["to"] = sqliteTime(from), sqliteTime(to)
		if s.zone != nil {
			p["wall_from"], p["wall_to"] = wallTime(from, s.zone), wallTime(to, s.zone)
		}
	case dsn.MySQL:
		p["from"], p["to"] = mysqlBounds(s.wallZone, from, to)
	default: // PostgreSQL reads a timestamp column in the session TimeZone, by the same rule
		p["from"], p["to"] = from.UTC(), to.UTC()
	}
	return p
}

// paramsIn are params for a query that runs in the session zone z: on
// MySQL, where a session reads a DATETIME literal in its time_zone, :from
// and :to are the wall-clock times of the instants in z.
func (s *Store) paramsIn(day reconcile.Date, from, to time.Time, loc *time.Location, z sessionZone) map[string]any {
	p := s.params(day, from, to, loc)
	if s.dialect == dsn.MySQL && z.active() {
		p["from"], p["to"] = MySQLWallBound(from, z.zone), MySQLWallBound(to, z.zone)
	}
	return p
}

// mysqlBounds are :from and :to for MySQL: the instants, which the driver
// writes as UTC DATETIME text, or, for a DATETIME holding wall-clock times
// in zone, the wall-clock bounds of the rows the wall-clock rule places in
// [from, to) (wallBound), as DATETIME(6) text.
func mysqlBounds(zone *time.Location, from, to time.Time) (any, any) {
	if zone == nil {
		return from.UTC(), to.UTC()
	}
	return MySQLWallBound(from, zone), MySQLWallBound(to, zone)
}

const mysqlBoundLayout = "2006-01-02 15:04:05.000000"

// sqliteTimeLayout is how :from and :to reach SQLite.
const sqliteTimeLayout = "2006-01-02T15:04:05.000Z"

func sqliteTime(t time.Time) string { return t.UTC().Format(sqliteTimeLayout) }

// wallTime is the first wall-clock time, without an offset, that the
// wall-clock rule places at or after t in zone (wallBound), as a ts written
// in that zone holds it: julianday() reads both alike.
func wallTime(t time.Time, zone *time.Location) string {
	return wallBound(t, zone).Format("2006-01-02T15:04:05.000")
}

// readLinkCounts checks that rows has the columns link_id and clicks and
// passes each row's values to add.
func readLinkCounts(rows *sql.Rows, add func(linkVal, clicksVal any) error) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	linkCol, clicksCol := -1, -1
	for i, c := range cols {
		switch strings.ToLower(c) {
		case "link_id":
			linkCol = i
		case "clicks":
			clicksCol = i
		}
	}
	if len(cols) != 2 || linkCol < 0 || clicksCol < 0 {
		return fmt.Errorf("the query must return exactly two columns, link_id and clicks; it returned %s", describeColumns(cols))
	}
	vals := make([]any, 2)
	for rows.Next() {
		if err := rows.Scan(&vals[0], &vals[1]); err != nil {
			return err
		}
		if err := add(vals[linkCol], vals[clicksCol]); err != nil {
			return err
		}
	}
	return nil
}

// addRow adds one row (link_id, clicks) of a count query, as the driver
// scanned it, to dc. A value that is not a link id or a count, or a total
// past MaxClicks, is an error and leaves dc as it was.
func (dc *DayCounts) addRow(linkVal, clicksVal any) error {
	link, n, total, err := readRow(linkVal, clicksVal, dc.Total)
	if err != nil {
		return err
	}
	dc.Links[link] += n // at most dc.Total
	dc.Total = total
	return nil
}

// readRow reads one row (link_id, clicks) of a count query, as the driver
// scanned it: its link, its clicks, and sum, the day's total so far
// (total) with them. A value that is not a link id or a count, or a sum
// past MaxClicks, is an error.
func readRow(linkVal, clicksVal any, total int64) (link string, n, sum int64, err error) {
	if link, err = linkID(linkVal); err != nil {
		return "", 0, 0, err
	}
	if n, err = clickCount(clicksVal); err != nil {
		return "", 0, 0, fmt.Errorf("link_id %q: %w", link, err)
	}
	if sum, err = addClicks(total, n); err != nil {
		return "", 0, 0, err
	}
	return link, n, sum, nil
}

func describeColumns(cols []string) string {
	if len(cols) == 0 {
		return "no columns (is it a SELECT?)"
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = strconv.Quote(c)
	}
	return fmt.Sprintf("%d column(s): %s", len(cols), strings.Join(quoted, ", "))
}

func linkID(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case nil:
		return "", errors.New("link_id is NULL in a row: filter such rows out, or name them with COALESCE(link_id, 'unknown')")
	}
	return "", fmt.Errorf("link_id is %s, not text: cast it to text in the query", describeValue(v))
}

// clickCount reads a clicks value: an integer, or text, a numeric or a
// float that holds a whole number (PostgreSQL's sum(bigint) is numeric,
// SQLite's total() is a float).
func clickCount(v any) (int64, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("clicks is %v, not a whole number", v)
		}
		if math.Abs(v) > float64(MaxClicks) {
			return 0, fmt.Errorf("clicks is %v, %w", v, errTooMany)
		}
		n = int64(v)
	case []byte:
		return clickCount(string(v))
	case string:
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil && !errors.Is(ferr, strconv.ErrRange) || f != math.Trunc(f) {
				return 0, fmt.Errorf("clicks is %q, not a whole number", v)
			}
			if math.Abs(f) > float64(MaxClicks) {
				return 0, fmt.Errorf("clicks is %s, %w", v, errTooMany)
			}
			i = int64(f)
		}
		n = i
	case nil:
		return 0, errors.New("clicks is NULL: use COALESCE(..., 0) in the query")
	default:
		return 0, fmt.Errorf("clicks is %s, not a number", describeValue(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("clicks is %d: a count cannot be negative", n)
	}
	if n > MaxClicks {
		return 0, fmt.Errorf("clicks is %d, %w", n, errTooMany)
	}
	return n, nil
}

func describeValue(v any) string {
	switch v.(type) {
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a timestamp"
	}
	return fmt.Sprintf("a %T", v)
}
