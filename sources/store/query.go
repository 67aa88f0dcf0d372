package store

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// The preset names, as STORE_PRESET spells them.
const (
	PresetEvents = "events" // one row per click: table clicks
	PresetDaily  = "daily"  // a counter per link and day: table click_counts

	// DefaultPreset is the preset used when none is configured.
	DefaultPreset = PresetEvents
)

// nameCustom is Query.Name of a custom query.
const nameCustom = "custom"

var (
	//go:embed queries/events_postgres.sql
	eventsPostgres string
	//go:embed queries/events_sqlite.sql
	eventsSQLite string
	//go:embed queries/daily_postgres.sql
	dailyPostgres string
	//go:embed queries/daily_sqlite.sql
	dailySQLite string
	//go:embed queries/span_postgres.sql
	spanPostgres string
	//go:embed queries/span_sqlite.sql
	spanSQLite string
	//go:embed queries/countries_postgres.sql
	countriesPostgres string
	//go:embed queries/countries_sqlite.sql
	countriesSQLite string
	//go:embed queries/total_daily_postgres.sql
	totalDailyPostgres string
	//go:embed queries/total_daily_sqlite.sql
	totalDailySQLite string
	//go:embed queries/total_daily_chunk_postgres.sql
	totalDailyChunkPostgres string
	//go:embed queries/total_daily_chunk_sqlite.sql
	totalDailyChunkSQLite string
)

// Query is the count query a Store runs once per day: a preset or a custom
// query. The zero Query is not usable; get one from PresetQuery or
// CustomQuery.
type Query struct {
	name string
	dialects
	total totalQuery
}

// dialects is one statement's text for each dialect: the one table that
// Query, totalQuery and chunkQuery pick from (in).
type dialects struct {
	postgres namedQuery
	sqlite   namedQuery
	mysql    namedQuery
}

// totalQuery reads one day's total: one row, one column. The zero
// totalQuery is none: the day's total is then the sum of the count query's
// rows.
type totalQuery struct {
	name string // the preset's name, or nameCustom
	dialects
	// chunk, when set (the daily preset), reads the totals of a run of
	// days in one statement: rows (day, clicks) for the days from :first
	// to :last that have clicks.
	chunk *chunkQuery
}

// chunkQuery is a totalQuery's statement for a run of days.
type chunkQuery = dialects

// PresetQuery returns the preset count query called name: PresetEvents or
// PresetDaily.
func PresetQuery(name string) (Query, error) {
	var pg, lite, my, totalPG, totalLite, totalMy string
	switch name {
	case PresetEvents:
		pg, lite, my = eventsPostgres, eventsSQLite, eventsMySQL
		totalPG, totalLite, totalMy = spanPostgres, spanSQLite, spanMySQL
	case PresetDaily:
		pg, lite, my = dailyPostgres, dailySQLite, dailyMySQL
		totalPG, totalLite, totalMy = totalDailyPostgres, totalDailySQLite, totalDailyMySQL
	default:
		return Query{}, fmt.Errorf("unknown store preset %q: use %s or %s (or a custom query file)", name, PresetEvents, PresetDaily)
	}
	q, err := newQuery(name, pg, lite, my)
	if err != nil {
		return Query{}, err
	}
	total, err := newQuery(name, totalPG, totalLite, totalMy)
	if err != nil {
		return Query{}, err
	}
	q.total = totalQuery{name: name, dialects: total.dialects}
	if name == PresetDaily {
		// The events preset keeps its statement per day: counting a
		// chunk of days in one statement measured no faster there.
		pg, err := parseNamedWith(totalDailyChunkPostgres, chunkParam, useChunk)
		if err != nil {
			return Query{}, err
		}
		lite, err := parseNamedWith(totalDailyChunkSQLite, chunkParam, useChunk)
		if err != nil {
			return Query{}, err
		}
		my, err := parseNamedMySQL(totalDailyChunkMySQL, chunkParam, useChunk)
		if err != nil {
			return Query{}, err
		}
		q.total.chunk = &chunkQuery{postgres: pg, sqlite: lite, mysql: my}
	}
	return q, nil
}

// useChunk ends a message about a parameter a chunk query does not offer.
const useChunk = "a chunk query may use the named parameters :first and :last"

// chunkParam reports whether name is a parameter of a chunk query.
func chunkParam(name string) bool { return name == "first" || name == "last" }

