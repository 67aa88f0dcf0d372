package reconcile

import (
	"fmt"
	"math"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
)

// versusRetry compares an outage with Elido's retry window.
func versusRetry(dur time.Duration) string {
	if dur > RetryWindow {
		return "longer than Elido's ~20-minute retry window"
	}
	return "within Elido's ~20-minute retry window, so retried deliveries should have filled it: a poller that stopped?"
}

// rateWords says a lost fraction as a person reads it: "about 1 in 20
// clicks".
func rateWords(p float64) string {
	if p <= 0 {
		return "losing nothing"
	}
	return fmt.Sprintf("about 1 in %d clicks", int64(math.Round(1/p)))
}

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04:05 MST") }

// span writes a duration as minutes and seconds: "24 minutes", "3 h 5 min".
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return words.Plural(int(d/time.Second), "second", "seconds")
	case d < time.Hour:
		return words.Plural(int(d.Round(time.Minute)/time.Minute), "minute", "minutes")
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m%60 == 0 {
		return words.Plural(m/60, "hour", "hours")
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
