package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Files written by Write, in the order they are rendered.
var Files = []string{"report.json", "report.csv", "report.md", "report.html"}

// Write writes every report file as dir/<run key>/ and returns where that
// folder is. dir is a folder or an object store URL (see Open). A local
// folder is replaced as a whole, never left a mix of two runs; in an
// object store report.json is written last (see Dest.Write).
func Write(dir string, r Report) (string, error) {
	ctx := context.Background()
	d, err := Open(ctx, dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return d.WriteReport(ctx, r)
}

// Render renders every report file of r, in the order of Files.
func Render(r Report) ([]File, error) {
	renderers := map[string]func(Report) ([]byte, error){
		"report.json": JSON,
		"report.csv":  CSV,
		"report.md":   Markdown,
		"report.html": HTML,
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

// JSON renders report.json, indented, with a final newline.
func JSON(r Report) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CSV renders report.csv: one row per day (link_id empty) and one per
// link row, with the header date,link_id,api,local,delta,status. A count
// that is not known is an empty cell.
func CSV(r Report) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rows := [][]string{{"date", "link_id", "api", "local", "delta", "status"}}
	for _, d := range r.Days {
		rows = append(rows, []string{csvSafe(d.Date), "", optInt(d.API), optInt(d.Local), optInt(d.Delta), csvSafe(d.Status)})
	}
	for _, l := range r.Links {
		rows = append(rows, []string{csvSafe(l.Date), csvSafe(l.LinkID), itoa(l.API), itoa(l.Local), itoa(l.Delta), csvSafe(l.Status)})
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
