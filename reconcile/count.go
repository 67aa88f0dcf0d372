package reconcile

import "time"

// DayCount is the clicks of one calendar day, as either side counted them.
type DayCount struct {
	Date   Date
	Clicks int64
}

// HourCount is the clicks of one hour; Start is the hour's first instant.
type HourCount struct {
	Start  time.Time
	Clicks int64
}
