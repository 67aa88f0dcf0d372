package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/trend"
)

// The demo's reports, read back by trend: the day the demo repaired
// counts once, by its verdict after the repair; the day of duplicates is
// a surplus explained by them; the days no run checked are said.
func TestTrendOfTheDemo(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	at := deps{now: func() time.Time { return testNow }}
	if code := runWith(context.Background(), []string{"demo", "--report-dir", dir}, envconfig.MapLookuper(nil), &stdout, &stderr, at); code != exitOK {
		t.Fatalf("demo: exit %d\n%s", code, stderr.String())
	}
	trendOf := func(args ...string) (string, int) {
		stdout.Reset()
		stderr.Reset()
		args = append([]string{"trend", "--report-dir", dir, "--tz", "Europe/Warsaw", "--from", "2026-10-21", "--to", "2026-10-27"}, args...)
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr, at)
		return stdout.String(), code
	}
	out, code := trendOf("--format", "json")
	if code != exitOK {
		t.Fatalf("trend: exit %d\n%s", code, stderr.String())
	}
	var doc struct{ Series []trend.Series }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("trend --format json: %v\n%s", err, out)
	}
	if len(doc.Series) != 1 {
		t.Fatalf("%d series, want the demo's one:\n%s", len(doc.Series), out)
	}
	s := doc.Series[0]
	byDate := map[string]trend.Day{}
	for _, d := range s.Days {
		byDate[d.Date] = d
	}
	if d := byDate["2026-10-24"]; d.Status != reconcile.Match || d.Missing != 0 {
		t.Errorf("2026-10-24, repaired: %s missing %d, want match", d.Status, d.Missing)
	}
	if d := byDate["2026-10-25"]; d.Status != reconcile.Surplus || d.Surplus != 12 || d.Loss[reconcile.DiagDuplicates] != 12 {
		t.Errorf("2026-10-25: %s surplus %d loss %v, want 12 clicks of duplicates", d.Status, d.Surplus, d.Loss)
	}
	if d := byDate["2026-10-21"]; d.Checked {
		t.Errorf("2026-10-21 is before the demo's window, yet checked: %+v", d)
	}
	if s.Total.Unchecked != 3 || s.Total.Days != 7 {
		t.Errorf("total: %d days, %d unchecked; want 7 and 3", s.Total.Days, s.Total.Unchecked)
	}

	text, code := trendOf()
	if code != exitOK || !strings.Contains(text, "2026-10-25 surplus 12 clicks") || !strings.Contains(text, "duplicates") {
		t.Errorf("trend (text): exit %d\n%s", code, text)
	}
	rows, code := trendOf("--format", "csv", "--by", "day")
	recs, err := csv.NewReader(strings.NewReader(rows)).ReadAll()
	if code != exitOK || err != nil || len(recs) != 8 {
		t.Errorf("trend --format csv --by day: exit %d, %v, %d rows, want a header and 7 days\n%s", code, err, len(recs), rows)
	}
}

// A bad flag of trend exits 2 before reading anything, and names what to
// fix.
func TestTrendRefusesBadFlags(t *testing.T) {
	missing := t.TempDir() + "/none"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "year"}, "--by must be day, week or month"},
		{[]string{"--format", "xml"}, "must be text, json or csv"},
		{[]string{"--nights", "0"}, "nights must be a whole number from 1 to 3660"},
		{[]string{"--from", "2026-10-05", "--to", "2026-10-01"}, "to 2026-10-01 is before from 2026-10-05"},
		{[]string{"--to", "2026-13-01"}, "the range (--from, --to, --nights): to:"},
		{[]string{"--tz", "Mars/Olympus"}, "not an IANA time zone"},
		{[]string{"--report-dir", missing}, "is not a folder"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"trend", "--report-dir", t.TempDir()}, tt.args...)
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr, deps{now: func() time.Time { return testNow }})
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
