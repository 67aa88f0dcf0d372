package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files written by Write, in the order they are written.
var Files = []string{"report.json", "report.csv", "report.md", "report.html"}

// Write writes every report file into dir/<run key>/ and returns that
// folder. Each file is written to a temporary name and renamed, so a
// reader never sees half a report, and a rerun replaces the files whole.
func Write(dir string, r Report) (string, error) {
	out := filepath.Join(dir, r.RunKey)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("create report folder: %w", err)
	}
	renderers := map[string]func(Report) ([]byte, error){
		"report.json": JSON,
		"report.csv":  CSV,
		"report.md":   Markdown,
		"report.html": HTML,
	}
	for _, name := range Files {
		b, err := renderers[name](r)
		if err != nil {
			return out, fmt.Errorf("render %s: %w", name, err)
		}
		if err := writeFile(filepath.Join(out, name), b); err != nil {
			return out, err
		}
	}
	return out, nil
}

func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
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
