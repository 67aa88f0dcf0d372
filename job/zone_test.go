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
				db, err := sql.Open("sqlite", strings.TrimPrefix(world.StoreDSN, "sqlite:"))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				// What Django and Rails write: UTC text without an offset, in a
				// table without the reference schema's CHECK.
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
			if err := PrintSummary(&stdout, "text", out.Report, out.Dir); err != nil {
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