// WithTotal returns q with a custom total query (STORE_TOTAL_QUERY_FILE):
// one statement in the store's dialect, with the named parameters of the
// count query (:day, :from, :to, :tz), that returns one row with one
// column, the day's clicks (named clicks by convention). Totals runs it
// once per day; without it, a custom query's total is the sum of its rows,
// correct but as slow as the per-link count.
func (q Query) WithTotal(sqlText string) (Query, error) {
	if strings.TrimSpace(sqlText) == "" {
		return Query{}, errors.New("custom total query is empty")
	}
	total, err := customQuery(sqlText)
	if err != nil {
		return Query{}, fmt.Errorf("custom total query: %w", err)
	}
	q.total = totalQuery{name: nameCustom, dialects: total.dialects}
	return q, nil
}

// CustomQuery returns a count query from the SQL text of a custom query file
// (STORE_QUERY_FILE). The text is one statement, in the store's dialect,
// that may use the named parameters :day, :from, :to and :tz and returns
// rows (link_id, clicks); see the package documentation for the contract.
// CustomQuery checks the parameters; the columns are checked when the query
// runs.
func CustomQuery(sqlText string) (Query, error) {
	if strings.TrimSpace(sqlText) == "" {
		return Query{}, errors.New("custom store query is empty")
	}
	q, err := customQuery(sqlText)
	if err != nil {
		return Query{}, fmt.Errorf("custom store query: %w", err)
	}
	return q, nil
}

// customQuery parses the text of a custom query for every dialect. The
// store's dialect is not known yet, and the dialects read some text
// differently (a '#' starts a comment on MySQL only, a backslash escapes a
// quote in MySQL's strings only): the text is refused only when no dialect
// can read it, with the PostgreSQL and SQLite reading's error; otherwise a
// dialect that cannot read it fails the query when it runs on that
// dialect (namedQuery.err).
func customQuery(sqlText string) (Query, error) {
	q := Query{name: nameCustom}
	pg, pgErr := parseNamed(sqlText)
	my, myErr := parseNamedMySQL(sqlText, allowedParam, useNamed)
	switch {
	case pgErr != nil && myErr != nil:
		return Query{}, pgErr
	case pgErr != nil:
		pg = namedQuery{err: fmt.Errorf("%w: on PostgreSQL and SQLite: %w", ErrBadQuery, pgErr)}
	case myErr != nil:
		my = namedQuery{err: fmt.Errorf("%w: on MySQL: %w", ErrBadQuery, myErr)}
	}
	q.postgres, q.sqlite, q.mysql = pg, pg, my
	return q, nil
}

// newQuery parses a query's text for each dialect; mysqlText, when not
// empty, is parsed with MySQL's rules, and a failure there is an error.
func newQuery(name, postgresText, sqliteText, mysqlText string) (Query, error) {
	pg, err := parseNamed(postgresText)
	if err != nil {
		return Query{}, err
	}
	lite, err := parseNamed(sqliteText)
	if err != nil {
		return Query{}, err
	}
	q := Query{name: name, dialects: dialects{postgres: pg, sqlite: lite}}
	if mysqlText != "" {
		if q.mysql, err = parseNamedMySQL(mysqlText, allowedParam, useNamed); err != nil {
			return Query{}, err
		}
	}
	return q, nil
}

// Name returns "events", "daily" or "custom", for logs and reports.
func (q Query) Name() string { return q.name }

// TotalSource names, for a user who must fix it, the query that reads a
// day's total (Totals): STORE_TOTAL_QUERY_FILE, a preset's own total
// query, or the sum of the rows of the per-link query.
func (q Query) TotalSource() string {
	switch {
	case q.total.name == nameCustom:
		return "the day-total query (STORE_TOTAL_QUERY_FILE)"
	case q.total.name != "":
		return fmt.Sprintf("the day-total query of STORE_PRESET=%s", q.total.name)
	}
	return "the sum of the per-link query's rows"
}

// LinkSource names, for a user who must fix it, the query that reads a
// day's per-link counts (Counts, EachCount): STORE_QUERY_FILE or a
// preset's.
func (q Query) LinkSource() string {
	if q.name == nameCustom {
		return "the per-link query (STORE_QUERY_FILE)"
	}
	return fmt.Sprintf("the per-link query of STORE_PRESET=%s", q.name)
}

// in returns the text for dialect d.
func (t dialects) in(d dsn.Dialect) namedQuery {
	switch d {
	case dsn.SQLite:
		return t.sqlite
	case dsn.MySQL:
		return t.mysql
	}
	return t.postgres
}

