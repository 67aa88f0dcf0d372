package trend

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Kinds are the diagnosis kinds, in the order the CSV's columns give
// their clicks.
var Kinds = []string{reconcile.DiagOutage, reconcile.DiagSteadyLeak, reconcile.DiagBusy, reconcile.DiagDuplicates, reconcile.DiagUnexplained}

// WriteJSON writes the series as one JSON document: {"series": [...]}.
func WriteJSON(w io.Writer, series []Series) error {
	if series == nil {
		series = []Series{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Series []Series `json:"series"`
	}{series})
}

// csvHeader is the header of every CSV the trend writes: one row per
// day, week or month of a series.
var csvHeader = append([]string{"workspace_id", "store_id", "tz", "period", "from", "to", "days", "checked", "match", "gaps",
	"provisional", "unverifiable", "unchecked", "api", "local", "missing", "surplus", "loss_rate"}, append(lossColumns(), "restored")...)

func lossColumns() []string {
	var cs []string
	for _, k := range Kinds {
		cs = append(cs, "loss_"+k)
	}
	return cs
}

// WriteCSV writes the series' periods of one size (by: day, week or
// month) as CSV, one row each, under csvHeader. A day is a period of one
// day: its counts are its verdict's.
func WriteCSV(w io.Writer, series []Series, by string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, s := range series {
		ps, err := s.Periods(by)
		if err != nil {
			return err
		}
		for _, p := range ps {
			row := []string{s.WorkspaceID, s.StoreID, s.TZ, p.Name, p.From, p.To}
			for _, n := range []int{p.Days, p.Checked, p.Match, p.Gaps, p.Provisional, p.Unverifiable, p.Unchecked} {
				row = append(row, strconv.Itoa(n))
			}
			for _, n := range []int64{p.API, p.Local, p.Missing, p.Surplus} {
				row = append(row, strconv.FormatInt(n, 10))
			}
			row = append(row, strconv.FormatFloat(p.LossRate(), 'f', 6, 64))
			for _, k := range Kinds {
				row = append(row, strconv.FormatInt(p.Loss[k], 10))
			}
			row = append(row, strconv.FormatInt(p.Restored, 10))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// Periods returns s's periods of one size: day, week or month.
func (s Series) Periods(by string) ([]Period, error) {
	switch by {
	case "day":
		ps := make([]Period, 0, len(s.Days))
		for _, d := range s.Days {
			p := Period{Name: d.Date, From: d.Date}
			p.add(d)
			ps = append(ps, p)
		}
		return ps, nil
	case "week":
		return s.Weeks, nil
	case "month":
		return s.Months, nil
	}
	return nil, fmt.Errorf("--by must be day, week or month, got %q", by)
}

// WriteText writes the series for a person on a terminal: for each, its
// totals, its weeks (or months, by), the causes ranked by the clicks they
// lost, and the gap days.
func WriteText(w io.Writer, series []Series, by string) error {
	if len(series) == 0 {
		_, err := fmt.Fprintln(w, "No run's report holds a day of this range.")
		return err
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeSeries(w, s, by); err != nil {
			return err
		}
	}
	return nil
}

// writeSeries writes one series of WriteText: its totals and times, its
// periods, its causes and its gap days.
func writeSeries(w io.Writer, s Series, by string) error {
	writeTotals(w, s)
	if err := writePeriods(w, s, by); err != nil {
		return err
	}
	if len(s.Causes) > 0 {
		fmt.Fprintln(w, "\nCauses, by the clicks they explain:")
		for _, c := range s.Causes {
			fmt.Fprintf(w, "  %-15s %s clicks on %s\n", c.Kind, words.Num(c.Clicks), words.Plural(c.Days, "day", "days"))
		}
	}
	if gaps := gapLines(s.Days); len(gaps) > 0 {
		fmt.Fprintln(w, "\nDays with a gap, by their latest verdict:")
		fmt.Fprintln(w, strings.Join(gaps, "\n"))
	}
	return nil
}

// writeTotals writes the lines that head a series: its range and its
// total counts, how it got worse, and how long its gaps took to be found,
// alerted, healed and repaired.
func writeTotals(w io.Writer, s Series) {
	t := s.Total
	fmt.Fprintf(w, "Workspace %s, store %s, %s: %s to %s (%s, %s read)\n", s.WorkspaceID, s.StoreID, s.TZ, s.From, s.To,
		words.Plural(t.Days, "day", "days"), words.Plural(s.Runs, "report", "reports"))
	fmt.Fprintf(w, "  Elido %s, store %s: %s missing (%s), %s surplus; %s with a gap, %s unverifiable, %s provisional, %s never checked\n",
		words.Num(t.API), words.Num(t.Local), words.Num(t.Missing), pct(t.LossRate()), words.Num(t.Surplus),
		words.Plural(t.Gaps, "day", "days"), words.Plural(t.Unverifiable, "day", "days"),
		words.Plural(t.Provisional, "day", "days"), words.Plural(t.Unchecked, "day", "days"))
	for _, sig := range s.Worse {
		fmt.Fprintf(w, "  GETTING WORSE: %s\n", sig.Says)
	}
	writeTimes(w, "found", s.ToFind)
	writeTimes(w, "alerted", s.ToAlert)
	writeTimes(w, "healed", s.ToHeal)
	if s.ToRepair.Days > 0 {
		noun := "clicks"
		if t.Restored == 1 {
			noun = "click"
		}
		fmt.Fprintf(w, "  %s %s restored by repair on %s, %s after their day ended (median), %s at worst (%s)\n",
			words.Num(t.Restored), noun, words.Plural(s.ToRepair.Days, "day", "days"),
			hours(s.ToRepair.MedianHours), hours(s.ToRepair.WorstHours), s.ToRepair.WorstDate)
	}
}

// writeTimes writes how long after their day ended the gaps were what
// (found, alerted, healed), when any was.
func writeTimes(w io.Writer, what string, t Times) {
	if t.Days > 0 {
		fmt.Fprintf(w, "  gaps %s %s after their day ended (median), %s at worst (%s), on %s\n",
			what, hours(t.MedianHours), hours(t.WorstHours), t.WorstDate, words.Plural(t.Days, "day", "days"))
	}
}

// writePeriods writes the series' periods of one size (by; weeks for
// day) as a table.
func writePeriods(w io.Writer, s Series, by string) error {
	if by == "day" {
		by = "week"
	}
	ps, err := s.Periods(by)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tfrom\tto\tElido\tstore\tmissing\tloss\tsurplus\tgap days\tunverifiable\tunchecked\trestored\t\n", by)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n", p.Name, p.From, p.To, words.Num(p.API), words.Num(p.Local),
			words.Num(p.Missing), pct(p.LossRate()), words.Num(p.Surplus), p.Gaps, p.Unverifiable, p.Unchecked, words.Num(p.Restored))
	}
	return tw.Flush()
}

// gapLines are the lines of days whose latest verdict is a gap: its
// clicks missing or surplus, the run that said so and the kinds of its
// diagnoses.
func gapLines(days []Day) []string {
	var gaps []string
	for _, d := range days {
		if d.Status == reconcile.Missing || d.Status == reconcile.Surplus {
			n := d.Missing
			if d.Status == reconcile.Surplus {
				n = d.Surplus
			}
			kinds := slices.Sorted(func(yield func(string) bool) {
				for k := range d.Loss {
					if !yield(k) {
						return
					}
				}
			})
			line := fmt.Sprintf("  %s %s %s clicks (run %s)", d.Date, d.Status, words.Num(n), d.RunKey)
			if len(kinds) > 0 {
				line += ": " + strings.Join(kinds, ", ")
			}
			gaps = append(gaps, line)
		}
	}
	return gaps
}

// hours is a duration in hours as a person reads it: 26.5 h, or 3.2 days
// past two days.
func hours(h float64) string {
	if h >= 48 {
		return strconv.FormatFloat(h/24, 'f', 1, 64) + " days"
	}
	return strconv.FormatFloat(h, 'f', 1, 64) + " h"
}

// pct is a share as a percentage with two decimals.
func pct(f float64) string {
	return strconv.FormatFloat(100*f, 'f', 2, 64) + "%"
}
