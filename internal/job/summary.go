package job

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// PrintSummary writes what a person (format text) or a script (json: the
// report itself, plus where it was written) reads on stdout.
func PrintSummary(w io.Writer, format string, rep report.Report, dir string) error {
	if format == "json" {
		b, err := json.Marshal(struct {
			report.Report
			ReportDir string `json:"report_dir"`
		}{rep, dir})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	fmt.Fprintf(w, "clickrecon: workspace %s, %s..%s (%s): %s\n\n", rep.WorkspaceID, rep.Window.From, rep.Window.To, rep.Window.TZ, rep.Status)
	// Past a screenful, only the days that need a look are listed.
	days, folded := rep.Days, 0
	if len(days) > maxTextDays {
		days = nil
		for _, d := range rep.Days {
			if d.Status == string(reconcile.Match) {
				folded++
				continue
			}
			days = append(days, d)
		}
	}
	if len(days) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "date\thours\telido\tlocal\tdelta\t status\t severity\t")
		for _, d := range days {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t %s\t %s\t\n", d.Date, report.Hours(d.Hours), optNum(d.API, false), optNum(d.Local, false), optNum(d.Delta, true), d.Status, report.DaySeverity(d))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if folded > 0 {
		fmt.Fprintf(w, "and %s within tolerance (all %d days: days.csv)\n", report.Plural(folded, "more day matches", "more days match"), len(rep.Days))
	}
	c := rep.Coverage
	verified := c.Match + c.Missing + c.Surplus
	if rep.Totals.Unknown || verified+c.Provisional == 0 {
		fmt.Fprintf(w, "\ntotals: elido -, local -, delta - (no day could be read)\n")
	} else {
		summary := "not read"
		if rep.Totals.APISummary != nil {
			summary = fmt.Sprint(*rep.Totals.APISummary)
		}
		over := report.Plural(verified, "verified day", "verified days")
		if c.Provisional > 0 {
			over += " and " + report.Plural(c.Provisional, "provisional day", "provisional days")
		}
		fmt.Fprintf(w, "\ntotals over %s: elido %d (summary for the window %s), local %d, delta %+d\n",
			over, rep.Totals.API, summary, rep.Totals.Local, rep.Totals.Delta)
	}
	if len(rep.Links) > 0 {
		fmt.Fprintf(w, "\nlinks that differ (%d; the largest first):\n", len(rep.Links))
		for i, l := range rep.Links {
			if i == maxTextLinks {
				fmt.Fprintf(w, "  and %d more: see links.csv\n", len(rep.Links)-maxTextLinks)
				break
			}
			fmt.Fprintf(w, "  %s  %-24s elido %d, local %d, delta %+d (%s)\n", l.Date, l.LinkID, l.API, l.Local, l.Delta, l.Status)
		}
	}
	if rep.Drilldown.Mode != report.DrillOff && rep.Drilldown.Mode != report.DrillNone {
		fmt.Fprintf(w, "drill-down: %s, %d requests, %d links unchecked\n", rep.Drilldown.Mode, rep.Drilldown.Requests, rep.Drilldown.UncheckedLinks)
	}
	fmt.Fprintln(w)
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "finding (%s): %s\n", f.Kind, f.Message)
	}
	for _, run := range report.ReasonRuns(rep.Days) {
		if run.Days == 1 {
			fmt.Fprintf(w, "%s unverifiable: %s\n", run.From, run.Reason)
		} else {
			fmt.Fprintf(w, "%s..%s unverifiable (%d days): %s\n", run.From, run.To, run.Days, run.Reason)
		}
	}
	_, err := fmt.Fprintf(w, "report: %s\n", dir)
	return err
}

// maxTextDays is a screenful of day rows: a longer window lists only the
// days that are not a match.
const maxTextDays = 20

// maxTextLinks bounds the link rows printed on stdout.
const maxTextLinks = 10

func optNum(n *int64, signed bool) string {
	switch {
	case n == nil:
		return "-"
	case signed:
		return fmt.Sprintf("%+d", *n)
	}
	return fmt.Sprint(*n)
}
