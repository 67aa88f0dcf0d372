package repair

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/reconcile"
)

// tsLayout is how an instant is written in repair.csv and repair.sql: RFC
// 3339, UTC, milliseconds, as Elido writes it.
const tsLayout = "2006-01-02T15:04:05.000Z07:00"

// WriteCSV writes repair.csv: one row per click to put back (day,
// hour_start, ts, link_id, country_code), for the hours that are repaired.
// A text cell a spreadsheet would read as a formula starts with a quote.
func WriteCSV(w io.Writer, plans []DayPlan) error {
	return writeClicks(w, plans, func(h HourPlan) []Click {
		if !h.Repairable() {
			return nil
		}
		return h.Add
	})
}

// WriteSurplusCSV writes surplus.csv: the rows the store has and Elido
// does not, in the same columns. They are listed, never deleted.
func WriteSurplusCSV(w io.Writer, plans []DayPlan) error {
	return writeClicks(w, plans, func(h HourPlan) []Click { return h.Surplus })
}

func writeClicks(w io.Writer, plans []DayPlan, pick func(HourPlan) []Click) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"day", "hour_start", "ts", "link_id", "country_code"})
	for _, p := range plans {
		for _, h := range p.Hours {
			for _, c := range pick(h) {
				cw.Write([]string{p.Day.String(), h.From.Format(tsLayout), c.TS.UTC().Format(tsLayout), csvSafe(c.LinkID), csvSafe(c.CountryCode)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteSQL writes repair.sql: the INSERTs that put the planned clicks
// back into the reference events schema, in one transaction, every value a
// quoted literal (a quote in a link id is doubled, never closing the
// literal). For PostgreSQL (postgres true) it pins
// standard_conforming_strings, so a backslash is never an escape. A value
// that no SQL literal can hold (a NUL byte, invalid UTF-8) is an error.
func WriteSQL(w io.Writer, plans []DayPlan, postgres bool) error {
	var b strings.Builder
	b.WriteString("-- clickrecon repair: the clicks Elido has and this store lost, for the\n")
	b.WriteString("-- reference events schema (table clicks). Review, then run it, or use\n")
	b.WriteString("-- clickrecon repair --apply, which re-checks each day before writing.\n")
	b.WriteString("BEGIN;\n")
	if postgres {
		b.WriteString("SET LOCAL standard_conforming_strings = on;\n")
	}
	for _, p := range plans {
		for _, h := range p.Hours {
			if !h.Repairable() {
				continue
			}
			fmt.Fprintf(&b, "-- %s, hour from %s: %d to add\n", p.Day, h.From.Format(tsLayout), len(h.Add))
			for _, c := range h.Add {
				link, err := sqlString(c.LinkID)
				if err != nil {
					return fmt.Errorf("link id of the click at %s: %w", c.TS.Format(tsLayout), err)
				}
				country := "NULL"
				if c.CountryCode != "" {
					if country, err = sqlString(c.CountryCode); err != nil {
						return fmt.Errorf("country of the click at %s: %w", c.TS.Format(tsLayout), err)
					}
				}
				fmt.Fprintf(&b, "INSERT INTO clicks (ts, link_id, country_code) VALUES ('%s', %s, %s);\n", c.TS.UTC().Format(tsLayout), link, country)
			}
		}
	}
	b.WriteString("COMMIT;\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// sqlString quotes s as a standard SQL string literal.
func sqlString(s string) (string, error) {
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return "", fmt.Errorf("%q cannot be written as an SQL literal", s)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
}

// Describe says in one line per day what a plan does, or why it does not,
// in loc (the days' zone), as the summary and Slack show it.
func Describe(p DayPlan, loc *time.Location) []string {
	if p.Skipped != "" {
		return nil
	}
	var out []string
	for _, h := range p.Hours {
		span := fmt.Sprintf("%s, %s", p.Day, reconcile.HourSpan(h.From, h.To, loc))
		switch {
		case h.Refused != "":
			out = append(out, fmt.Sprintf("not repaired: %s: %s", span, h.Refused))
		case len(h.Add) > 0 && len(h.Surplus) > 0:
			out = append(out, fmt.Sprintf("%d clicks to restore on %s; %d surplus rows listed, not deleted", len(h.Add), span, len(h.Surplus)))
		case len(h.Add) > 0:
			out = append(out, fmt.Sprintf("%d clicks to restore on %s", len(h.Add), span))
		case len(h.Surplus) > 0:
			out = append(out, fmt.Sprintf("%d surplus rows on %s: listed, not deleted", len(h.Surplus), span))
		}
	}
	return out
}

// DescribeResult says how applying a day ended: "restored 60 clicks on
// 2026-10-24, 02:00 CEST–03:00 CEST; the day now matches".
func DescribeResult(p DayPlan, r DayResult, loc *time.Location) string {
	var spans []string
	for _, h := range p.Hours {
		if h.Repairable() {
			spans = append(spans, reconcile.HourSpan(h.From, h.To, loc))
		}
	}
	where := fmt.Sprintf("%s, %s", p.Day, strings.Join(spans, ", "))
	switch {
	case r.Err != nil:
		return fmt.Sprintf("did not restore %d clicks on %s: %v", r.Planned, where, r.Err)
	case !r.Recounted:
		return fmt.Sprintf("restored %d clicks on %s; the day could not be re-counted", r.Inserted, where)
	case r.Matches():
		return fmt.Sprintf("restored %d clicks on %s; the day now matches", r.Inserted, where)
	}
	return fmt.Sprintf("restored %d clicks on %s; the day still differs: the store has %d, Elido %d", r.Inserted, where, r.After, r.API)
}
