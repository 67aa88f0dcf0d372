package reconcile

import (
	"fmt"

	"github.com/clickrecon/clickrecon/internal/words"
)

// duplicates names the store's rows that repeat another row exactly
// beyond Elido's count. The store keeps a click's instant, not when it was
// written, so the delay to the twin cannot be measured from the rows: the
// message gives the span of the repeated clicks. From hourly counts
// (rowRepeats) the rows are already counted in their hours' surplus, and
// the span is their hours'.
func (d *diagDay) duplicates(dupes []Click) {
	if len(dupes) < DiagMinDuplicates {
		if d.raw != nil {
			for _, c := range dupes {
				d.surplus[d.hourOf(c.TS)]++
			}
		}
		return
	}
	links := map[string]bool{}
	for _, c := range dupes {
		links[c.LinkID] = true
		d.dupTimes = append(d.dupTimes, c.TS)
	}
	nl := len(links)
	from, to := dupes[0].TS, dupes[0].TS
	for _, c := range dupes {
		from, to = minTime(from, c.TS), maxTime(to, c.TS)
	}
	if d.raw == nil {
		for _, c := range dupes {
			d.surplus[d.hourOf(c.TS)]--
		}
		from, to = d.hourStart(d.hourOf(from)), d.hourStart(d.hourOf(to)+1)
		d.found = append(d.found, Diagnosis{Kind: DiagDuplicates, From: from, To: to, Clicks: int64(len(dupes)), Links: &nl,
			Evidence: []string{EvidenceHourly, EvidenceRows},
			Message: fmt.Sprintf("the store holds %d rows that repeat another row exactly (same instant, link and country) in %s, on %s, beyond Elido's hourly count: a handler that is not idempotent records a retried delivery twice? Use X-Webhook-Delivery as the idempotency key. Elido's raw clicks were not read, so the repeats are counted only up to each hour's surplus, and which of the twins Elido counted cannot be told",
				len(dupes), HourSpan(from, to, d.loc), words.Plural(nl, "link", "links")),
		})
		return
	}
	d.found = append(d.found, Diagnosis{Kind: DiagDuplicates, From: from, To: to, Clicks: int64(len(dupes)), Links: &nl,
		Evidence: []string{EvidenceRows, EvidenceRaw},
		Message: fmt.Sprintf("the store holds %d rows that repeat another row exactly (instant, link and country) beyond Elido's count, on %s, for clicks from %s to %s: a delivery recorded twice, as a handler that is not idempotent does when a delivery is retried (5 or 15 minutes after a failure); the rows keep no arrival time, so the delay to the twin cannot be measured",
			len(dupes), words.Plural(nl, "link", "links"), clock(from, d.loc), clock(to, d.loc)),
	})
}

// rowRepeats returns, for a day diagnosed from hourly counts, the store's
// rows of each hour with a surplus that repeat another row of it exactly
// (a row held k times repeats k-1 times), at most the hour's surplus: the
// hourly counts say how many rows are beyond Elido's count, not which.
// An hour whose rows do not add up to its count (the store changed) is
// left out.
func (d *diagDay) rowRepeats() []Click {
	rows := map[int64]RowHour{}
	for _, r := range d.ev.Rows {
		rows[r.From.UnixMilli()] = r
	}
	var dupes []Click
	for i, h := range d.ev.Hours {
		r, ok := rows[h.Start.UnixMilli()]
		if !ok || d.surplus[i] == 0 || int64(len(r.Rows)) != h.Local {
			continue
		}
		seen := map[clickKey]bool{}
		var n int64
		for _, c := range sortedClicks(r.Rows) {
			k := keyOf(c)
			if seen[k] && n < d.surplus[i] {
				dupes = append(dupes, c)
				n++
			}
			seen[k] = true
		}
	}
	return dupes
}
