package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Files written by storage.Write, in the order they are rendered: the JSON, one
// CSV per table (each sums on its own: a spreadsheet can total any column),
// the Markdown and the page.
var Files = []string{"report.json", "days.csv", "links.csv", "countries.csv", "hours.csv", "diagnoses.csv", "report.md", "report.html"}

// File is one rendered report file.
type File struct {
	Name string // a plain file name: report.json
	Data []byte
}

// Render renders every report file of r, in the order of Files.
func Render(r Report) ([]File, error) {
	renderers := map[string]func(Report) ([]byte, error){
		"report.json":   JSON,
		"days.csv":      daysCSV,
		"links.csv":     linksCSV,
		"countries.csv": countriesCSV,
		"hours.csv":     hoursCSV,
		"diagnoses.csv": diagnosesCSV,
		"report.md":     Markdown,
		"report.html":   HTML,
	}
	var files []File
	for _, name := range Files {
		b, err := renderers[name](r)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		files = append(files, File{Name: name, Data: b})
	}
	return files, nil
}

// JSON renders report.json, indented, with a final newline. Its "tool" is
// always Tool: the mark storage.Dest.Prune looks for before it removes a folder.
func JSON(r Report) ([]byte, error) {
	r.Tool = Tool
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// daysCSV renders days.csv: one row per day of the window, with the
// header date,hours,api,local,delta,status,severity,reason. A count that is
// not known is an empty cell, and so is the severity of a day that could
// not be verified; the delta column sums to the report's totals.
func daysCSV(r Report) ([]byte, error) {
	rows := [][]string{{"date", "hours", "api", "local", "delta", "status", "severity", "reason"}}
	for _, d := range r.Days {
		rows = append(rows, []string{csvSafe(d.Date), words.Hours(d.Hours), optInt(d.API), optInt(d.Local), optInt(d.Delta),
			csvSafe(string(d.Status)), csvSafe(csvSeverity(d)), csvSafe(d.Reason)})
	}
	return writeCSV(rows)
}

// linksCSV renders links.csv: one row per link of a day that differs, with
// the header date,link_id,api,local,delta,status,severity (the day's
// severity). Each day's deltas sum to that day's delta when its links were
// all read.
func linksCSV(r Report) ([]byte, error) {
	sev := daySeverities(r.Days)
	rows := [][]string{{"date", "link_id", "api", "local", "delta", "status", "severity"}}
	for _, l := range r.Links {
		rows = append(rows, []string{csvSafe(l.Date), csvSafe(l.LinkID), itoa(l.API), itoa(l.Local), itoa(l.Delta), csvSafe(string(l.Status)), csvSafe(sev[l.Date])})
	}
	return writeCSV(rows)
}

// countriesCSV renders countries.csv: one row per country of a day that
// differs, with the header date,country_code,api,local,delta,severity. An
// unknown country is an empty cell, and so are local and delta when the
// store has no country column.
func countriesCSV(r Report) ([]byte, error) {
	sev := daySeverities(r.Days)
	rows := [][]string{{"date", "country_code", "api", "local", "delta", "severity"}}
	for _, c := range r.Countries {
		rows = append(rows, []string{csvSafe(c.Date), csvSafe(c.CountryCode), itoa(c.API), optInt(c.Local), optInt(c.Delta), csvSafe(sev[c.Date])})
	}
	return writeCSV(rows)
}

// hoursCSV renders hours.csv: one row per hour whose counts differ on a
// day that was drilled into, with the header date,start,api,local,delta,
// severity. start is the hour's first instant with its offset, so the two
// 02:00 hours of an autumn DST day are two rows that can be told apart.
func hoursCSV(r Report) ([]byte, error) {
	rows := [][]string{{"date", "start", "api", "local", "delta", "severity"}}
	for _, d := range r.Days {
		for _, h := range d.HoursWithGap {
			rows = append(rows, []string{csvSafe(d.Date), csvSafe(h.Start), itoa(h.API), itoa(h.Local), itoa(h.Delta), csvSafe(csvSeverity(d))})
		}
	}
	return writeCSV(rows)
}

// SlackCSV is the table attached to a Slack alert: links.csv when the
// drill-down found links that differ, else days.csv.
func SlackCSV(r Report) (name string, data []byte, err error) {
	if len(r.Links) > 0 {
		b, err := linksCSV(r)
		return "links.csv", b, err
	}
	b, err := daysCSV(r)
	return "days.csv", b, err
}

func writeCSV(rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	if err := csv.NewWriter(&buf).WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// csvSeverity is a day's severity in a CSV: empty for a day that could not
// be verified, whose severity means nothing.
func csvSeverity(d Day) string {
	if d.Status == reconcile.Unverifiable {
		return ""
	}
	return string(d.Severity)
}

// daySeverities maps each date to its CSV severity, for the rows of a
// breakdown table.
func daySeverities(days []Day) map[string]string {
	m := make(map[string]string, len(days))
	for _, d := range days {
		m[d.Date] = csvSeverity(d)
	}
	return m
}

// csvSafe keeps a text cell (a link id, a date or status read from a
// report) from being read as a formula by a spreadsheet: a cell that
// starts with = + - @ TAB CR (OWASP's list) or LF gets a leading '.
// Numeric cells are written as they are: -412 is a number, not a formula.
func csvSafe(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r\n", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func optInt(n *int64) string {
	if n == nil {
		return ""
	}
	return itoa(*n)
}
