package repair

import (
	"fmt"
	"slices"
	"time"

	"github.com/clickrecon/clickrecon/sources/store"
)

// Wall-clock columns
//
// A ts that holds wall-clock times (a PostgreSQL timestamp, a MySQL
// DATETIME, read in STORE_TIMESTAMP_TZ) cannot tell apart two clicks
// whose instants show the same wall time: those of the hour an autumn DST
// day repeats. Such a column is compared wall time by wall time: a click
// is lost when Elido has more clicks at its wall-clock time (to the
// millisecond), link and country than the store has rows, whichever of
// the two hours they were in, and as many are put back as are missing.
// The two repeated hours are one unit (units), so both of Elido's are
// counted against the store's rows of that wall hour. A store row at a
// wall time the zone skips (the spring day's missing hour) stands for a
// click nobody can place: it may be one of Elido's clicks of the hour
// after the jump, written with the old offset, and putting that click
// back would write it twice; an hour that holds one is refused.

// wallKey is a click as a wall-clock column compares it.
type wallKey struct {
	wall    string
	link    string
	country string
}

// PlanWallHour is PlanHour for a wall-clock column in zone: api and again
// are Elido's clicks of the unit h (read twice), local the store's rows,
// whose Wall is the wall-clock time each holds. The reads are checked as
// PlanHour checks them; the clicks to add are Elido's own (their instant
// as Elido has it), as many of each wall time, link and country as the
// store has fewer rows of. The unit is refused when the store holds a row
// at a wall time the zone skips, or when the difference does not account
// for the gap.
func PlanWallHour(h Hour, api, again []Click, local []store.Click, zone *time.Location) HourPlan {
	p := HourPlan{Hour: h, Refused: checkReads(h, api, again, len(local))}
	if p.Refused != "" {
		return p
	}
	var skipped []string
	sorted := slices.Clone(api)
	slices.SortFunc(sorted, compareClicks)
	keys := make([]wallKey, len(sorted))
	counts := map[wallKey]int{}
	for i, c := range sorted {
		keys[i] = wallKey{store.WallKey(c.TS, zone), c.LinkID, c.CountryCode}
		counts[keys[i]]++
	}
	rows := map[wallKey][]Click{}
	for _, c := range local {
		wall := c.Wall
		if wall == "" {
			wall = store.WallKey(c.TS, zone)
		} else if c.SkippedWall { // found when the store read the row
			skipped = append(skipped, wall)
		}
		k := wallKey{wall, c.LinkID, c.CountryCode}
		counts[k]--
		rows[k] = append(rows[k], fromStore(c).normal())
	}
	for i, c := range sorted {
		if k := keys[i]; counts[k] > 0 {
			counts[k]--
			p.Add = append(p.Add, c.normal())
		}
	}
	for k, n := range counts {
		for i := 0; n < 0; n, i = n+1, i+1 {
			p.Surplus = append(p.Surplus, rows[k][i])
		}
	}
	slices.SortFunc(p.Surplus, compareClicks)
	if len(skipped) > 0 && len(p.Add) > 0 {
		slices.Sort(skipped)
		p.Refused = fmt.Sprintf("the store holds %d row(s) at wall-clock times %s never shows (the first %s), which the column reads as the hour after the jump: which of Elido's clicks they stand for cannot be told, and a click put back could be written twice; nothing of this hour is written",
			len(skipped), zone, skipped[0])
		p.Add, p.Surplus = nil, nil
		return p
	}
	if p.Refused = checkAdd(h, p.Add, p.Surplus, ", compared by wall-clock time in "+zone.String()); p.Refused != "" {
		p.Add, p.Surplus = nil, nil
	}
	return p
}
