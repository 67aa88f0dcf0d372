package history

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/report"
)

// KindAPIRevised is the kind of the finding Revisions returns.
const KindAPIRevised = "api_revised"

// instant is how instants are written to and read from history: RFC 3339
// in UTC, whole seconds.
const instant = "2006-01-02T15:04:05Z"

// RecordRun records rep: the run, its window, status and totals, and each
// day's verdict, in one transaction, so that history never holds half a
// run. Call it after the report is written and never on a dry run.
func (h *History) RecordRun(ctx context.Context, rep report.Report) error {
	if rep.RunKey == "" || rep.WorkspaceID == "" {
		return fmt.Errorf("record run: the report has no run key or workspace")
	}
	err := h.inTx(ctx, func(tx *sqlx.Tx) error {
		c := rep.Coverage
		var id int64
		err := tx.GetContext(ctx, &id, h.q.insertRun,
			rep.RunKey, rep.WorkspaceID, rep.Window.TZ, rep.Window.From, rep.Window.To,
			rep.GeneratedAt.UTC().Format(instant), rep.Status, rep.Interrupted,
			rep.Totals.API, rep.Totals.Local, rep.Totals.Delta, rep.Totals.APISummary,
			c.Days, c.Match, c.Missing, c.Surplus, c.Provisional, c.Unverifiable)
		if err != nil {
			return fmt.Errorf("insert run: %w", err)
		}
		stmt, err := tx.PreparexContext(ctx, h.q.insertRunDay)
		if err != nil {
			return fmt.Errorf("prepare day insert: %w", err)
		}
		defer stmt.Close()
		for _, d := range rep.Days {
			if _, err := stmt.ExecContext(ctx, id, d.Date, d.Hours, d.API, d.Local, d.Delta,
				d.Status, d.Severity, d.Settled, d.Reason); err != nil {
				return fmt.Errorf("insert day %s: %w", d.Date, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record run %s: %w", rep.RunKey, err)
	}
	return nil
}

// reading is Elido's count of a day as an earlier run recorded it.
type reading struct {
	Day         string `db:"day"`
	API         int64  `db:"api_clicks"`
	RunKey      string `db:"run_key"`
	GeneratedAt string `db:"generated_at"`
}

// Revisions compares Elido's count of each settled day of rep with the
// latest settled count an earlier run of the same workspace and zone
// recorded, and returns a finding of kind api_revised for each day whose
// count changed: Elido revised it after the fact (late bot filtering, a
// replay), which explains a gap that appears or disappears with no change
// in the store. Call it before RecordRun, and add the findings to the
// report before it is written.
func (h *History) Revisions(ctx context.Context, rep report.Report) ([]report.Finding, error) {
	if len(rep.Days) == 0 {
		return nil, nil
	}
	var earlier []reading
	if err := h.db.SelectContext(ctx, &earlier, h.q.latestAPI,
		rep.WorkspaceID, rep.Window.TZ, rep.Window.From, rep.Window.To); err != nil {
		return nil, fmt.Errorf("read earlier Elido counts for %s to %s: %w", rep.Window.From, rep.Window.To, err)
	}
	byDay := make(map[string]reading, len(earlier))
	for _, r := range earlier {
		byDay[r.Day] = r
	}
	var findings []report.Finding
	for _, d := range rep.Days {
		if !d.Settled || d.API == nil {
			continue
		}
		was, ok := byDay[d.Date]
		if !ok || was.API == *d.API {
			continue
		}
		findings = append(findings, report.Finding{
			Kind: KindAPIRevised,
			Message: fmt.Sprintf("Elido's count for %s changed from %s to %s clicks (%s) since run %s at %s: the provider revised it after the day had settled",
				d.Date, report.Num(was.API), report.Num(*d.API), report.Signed(*d.API-was.API), was.RunKey, was.GeneratedAt),
		})
	}
	return findings, nil
}
