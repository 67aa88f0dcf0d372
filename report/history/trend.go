package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// trendDay is one row of trend_days: a day of a run.
type trendDay struct {
	RunID       int64  `db:"run_id"`
	RunKey      string `db:"run_key"`
	WorkspaceID string `db:"workspace_id"`
	StoreID     string `db:"store_id"`
	TZ          string `db:"tz"`
	GeneratedAt string `db:"generated_at"`
	Day         string `db:"day"`
	API         *int64 `db:"api_clicks"`
	Local       *int64 `db:"local_clicks"`
	Status      string `db:"status"`
	Repaired    int64  `db:"repaired_clicks"`
}

// trendDiagnosis is one row of trend_diagnoses.
type trendDiagnosis struct {
	RunID  int64  `db:"run_id"`
	Day    string `db:"day"`
	Kind   string `db:"kind"`
	Clicks int64  `db:"clicks"`
}

// ReadTrend reads what a trend of workspaceID ("" for every workspace)
// over from..to weighs, in one read-only transaction, so that a run
// recorded meanwhile is read whole or not at all (never its days without
// its diagnoses, nor its alerts without its days): the runs, given to
// add as TrendRuns gives them, and the alert times, as TrendAlerts
// returns them. It returns how many runs it gave.
func (h *History) ReadTrend(ctx context.Context, workspaceID string, from, to reconcile.Date, add func(report.Report) error) (int, []AlertTimes, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if h.dialect == dsn.Postgres {
		// Every statement of the transaction sees one snapshot.
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := h.db.BeginTxx(ctx, opts)
	if err != nil {
		return 0, nil, fmt.Errorf("read the history for the trend: %w", err)
	}
	n, err := h.trendRuns(ctx, tx, workspaceID, from, to, add)
	var alerts []AlertTimes
	if err == nil {
		alerts, err = h.trendAlerts(ctx, tx, workspaceID, from, to)
	}
	if rerr := tx.Rollback(); err == nil && rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = fmt.Errorf("read the history for the trend: %w", rerr)
	}
	return n, alerts, err
}

// TrendRuns gives add, one run at a time in the order they were
// recorded, the report of each recorded run of workspaceID ("" for every
// workspace) whose window meets from..to, holding what a trend weighs:
// its run key, workspace, store, zone and when it was made, its days in
// the range (date, status, both counts) and their diagnoses by kind. A
// run recorded before the history kept its store is given the one store
// the other runs of its workspace and zone read, when there is one. It
// returns how many runs it gave.
func (h *History) TrendRuns(ctx context.Context, workspaceID string, from, to reconcile.Date, add func(report.Report) error) (int, error) {
	return h.trendRuns(ctx, h.db, workspaceID, from, to, add)
}

// trendRuns is TrendRuns through q (the database, or a transaction).
func (h *History) trendRuns(ctx context.Context, q sqlx.QueryerContext, workspaceID string, from, to reconcile.Date, add func(report.Report) error) (int, error) {
	stores, err := h.oneStores(ctx, q)
	if err != nil {
		return 0, err
	}
	var diags []trendDiagnosis
	if err := sqlx.SelectContext(ctx, q, &diags, h.q.trendDiagnoses, workspaceID, from.String(), to.String()); err != nil {
		return 0, fmt.Errorf("read the runs' diagnoses for the trend: %w", err)
	}
	byRun := map[int64][]report.Diagnosis{}
	for _, g := range diags {
		byRun[g.RunID] = append(byRun[g.RunID], report.Diagnosis{Date: g.Day, Kind: g.Kind, Clicks: g.Clicks})
	}
	rows, err := q.QueryxContext(ctx, h.q.trendDays, workspaceID, from.String(), to.String())
	if err != nil {
		return 0, fmt.Errorf("read the runs' days for the trend: %w", err)
	}
	defer rows.Close()
	var rep report.Report
	var runID int64
	n := 0
	flush := func() error {
		if rep.RunKey == "" {
			return nil
		}
		rep.Diagnoses = byRun[runID]
		n++
		return add(rep)
	}
	for rows.Next() {
		var d trendDay
		if err := rows.StructScan(&d); err != nil {
			return n, fmt.Errorf("read the runs' days for the trend: %w", err)
		}
		if d.RunID != runID || rep.RunKey == "" {
			if err := flush(); err != nil {
				return n, err
			}
			at, err := time.Parse(time.RFC3339, d.GeneratedAt)
			if err != nil {
				return n, fmt.Errorf("run %s: generated_at %q: %w", d.RunKey, d.GeneratedAt, err)
			}
			store := d.StoreID
			if store == "" {
				store = stores[zoneOf{d.WorkspaceID, d.TZ}]
			}
			runID = d.RunID
			rep = report.Report{RunKey: d.RunKey, WorkspaceID: d.WorkspaceID, StoreID: store, GeneratedAt: at,
				Window: report.Window{TZ: d.TZ}}
		}
		rep.Days = append(rep.Days, report.Day{Date: d.Day, API: d.API, Local: d.Local, Status: reconcile.Status(d.Status), Repaired: d.Repaired})
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read the runs' days for the trend: %w", err)
	}
	return n, flush()
}

