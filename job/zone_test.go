package job

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/report"
)

// A store whose times carry no offset is read in an assumed zone, and the
// run says so in report.json, on stdout and in the log, with the
// drill-down off as on; a store of instants says nothing.
func TestRunSaysTheAssumedZone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		naive  bool
		drill  bool
		wanted bool
	}{
		{"offsetless_drilldown_off", true, false, true},
		{"offsetless_drilldown_on", true, true, true},
		{"with_offsets", false, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			world, o, d := setup(t)
			if tt.naive {
				withoutOffsets(t, world.StoreDSN)
			}
			var logs bytes.Buffer
			d.Log = slog.New(slog.NewTextHandler(&logs, nil))
			o.Drilldown = tt.drill
			out, err := Run(context.Background(), o, d)
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, f := range out.Report.Findings {
				if f.Kind == findingZoneAssumed {
					said = append(said, f.Message)
				}
			}
			var stdout bytes.Buffer
			if err := printSummary(&stdout, "text", out.Report, out.Dir); err != nil {
				t.Fatal(err)
			}
			if !tt.wanted {
				if len(said) > 0 || strings.Contains(stdout.String(), "STORE_TIMESTAMP_TZ") || strings.Contains(logs.String(), "STORE_TIMESTAMP_TZ") {
					t.Errorf("a store of instants was said to be read in a zone: %q\n%s", said, logs.String())
				}
				return
			}
			if len(said) != 1 || !strings.Contains(said[0], "text without an offset") || !strings.Contains(said[0], "in UTC") || !strings.Contains(said[0], "STORE_TIMESTAMP_TZ") {
				t.Fatalf("report findings %q: want one that names the column, the zone UTC and STORE_TIMESTAMP_TZ", said)
			}
			if !strings.Contains(stdout.String(), "finding ("+findingZoneAssumed+"): "+said[0]) {
				t.Errorf("stdout does not say it:\n%s", stdout.String())
			}
			if !strings.Contains(logs.String(), "zone=UTC") || !strings.Contains(logs.String(), "STORE_TIMESTAMP_TZ") {
				t.Errorf("the log does not say it:\n%s", logs.String())
			}
			if out.Report.Status != report.StatusDiscrepancies {
				t.Errorf("status %q: read as UTC, the demo's days are as before", out.Report.Status)
			}
		})
	}
}

// withoutOffsets rewrites the demo's SQLite store as Django and Rails
// write one: UTC text without an offset, in a table without the reference
// schema's CHECK.
func withoutOffsets(t *testing.T, storeDSN string) {
	t.Helper()
	db, err := sql.Open("sqlite", strings.TrimPrefix(storeDSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE naive AS SELECT * FROM clicks",
		"DROP TABLE clicks",
		"ALTER TABLE naive RENAME TO clicks",
		"UPDATE clicks SET ts = replace(replace(ts, 'T', ' '), 'Z', '')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// repair says the assumed zone on stdout and in the log before its plan.
func TestRepairSaysTheAssumedZone(t *testing.T) {
	world, o, d := setup(t)
	withoutOffsets(t, world.StoreDSN)
	var logs, stdout bytes.Buffer
	d.Log = slog.New(slog.NewTextHandler(&logs, nil))
	out, err := Repair(context.Background(), repairOptions(t, o, false), d, &stdout)
	if err != nil || out.Err != nil {
		t.Fatalf("Repair: %v, %v", err, out.Err)
	}
	first, _, _ := strings.Cut(stdout.String(), "\n")
	if !strings.HasPrefix(first, "note: clicks.ts (text without an offset)") || !strings.Contains(first, "in UTC") || !strings.Contains(first, "STORE_TIMESTAMP_TZ") {
		t.Errorf("stdout's first line %q: want the assumed zone", first)
	}
	if !strings.Contains(logs.String(), "zone=UTC") {
		t.Errorf("the log does not say it:\n%s", logs.String())
	}
	if out.Planned == 0 {
		t.Errorf("nothing planned: the test proves little")
	}
}