// spanQuery and countriesQuery return the events-schema queries behind
// HourlyCounts and CountryCounts, with a ts without an offset read as UTC;
// Store.span and Store.countries read it in the store's timestamp zone.
func spanQuery(d dsn.Dialect) (namedQuery, error) {
	switch d {
	case dsn.SQLite:
		return parseNamed(spanSQLite)
	case dsn.MySQL:
		return parseNamedMySQL(spanMySQL, allowedParam, useNamed)
	}
	return parseNamed(spanPostgres)
}

func countriesQuery(d dsn.Dialect) (namedQuery, error) {
	switch d {
	case dsn.SQLite:
		return parseNamed(countriesSQLite)
	case dsn.MySQL:
		return parseNamedMySQL(countriesMySQL, allowedParam, useNamed)
	}
	return parseNamed(countriesPostgres)
}

func (s *Store) span() (namedQuery, error) {
	if s.dialect == dsn.SQLite {
		return s.liteQuery(spanSQLite)
	}
	return spanQuery(s.dialect)
}

func (s *Store) countries() (namedQuery, error) {
	if s.dialect == dsn.SQLite {
		return s.liteQuery(countriesSQLite)
	}
	return countriesQuery(s.dialect)
}

// sqliteRange is the condition every events query for SQLite puts on ts:
// the day or hour [:from, :to) as instants, a ts without an offset read as
// UTC.
const sqliteRange = "WHERE julianday(ts) >= julianday(:from)\n  AND julianday(ts) < julianday(:to)"

// sqliteZonedRange is sqliteRange for a ts without an offset that holds
// wall-clock times in STORE_TIMESTAMP_TZ: such a row is compared with the
// bounds' wall-clock times in that zone (:wall_from, :wall_to, computed in
// Go), a row with an offset or Z with the instants, as written. Each arm is
// a range of the index on julianday(ts).
const sqliteZonedRange = `WHERE (julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)
    AND (ts GLOB '*[Zz]' OR ts GLOB '*[+-][0-9][0-9]:[0-9][0-9]'))
   OR (julianday(ts) >= julianday(:wall_from) AND julianday(ts) < julianday(:wall_to)
    AND NOT (ts GLOB '*[Zz]' OR ts GLOB '*[+-][0-9][0-9]:[0-9][0-9]'))`

// errZonedCustom refuses a custom query on a SQLite store with a
// timestamp zone: its own SQL compares ts with :from and :to, UTC instants,
// and clickrecon cannot make it read ts in another zone.
var errZonedCustom = fmt.Errorf("%w: STORE_TIMESTAMP_TZ on SQLite applies to the events preset only: a custom query gets :from and :to as UTC instants; compare them with ts converted to UTC in the query, and leave STORE_TIMESTAMP_TZ unset", ErrBadQuery)

// liteQuery parses text, an events-schema query for SQLite, for s: as it
// is, or with its ts range read in s's timestamp zone.
func (s *Store) liteQuery(text string) (namedQuery, error) {
	if s.zone == nil {
		return parseNamed(text)
	}
	if !strings.Contains(text, sqliteRange) {
		return namedQuery{}, errors.New("the query has no ts range to read in STORE_TIMESTAMP_TZ")
	}
	return parseNamedWith(strings.Replace(text, sqliteRange, sqliteZonedRange, 1), zonedParam, useNamed)
}

// zonedParam reports whether name is a parameter of a zoned SQLite query.
func zonedParam(name string) bool {
	return allowedParam(name) || name == "wall_from" || name == "wall_to"
}

// countQuery returns the per-link query of q for s.
func (s *Store) countQuery(q Query) (namedQuery, error) {
	if s.zone == nil || q.name == PresetDaily {
		return q.in(s.dialect), nil
	}
	if q.name == PresetEvents {
		return s.liteQuery(eventsSQLite)
	}
	return namedQuery{}, errZonedCustom
}

// totalQuery returns the day-total query of q for s, and whether it is
// the per-link query (whose rows are then summed).
func (s *Store) totalQuery(q Query) (nq namedQuery, summed bool, err error) {
	if q.total.name == "" {
		nq, err = s.countQuery(q)
		return nq, true, err
	}
	switch {
	case s.zone == nil || q.total.name == PresetDaily:
		return q.total.in(s.dialect), false, nil
	case q.total.name == PresetEvents:
		nq, err = s.liteQuery(spanSQLite)
		return nq, false, err
	}
	return namedQuery{}, false, errZonedCustom
}