// zoneOf is a workspace in a zone.
type zoneOf struct{ workspaceID, tz string }

// oneStores returns, for each workspace and zone whose runs read exactly
// one store, that store: what a run recorded before 006_trend read.
func (h *History) oneStores(ctx context.Context, q sqlx.QueryerContext) (map[zoneOf]string, error) {
	var rows []struct {
		WorkspaceID string `db:"workspace_id"`
		TZ          string `db:"tz"`
		StoreID     string `db:"store_id"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, h.q.trendStores); err != nil {
		return nil, fmt.Errorf("read the stores of the runs: %w", err)
	}
	seen := map[zoneOf][]string{}
	for _, r := range rows {
		if r.StoreID != "" {
			k := zoneOf{r.WorkspaceID, r.TZ}
			seen[k] = append(seen[k], r.StoreID)
		}
	}
	out := map[zoneOf]string{}
	for k, ids := range seen {
		if len(ids) == 1 {
			out[k] = ids[0]
		}
	}
	return out, nil
}

// AlertTimes is when Slack was first told of an alerted day, and when it
// was told the day healed (zero while it has not).
type AlertTimes struct {
	WorkspaceID, StoreID, TZ, Day string
	Alerted, Healed               time.Time
}

// TrendAlerts returns the alert times of the days from..to of workspaceID
// ("" for every workspace): what the trend's time to alert and to tell a
// heal are read from.
func (h *History) TrendAlerts(ctx context.Context, workspaceID string, from, to reconcile.Date) ([]AlertTimes, error) {
	return h.trendAlerts(ctx, h.db, workspaceID, from, to)
}

// trendAlerts is TrendAlerts through q (the database, or a transaction).
func (h *History) trendAlerts(ctx context.Context, q sqlx.QueryerContext, workspaceID string, from, to reconcile.Date) ([]AlertTimes, error) {
	var rows []struct {
		WorkspaceID string `db:"workspace_id"`
		StoreID     string `db:"store_id"`
		TZ          string `db:"tz"`
		Day         string `db:"day"`
		AlertedAt   string `db:"alerted_at"`
		Healed      bool   `db:"healed"`
		UpdatedAt   string `db:"updated_at"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, h.q.trendAlerts, workspaceID, from.String(), to.String()); err != nil {
		return nil, fmt.Errorf("read the alerts for the trend: %w", err)
	}
	out := make([]AlertTimes, 0, len(rows))
	for _, r := range rows {
		a := AlertTimes{WorkspaceID: r.WorkspaceID, StoreID: r.StoreID, TZ: r.TZ, Day: r.Day}
		var err error
		if a.Alerted, err = time.Parse(time.RFC3339, r.AlertedAt); err != nil {
			return nil, fmt.Errorf("alert of %s: alerted_at %q: %w", r.Day, r.AlertedAt, err)
		}
		if r.Healed {
			if a.Healed, err = time.Parse(time.RFC3339, r.UpdatedAt); err != nil {
				return nil, fmt.Errorf("alert of %s: updated_at %q: %w", r.Day, r.UpdatedAt, err)
			}
		}
		out = append(out, a)
	}
	return out, nil
}
