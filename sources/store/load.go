package store

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// LoadQuery returns the count query a configuration names: the custom
// query of queryFile (STORE_QUERY_FILE) when it is set, with the total
// query of totalFile (STORE_TOTAL_QUERY_FILE) if that is set too, else the
// preset (STORE_PRESET). An error names the variable to fix.
func LoadQuery(preset, queryFile, totalFile string) (Query, error) {
	if queryFile == "" {
		switch {
		case totalFile != "":
			return Query{}, errors.New("STORE_TOTAL_QUERY_FILE is set without STORE_QUERY_FILE: a total query completes a custom count query; the presets have their own")
		case preset != PresetEvents && preset != PresetDaily:
			return Query{}, fmt.Errorf("STORE_PRESET must be events or daily, got %q (or set STORE_QUERY_FILE for a custom query)", preset)
		}
		return PresetQuery(preset)
	}
	b, err := os.ReadFile(queryFile)
	if err != nil {
		return Query{}, fmt.Errorf("STORE_QUERY_FILE: %w", err)
	}
	q, err := CustomQuery(string(b))
	if err != nil {
		return Query{}, fmt.Errorf("STORE_QUERY_FILE %s: %w", queryFile, err)
	}
	if totalFile == "" {
		return q, nil
	}
	b, err = os.ReadFile(totalFile)
	if err != nil {
		return Query{}, fmt.Errorf("STORE_TOTAL_QUERY_FILE: %w", err)
	}
	q, err = q.WithTotal(string(b))
	if err != nil {
		return Query{}, fmt.Errorf("STORE_TOTAL_QUERY_FILE %s: %w", totalFile, err)
	}
	return q, nil
}

// TimestampZone returns the zone STORE_TIMESTAMP_TZ names: the one in which
// a ts column of type timestamp (without time zone) is read
// (Options.TimestampZone). "" (unset) is nil: UTC for the presets, and a
// custom query's session runs in RECON_TZ. "Local" is refused: a count must
// not depend on the machine the job runs on.
func TimestampZone(name string) (*time.Location, error) {
	if name == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(name)
	if name == "Local" || err != nil {
		return nil, fmt.Errorf("STORE_TIMESTAMP_TZ must name an IANA zone such as UTC or America/New_York, got %q", name)
	}
	return loc, nil
}

// CheckZone reports, before anything is read, a STORE_TIMESTAMP_TZ that
// the store at t cannot apply to q: on SQLite a zone other than UTC
// reads wall-clock text of the events preset only (a custom query compares
// ts with UTC instants in its own SQL), and repair, which places clicks
// exactly in time, does not read such a store at all.
func CheckZone(t dsn.Target, q Query, zone *time.Location, repair bool) error {
	if t.Dialect != dsn.SQLite || zone == nil || zone.String() == "UTC" {
		return nil
	}
	switch {
	case repair:
		return fmt.Errorf("STORE_TIMESTAMP_TZ=%s: repair does not read a SQLite store whose ts is wall-clock text: its clicks cannot be placed exactly in time (the hour an autumn DST day repeats)", zone)
	case q.name == nameCustom || q.total.name == nameCustom:
		return fmt.Errorf("STORE_TIMESTAMP_TZ=%s on SQLite applies to the events preset only: a custom query (STORE_QUERY_FILE, STORE_TOTAL_QUERY_FILE) gets :from and :to as UTC instants; compare them with ts converted to UTC in the query, and leave STORE_TIMESTAMP_TZ unset", zone)
	}
	return nil
}
