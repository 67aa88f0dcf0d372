package repair

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/words"
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
// back into the reference events schema, in one transaction, in the SQL of
// the store's dialect d, every value a literal no value can close. For
// PostgreSQL it pins standard_conforming_strings, so a backslash is never
// an escape, quotes each value (a quote in a link id is doubled), and
// gives the guarantee repair --apply gives: it locks table clicks against
// other writers (waiting at most 10s for them), then checks that every
// hour the plan compared still holds the count it did, and inserts only
// then; otherwise the transaction fails and nothing is written. For MySQL
// and MariaDB see writeMySQL. A value that no SQL literal can hold (a NUL
// byte on PostgreSQL or SQLite, invalid UTF-8) is an error.
func WriteSQL(w io.Writer, plans []DayPlan, d dsn.Dialect) error {
	if d == dsn.MySQL {
		return writeMySQL(w, plans)
	}
	var b strings.Builder
	b.WriteString("-- clickrecon repair: the clicks Elido has and this store lost, for the\n")
	b.WriteString("-- reference events schema (table clicks). Review, then run it, or use\n")
	b.WriteString("-- clickrecon repair --apply, which re-checks each day before writing.\n")
	b.WriteString("BEGIN;\n")
	ts := "'%s'"
	if d == dsn.Postgres {
		b.WriteString("SET LOCAL standard_conforming_strings = on;\n")
		if wall := wallZone(plans); wall != nil {
			// A timestamp ts holds wall-clock times in this zone: the
			// re-counts and inserts convert instants in it, as repair
			// --apply's session does.
			fmt.Fprintf(&b, "SET LOCAL TimeZone = '%s';\n", wall)
			ts = "'%s'::timestamptz"
		}
		writeSQLChecks(&b, plans)
	}
	err := eachAdd(plans, sqlString, func(p DayPlan, h HourPlan) {
		fmt.Fprintf(&b, "-- %s, hour from %s: %d to add\n", p.Day, h.From.Format(tsLayout), len(h.Add))
	}, func(c Click, link, country string) {
		fmt.Fprintf(&b, "INSERT INTO clicks (ts, link_id, country_code) VALUES ("+ts+", %s, %s);\n", c.TS.UTC().Format(tsLayout), link, country)
	})
	if err != nil {
		return err
	}
	b.WriteString("COMMIT;\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// eachAdd calls hour for each repairable hour of plans, then insert for
// each of its clicks to add, with the click's link id and country written
// as literals by quote (NULL for no country). It stops at the first value
// quote refuses.
func eachAdd(plans []DayPlan, quote func(string) (string, error), hour func(DayPlan, HourPlan), insert func(c Click, link, country string)) error {
	for _, p := range plans {
		for _, h := range p.Hours {
			if !h.Repairable() {
				continue
			}
			hour(p, h)
			for _, c := range h.Add {
				link, err := quote(c.LinkID)
				if err != nil {
					return fmt.Errorf("link id of the click at %s: %w", c.TS.Format(tsLayout), err)
				}
				country := "NULL"
				if c.CountryCode != "" {
					if country, err = quote(c.CountryCode); err != nil {
						return fmt.Errorf("country of the click at %s: %w", c.TS.Format(tsLayout), err)
					}
				}
				insert(c, link, country)
			}
		}
	}
	return nil
}

// wallZone is the zone of the plans' wall-clock ts (DayPlan.Wall), nil
// for instants.
func wallZone(plans []DayPlan) *time.Location {
	for _, p := range plans {
		if p.Wall != nil {
			return p.Wall
		}
	}
	return nil
}

// checkedHours are the hours repair.sql re-counts before it writes: every
// hour the plan compared and did not refuse, on the days that add clicks.
func checkedHours(plans []DayPlan) []HourPlan {
	var hours []HourPlan
	for _, p := range plans {
		if len(p.Add()) == 0 {
			continue
		}
		for _, h := range p.Hours {
			if h.Refused == "" {
				hours = append(hours, h)
			}
		}
	}
	return hours
}

// writeSQLChecks writes PostgreSQL's lock and re-count: a receiver's
// insert under way is waited for and counted, a later one waits for the
// COMMIT, and an hour whose count moved since the plan fails the
// transaction (psql then rolls it back at COMMIT).
func writeSQLChecks(b *strings.Builder, plans []DayPlan) {
	var checks []string
	for _, h := range checkedHours(plans) {
		from, to := h.From.UTC().Format(tsLayout), h.To.UTC().Format(tsLayout)
		checks = append(checks, fmt.Sprintf("  IF (SELECT count(*) FROM clicks WHERE ts >= '%s'::timestamptz AND ts < '%s'::timestamptz) <> %d THEN\n"+
			"    RAISE EXCEPTION 'the hour from %s no longer holds the %d clicks the repair was planned on: nothing is written; plan the repair again';\n"+
			"  END IF;\n", from, to, h.Store, from, h.Store))
	}
	if len(checks) == 0 {
		return
	}
	b.WriteString("-- Other writers wait until COMMIT (this waits at most 10s for theirs), and\n")
	b.WriteString("-- nothing is written unless each hour still holds what the plan saw.\n")
	b.WriteString("SET LOCAL lock_timeout = '10s';\n")
	b.WriteString("LOCK TABLE clicks IN SHARE MODE;\n")
	b.WriteString("DO $check$\nBEGIN\n")
	for _, c := range checks {
		b.WriteString(c)
	}
	b.WriteString("END\n$check$;\n")
}

// sqlString quotes s as a standard SQL string literal.
func sqlString(s string) (string, error) {
	switch {
	case strings.ContainsRune(s, 0):
		return "", fmt.Errorf("%q holds a NUL byte, which no SQL text can hold", s)
	case !utf8.ValidString(s):
		return "", fmt.Errorf("%q is not valid UTF-8, which no SQL text can hold", s)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
}

// Line is one line of Describe: what the repair of an hour does, or why
// it does not.
type Line struct {
	Text string
	// Refused says the hour is not repaired (its HourPlan.Refused); Text
	// says why.
	Refused bool
}

func (l Line) String() string { return l.Text }

// Describe says in one line per hour what a plan does, or why it does
// not, in loc (the days' zone), as the summary and Slack show it.
func Describe(p DayPlan, loc *time.Location) []Line {
	if p.Skipped != "" {
		return nil
	}
	var out []Line
	for _, h := range p.Hours {
		span := fmt.Sprintf("%s, %s", p.Day, reconcile.HourSpan(h.From, h.To, loc))
		switch {
		case h.Refused != "":
			out = append(out, Line{Text: fmt.Sprintf("not repaired: %s: %s", span, h.Refused), Refused: true})
		case len(h.Add) > 0 && len(h.Surplus) > 0:
			out = append(out, Line{Text: fmt.Sprintf("%s to restore on %s; %s listed, not deleted", words.Plural(len(h.Add), "click", "clicks"), span, words.Plural(len(h.Surplus), "surplus row", "surplus rows"))})
		case len(h.Add) > 0:
			out = append(out, Line{Text: fmt.Sprintf("%s to restore on %s", words.Plural(len(h.Add), "click", "clicks"), span)})
		case len(h.Surplus) > 0:
			out = append(out, Line{Text: fmt.Sprintf("%s on %s: listed, not deleted", words.Plural(len(h.Surplus), "surplus row", "surplus rows"), span)})
		}
	}
	return out
}

// DescribeResult says how applying a day ended: "restored 60 clicks on
// 2026-10-24, 02:00 CEST–03:00 CEST; the day now matches", followed by
// "; not repaired: HOUR: why" for each hour the store would not take.
func DescribeResult(p DayPlan, r DayResult, loc *time.Location) string {
	rejected := map[time.Time]bool{}
	var notes []string
	for _, h := range r.Rejected {
		rejected[h.From] = true
		notes = append(notes, fmt.Sprintf("; not repaired: %s, %s: nothing of it was written (%d to add): %v", p.Day, reconcile.HourSpan(h.From, h.To, loc), h.Clicks, h.Err))
	}
	var spans []string
	for _, h := range p.Hours {
		if h.Repairable() && !rejected[h.From] {
			spans = append(spans, reconcile.HourSpan(h.From, h.To, loc))
		}
	}
	where := fmt.Sprintf("%s, %s", p.Day, strings.Join(spans, ", "))
	if len(spans) == 0 {
		where = p.Day.String()
	}
	if r.Err != nil {
		return fmt.Sprintf("did not restore %s on %s: %v", words.Plural(r.Planned, "click", "clicks"), where, r.Err)
	}
	line := fmt.Sprintf("restored %s on %s", words.Plural(r.Inserted, "click", "clicks"), where)
	if r.Sent != r.Inserted {
		line += ": " + KeptNote(r.Sent, r.Inserted)
	}
	switch {
	case !r.Recounted:
		line += "; the day could not be re-counted"
	case r.Matches():
		line += "; the day now matches"
	default:
		line += fmt.Sprintf("; the day still differs: the store has %d, Elido %d", r.After, r.API)
	}
	return line + strings.Join(notes, "")
}

// KeptNote says plainly that the store kept another number of rows than
// were sent to it: "6 were sent and the store kept 4; 2 were not kept (a
// trigger, rule or INSERT IGNORE of the store's dropped or moved them)".
func KeptNote(sent, kept int) string {
	verb := "were"
	if sent == 1 {
		verb = "was"
	}
	line := fmt.Sprintf("%d %s sent and the store kept %d", sent, verb, kept)
	switch {
	case kept < sent:
		verb = "were"
		if sent-kept == 1 {
			verb = "was"
		}
		line += fmt.Sprintf("; %d %s not kept (a trigger, rule or INSERT IGNORE of the store's dropped or moved them)", sent-kept, verb)
	case kept > sent:
		line += fmt.Sprintf("; %d more than were sent (a trigger or rule of the store's added rows to the same hours)", kept-sent)
	}
	return line
}
