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
)

// Query is the count query a Store runs once per day: a preset or a custom
// query. The zero Query is not usable; get one from PresetQuery or
// CustomQuery.
type Query struct {
	name     string
	postgres namedQuery
	sqlite   namedQuery
}

// PresetQuery returns the preset count query called name: PresetEvents or
// PresetDaily.
func PresetQuery(name string) (Query, error) {
	var pg, lite string
	switch name {
	case PresetEvents:
		pg, lite = eventsPostgres, eventsSQLite
	case PresetDaily:
		pg, lite = dailyPostgres, dailySQLite
	default:
		return Query{}, fmt.Errorf("unknown store preset %q: use %s or %s (or a custom query file)", name, PresetEvents, PresetDaily)
	}
	return newQuery(name, pg, lite)
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
	q, err := newQuery(nameCustom, sqlText, sqlText)
	if err != nil {
		return Query{}, fmt.Errorf("custom store query: %w", err)
	}
	return q, nil
}

func newQuery(name, postgresText, sqliteText string) (Query, error) {
	pg, err := parseNamed(postgresText)
	if err != nil {
		return Query{}, err
	}
	lite, err := parseNamed(sqliteText)
	if err != nil {
		return Query{}, err
	}
	return Query{name: name, postgres: pg, sqlite: lite}, nil
}

// Name returns "events", "daily" or "custom", for logs and reports.
func (q Query) Name() string { return q.name }

// in returns q's text for dialect d.
func (q Query) in(d dsn.Dialect) namedQuery {
	if d == dsn.SQLite {
		return q.sqlite
	}
	return q.postgres
}

// spanQuery and countriesQuery return the events-schema queries behind
// HourlyCounts and CountryCounts.
func spanQuery(d dsn.Dialect) (namedQuery, error) {
	if d == dsn.SQLite {
		return parseNamed(spanSQLite)
	}
	return parseNamed(spanPostgres)
}

func countriesQuery(d dsn.Dialect) (namedQuery, error) {
	if d == dsn.SQLite {
		return parseNamed(countriesSQLite)
	}
	return parseNamed(countriesPostgres)
}
