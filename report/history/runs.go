package history

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

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
		// Unknown totals are NULL, as in report.json: no day was read
		// on both sides, and a 0 would read as "Elido counted 0".
		var api, local, delta *int64
		if !rep.Totals.Unknown {
			api, local, delta = &rep.Totals.API, &rep.Totals.Local, &rep.Totals.Delta
		}
		var id int64
		err := tx.GetContext(ctx, &id, h.q.insertRun,
			rep.RunKey, rep.WorkspaceID, rep.Window.TZ, rep.Window.From, rep.Window.To,
			rep.GeneratedAt.UTC().Format(instant), rep.Status, rep.Interrupted,
			api, local, delta, rep.Totals.APISummary,
			c.Days, c.Match, c.Missing, c.Surplus, c.Provisional, c.Unverifiable, rep.StoreID, h.stamp())
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
				d.Status, d.Severity, d.Settled, d.Reason, d.Repaired); err != nil {
				return fmt.Errorf("insert day %s: %w", d.Date, err)
			}
		}
		// Each day's diagnoses, summed by kind: what the trend ranks the
		// causes of the loss by.
		type dayKind struct{ day, kind string }
		sums := map[dayKind]int64{}
		var order []dayKind
		for _, g := range rep.Diagnoses {
			k := dayKind{g.Date, g.Kind}
			if _, ok := sums[k]; !ok {
				order = append(order, k)
			}
			sums[k] += g.Clicks
		}
		for _, k := range order {
			if _, err := tx.ExecContext(ctx, h.q.insertRunDiag, id, k.day, k.kind, sums[k]); err != nil {
				return fmt.Errorf("insert the %s diagnosis of day %s: %w", k.kind, k.day, err)
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

// LastCounts returns, for each day from..to that an earlier run of the
// workspace in zone tz recorded once it had settled, the latest Elido
// count recorded: what reconcile.Revise compares today's counts with.
// Call it before RecordRun.
func (h *History) LastCounts(ctx context.Context, workspaceID, tz string, from, to reconcile.Date) (map[reconcile.Date]reconcile.Recorded, error) {
	var earlier []reading
	if err := h.db.SelectContext(ctx, &earlier, h.q.latestAPI, workspaceID, tz, from.String(), to.String()); err != nil {
		return nil, fmt.Errorf("read earlier Elido counts for %s to %s: %w", from, to, err)
	}
	out := make(map[reconcile.Date]reconcile.Recorded, len(earlier))
	for _, r := range earlier {
		d, err := reconcile.ParseDate(r.Day)
		if err != nil {
			return nil, fmt.Errorf("read earlier Elido counts: %w", err)
		}
		out[d] = reconcile.Recorded{Clicks: r.API, RunKey: r.RunKey, At: r.GeneratedAt}
	}
	return out, nil
}
