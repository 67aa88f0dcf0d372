package job

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/report"
)

// printSummary is the summary stage of a run and of a merge: it writes
// what a person (format text) or a script (json: the report itself, plus
// where it was written) reads on stdout.
func printSummary(w io.Writer, format string, rep report.Report, dir string) error {
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
	fmt.Fprintf(w, "clickrecon: workspace %s, %s..%s (%s): %s\n\n", rep.WorkspaceID, rep.Window.From, rep.Window.To, rep.Window.TZ, report.StatusText(rep.Status))
	// Past a screenful, only the days that need a look are listed.
	days, folded := report.FoldMatches(rep.Days, maxTextDays)
	if len(days) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "date\thours\telido\tlocal\tdelta\t status\t severity\t")
		for _, r := range dayRuns(rep.Days, days) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t %s\t %s\t\n", r.dates(), words.Hours(r.hours), optCount(r.api), optCount(r.local), optDelta(r.delta), r.first.Status, report.DaySeverity(r.first))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if folded > 0 {
		fmt.Fprintf(w, "and %s within tolerance (all %d days: days.csv)\n", words.Plural(folded, "more day matches", "more days match"), len(rep.Days))
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
		over := words.Plural(verified, "verified day", "verified days")
		if c.Provisional > 0 {
			over += " and " + words.Plural(c.Provisional, "provisional day", "provisional days")
		}
		fmt.Fprintf(w, "\ntotals over %s: elido %d (summary for the window %s), local %d, delta %+d\n",
			over, rep.Totals.API, summary, rep.Totals.Local, rep.Totals.Delta)
	}
	if len(rep.Links) > 0 {
		fmt.Fprintf(w, "\nlinks that differ (%d; the largest first):\n", len(rep.Links))
		for i, l := range report.WorstLinks(rep.Links) {
			if i == maxTextLinks {
				fmt.Fprintf(w, "  and %d more: see links.csv\n", len(rep.Links)-maxTextLinks)
				break
			}
			fmt.Fprintf(w, "  %s  %-24s elido %d, local %d, delta %+d (%s)\n", l.Date, l.LinkID, l.API, l.Local, l.Delta, l.Status)
		}
	}
	if rep.Drilldown.Mode != report.DrillOff && rep.Drilldown.Mode != report.DrillNone {
		fmt.Fprintf(w, "drill-down: %s, %d requests, %s links unchecked\n", rep.Drilldown.Mode, rep.Drilldown.Requests, rep.Drilldown.Unchecked())
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
	_, err := fmt.Fprintf(w, "report: %s\n", htmlPath(dir))
	return err
}

// htmlPath is the report.html to open in the report folder or object
// prefix dir.
func htmlPath(dir string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/report.html"
	}
	return filepath.Join(dir, "report.html")
}

// dayRun is one row of the summary's table: a day, or consecutive days
// with the same status, severity and reason that are not gaps (a year
// that could not be read is one row, not 365). Its counts are the days'
// sums, "-" when a day's is not known.
type dayRun struct {
	first, last       report.Day
	days              int
	hours             float64
	api, local, delta *int64
}

func (r dayRun) dates() string {
	if r.days == 1 {
		return r.first.Date
	}
	return fmt.Sprintf("%s..%s (%d days)", r.first.Date, r.last.Date, r.days)
}

// dayRuns groups shown, the days of all listed in the table, into rows:
// days are grouped only when they follow each other in all.
func dayRuns(all, shown []report.Day) []dayRun {
	index := make(map[string]int, len(all))
	for i, d := range all {
		index[d.Date] = i
	}
	var runs []dayRun
	for _, d := range shown {
		if n := len(runs); n > 0 {
			r := &runs[n-1]
			if index[d.Date] == index[r.last.Date]+1 && !d.IsGap() && !r.last.IsGap() &&
				d.Status == r.last.Status && d.Severity == r.last.Severity && d.Reason == r.last.Reason {
				r.last, r.days, r.hours = d, r.days+1, r.hours+d.Hours
				r.api, r.local, r.delta = addNum(r.api, d.API), addNum(r.local, d.Local), addNum(r.delta, d.Delta)
				continue
			}
		}
		runs = append(runs, dayRun{first: d, last: d, days: 1, hours: d.Hours, api: d.API, local: d.Local, delta: d.Delta})
	}
	return runs
}

// addNum adds a day's count to a run's sum; a count not known makes the
// sum not known.
func addNum(sum, n *int64) *int64 {
	if sum == nil || n == nil {
		return nil
	}
	v := *sum + *n
	return &v
}

// maxTextDays is a screenful of day rows: a longer window lists only the
// days that are not a match.
const maxTextDays = 20

// maxTextLinks bounds the link rows printed on stdout.
const maxTextLinks = 10

// optCount writes a count as the text summary shows it: its digits, or -
// when it is not known.
func optCount(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// optDelta writes a delta as the text summary shows it: with its sign, or
// - when it is not known.
func optDelta(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprintf("%+d", *n)
}
