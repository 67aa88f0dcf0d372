package reconcile

import (
	"fmt"
	"strings"
	"time"
)

// Beside is what is known of the day next to an outage that reaches
// midnight, when that day has no diagnosis to join it with.
type Beside struct {
	// Ended says the outage did not go on in that day: it holds every
	// click Elido counted there.
	Ended bool
	// Why says what is known of the day, as a clause naming it:
	// "2026-10-25 is outside the run's window: not checked".
	Why string
}

// JoinMidnight makes one event of an outage that the calendar cuts in
// two: an outage that reaches a day's end (AtEnd) and one of the next day
// that begins at its start (AtStart) are the same outage. Each part then
// names the day it continues from or into, and its message judges Elido's
// retry window on the whole outage, not on its part of the day. An outage
// that reaches midnight with no part on the other side says what is known
// of that day: a diagnosed day (with diagnoses) that has no outage at its
// midnight ended it; for any other day beside says. When the whole
// outage's length is not known and its known part is within the retry
// window, the message says that it cannot tell, instead of blaming a
// poller.
func JoinMidnight(days []DayDiagnosis, loc *time.Location, beside func(Date) Beside) {
	byDate := map[Date]int{}
	for i, dd := range days {
		byDate[dd.Date] = i
	}
	// edge returns the outage of date that reaches its start (or end).
	edge := func(date Date, start bool) *Diagnosis {
		i, ok := byDate[date]
		if !ok {
			return nil
		}
		for j := range days[i].Diagnoses {
			d := &days[i].Diagnoses[j]
			if d.Kind == DiagOutage && (start && d.AtStart || !start && d.AtEnd) {
				return d
			}
		}
		return nil
	}
	// other says what is known of date, next to an outage with no part
	// there.
	other := func(date Date, start bool) Beside {
		if i, ok := byDate[date]; ok && len(days[i].Diagnoses) > 0 {
			where := "its end"
			if start {
				where = "its start"
			}
			return Beside{Ended: true, Why: fmt.Sprintf("the diagnosis of %s finds no outage reaching %s", date, where)}
		}
		return beside(date)
	}
	for i := range days {
		for j := range days[i].Diagnoses {
			d := &days[i].Diagnoses[j]
			if d.Kind != DiagOutage || !d.AtEnd {
				continue
			}
			date := days[i].Date
			next := date.AddDays(1)
			if p := edge(next, true); p != nil {
				d.ContinuesInto, p.ContinuesFrom = &next, &date
			}
		}
	}
	for i := range days {
		for j := range days[i].Diagnoses {
			head := &days[i].Diagnoses[j]
			if head.Kind != DiagOutage || head.ContinuesFrom != nil || !(head.AtStart || head.AtEnd) {
				continue
			}
			chain := []*Diagnosis{head}
			dates := []Date{days[i].Date}
			for last := head; last.ContinuesInto != nil; {
				dates = append(dates, *last.ContinuesInto)
				last = edge(*last.ContinuesInto, true)
				chain = append(chain, last)
			}
			tell(chain, dates, loc, other)
		}
	}
}

// tell rewrites the messages of the parts of one outage, in date order.
func tell(chain []*Diagnosis, dates []Date, loc *time.Location, other func(Date, bool) Beside) {
	first, last := chain[0], chain[len(chain)-1]
	var before, after *Beside
	if first.AtStart {
		b := other(dates[0].AddDays(-1), false)
		before = &b
	}
	if last.AtEnd {
		a := other(dates[len(dates)-1].AddDays(1), true)
		after = &a
	}
	whole := last.To.Sub(first.From).Round(time.Second)
	known := (before == nil || before.Ended) && (after == nil || after.Ended)
	var verdict string
	switch {
	case whole > RetryWindow || known:
		verdict = versusRetry(whole)
	default:
		verdict = fmt.Sprintf("whether it outlasted Elido's ~20-minute retry window cannot be told (%s of it were seen)", span(whole))
	}
	for k, d := range chain {
		msg := d.Message
		if d.retry {
			msg = strings.TrimSuffix(strings.TrimSuffix(msg, versusRetry(d.dur)), ", ")
		}
		var parts []string
		if k == 0 && before != nil {
			parts = append(parts, "it runs from midnight; "+before.Why+maybe(before.Ended, "it may have begun earlier"))
		}
		if d.ContinuesFrom != nil {
			parts = append(parts, fmt.Sprintf("it continues from %s (from %s)", *d.ContinuesFrom, clock(chain[k-1].From, loc)))
		}
		if d.ContinuesInto != nil {
			parts = append(parts, fmt.Sprintf("it continues into %s (to %s)", *d.ContinuesInto, clock(chain[k+1].To, loc)))
		}
		if k == len(chain)-1 && after != nil {
			parts = append(parts, "it runs up to midnight; "+after.Why+maybe(after.Ended, "it may have gone on"))
		}
		msg += "; " + strings.Join(parts, "; ")
		if len(chain) > 1 {
			msg += fmt.Sprintf(": one outage of %s from %s to %s, %s",
				span(whole), dateClock(first.From, loc), dateClock(last.To, loc), verdict)
		} else {
			msg += ": " + verdict
		}
		d.Message = msg
	}
}

func maybe(ended bool, what string) string {
	if ended {
		return ""
	}
	return ", so " + what
}

func dateClock(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}
