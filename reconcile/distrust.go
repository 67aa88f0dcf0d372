package reconcile

import (
	"fmt"
	"slices"
)

// distrustStore makes unverifiable every gap whose store numbers disagree
// with each other: the rows of the per-link query do not add up to the
// day-total query's count. Which of the two is right is not known, so the
// day is not a gap, no link is blamed, and Elido is not either. Once the
// queries are seen to disagree on a day, a gap whose rows were not added
// up is no longer trusted either: both queries run alike on every day.
// The days taken out are taken out of the totals too.
func distrustStore(res Result, details map[Date]DayDetail) Result {
	var disagree []Date
	changed := false
	for i, d := range res.Days {
		det, ok := details[d.Date]
		if !ok || !d.IsGap() || d.Local == nil || det.LocalLinkSum == nil || *det.LocalLinkSum == *d.Local {
			continue
		}
		sum := *det.LocalLinkSum
		if det.LocalRecount != nil && *det.LocalRecount == sum {
			res = untrust(res, i, fmt.Sprintf("the store's count of the day changed while it was read (%d, then %d): clicks were written to the day during the run; a later run checks it again",
				*d.Local, sum))
			changed = true
			continue
		}
		res = untrust(res, i, fmt.Sprintf("the store's two queries disagree: %s counts %d clicks, the rows of %s add up to %d",
			det.TotalQuery, *d.Local, det.LinkQuery, sum))
		res.Findings = append(res.Findings, Finding{Kind: FindingStoreQueries, Message: fmt.Sprintf(
			"%s: %s counts %d clicks, but the rows of %s add up to %d (%+d): the store's two queries disagree, so the day is unverifiable, not a gap, and no link and not Elido is blamed; make both count each click once (a join that repeats a click, or a filter only one of them has)",
			d.Date, det.TotalQuery, *d.Local, det.LinkQuery, sum, sum-*d.Local)})
		disagree = append(disagree, d.Date)
		changed = true
	}
	if len(disagree) > 0 {
		for i, d := range res.Days {
			if det, ok := details[d.Date]; d.IsGap() && (!ok || det.LocalLinkSum == nil) {
				res = untrust(res, i, fmt.Sprintf("the store's per-link rows of this day were not added up, and on %s the store's two queries disagree: its day total is not trusted",
					dateList(disagree)))
			}
		}
	}
	if changed {
		res.Findings = slices.DeleteFunc(res.Findings, func(f Finding) bool { return f.Kind == FindingUnverifiable })
		if f, ok := unverifiableFinding(res.Days); ok {
			res.Findings = append(res.Findings, f)
		}
	}
	return res
}

// untrust makes day i of res unverifiable for reason why, with no store
// count or delta, and takes it out of the totals, which sum only the days
// both sides were read and trusted.
func untrust(res Result, i int, why string) Result {
	d := &res.Days[i]
	if d.Status != Unverifiable && d.API != nil && d.Local != nil {
		res.Totals.API -= *d.API
		res.Totals.Local -= *d.Local
		res.Totals.Delta = res.Totals.Local - res.Totals.API
	}
	d.Status, d.Severity, d.Reason = Unverifiable, OK, why
	d.Local, d.Delta = nil, nil
	return res
}
