package store

import (
	"errors"
	"fmt"
	"os"
	"time"
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
// (Options.TimestampZone). "Local" is refused: a count must not depend on
// the machine the job runs on.
func TimestampZone(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if name == "" || name == "Local" || err != nil {
		return nil, fmt.Errorf("STORE_TIMESTAMP_TZ must name an IANA zone such as UTC or America/New_York, got %q", name)
	}
	return loc, nil
}
