package reconcile

import (
	"fmt"
	"strconv"
)

// FindingAPIRevised is the kind of the finding Revise adds.
const FindingAPIRevised = "api_revised"

// Recorded is Elido's count of a settled day as an earlier run recorded
// it.
type Recorded struct {
	Clicks int64
	RunKey string // the earlier run's key
	At     string // when its report was generated, RFC 3339 in UTC
}

// Revise adds to res a finding for each settled day whose Elido count
// differs from the one an earlier run recorded (earlier, by day): Elido
// revised it after the fact (late bot filtering, a replay), which explains
// a gap that appears or disappears with no change in the store.
func Revise(res Result, earlier map[Date]Recorded) Result {
	for _, d := range res.Days {
		if !d.Settled || d.API == nil {
			continue
		}
		was, ok := earlier[d.Date]
		if !ok || was.Clicks == *d.API {
			continue
		}
		res.Findings = append(res.Findings, Finding{
			Kind: FindingAPIRevised,
			Message: fmt.Sprintf("Elido's count for %s changed from %s to %s clicks (%s) since run %s at %s: the provider revised it after the day had settled",
				d.Date, grouped(was.Clicks), grouped(*d.API), signedGrouped(*d.API-was.Clicks), was.RunKey, was.At),
		})
	}
	return res
}

// grouped writes n with its thousands separated by commas, as the
// reports write counts.
func grouped(n int64) string {
	s := strconv.FormatInt(abs64(n), 10)
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if n < 0 {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// signedGrouped is grouped with a + when n is positive.
func signedGrouped(n int64) string {
	if n > 0 {
		return "+" + grouped(n)
	}
	return grouped(n)
}
