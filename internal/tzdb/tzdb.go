// Package tzdb lists the time zones of the tz database and their
// transitions, for tests that must hold in every zone rather than in a
// chosen few.
//
// The zones are the files of the system's zoneinfo directory (ZONEINFO, or
// /usr/share/zoneinfo). When it cannot be read a test is skipped with a
// message, unless CI is set (to anything non-empty): then it fails, so
// that CI never passes by skipping.
package tzdb

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Dir is the zoneinfo directory Zones reads.
func Dir() string {
	if d := os.Getenv("ZONEINFO"); d != "" {
		return d
	}
	return "/usr/share/zoneinfo"
}

// Zones returns every zone of the tz database, by name, sorted, loaded:
// the region/city files of Dir (and the old names the database keeps as
// links), without its posix/ and right/ copies.
func Zones(t testing.TB) []*time.Location {
	t.Helper()
	dir := Dir()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "posix" || rel == "right" {
				return filepath.SkipDir
			}
			return nil
		}
		// zone names start with a capital letter and have no dot
		// (tzdata.zi, zone.tab, iso3166.tab, leapseconds, posixrules, localtime are not zones)
		if rel == "" || rel[0] < 'A' || rel[0] > 'Z' || strings.Contains(rel, ".") || rel == "Factory" {
			return nil
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil || len(names) == 0 {
		msg := "tzdb: no zones in " + dir + " (set ZONEINFO to a zoneinfo directory)"
		if err != nil {
			msg += ": " + err.Error()
		}
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	slices.Sort(names)
	var out []*time.Location
	for _, n := range names {
		loc, err := time.LoadLocation(n)
		if err != nil {
			continue // a file of the directory that is not a zone Go reads
		}
		out = append(out, loc)
	}
	return out
}

// Transition is an instant a zone's UTC offset changes, from Before to
// After seconds east of UTC.
type Transition struct {
	At            time.Time
	Before, After int
}

// Back reports whether the clocks go back: a span of wall time is shown
// twice.
func (tr Transition) Back() bool { return tr.After < tr.Before }

// Transitions returns loc's transitions in [from, to), found by stepping
// through the span a quarter of an hour at a time and bisecting each
// change to the second. Two changes within a quarter of an hour would be
// seen as one or none; the tz database has none.
func Transitions(loc *time.Location, from, to time.Time) []Transition {
	var out []Transition
	_, prev := from.In(loc).Zone()
	for t := from; t.Before(to); {
		next := t.Add(15 * time.Minute)
		_, off := next.In(loc).Zone()
		if off != prev {
			lo, hi := t, next // offset prev at lo, another at hi
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
				if mid.Equal(lo) {
					mid = lo.Add(time.Second)
				}
				if _, o := mid.In(loc).Zone(); o == prev {
					lo = mid
				} else {
					hi = mid
				}
			}
			if !hi.Before(from) && hi.Before(to) {
				out = append(out, Transition{At: hi, Before: prev, After: off})
			}
			prev = off
		}
		t = next
	}
	return out
}
