package job

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/monitor"
)

// Monitors are the optional monitoring endpoints a run reports to: Run
// pings them when it starts reading and when it finishes (Deps.Monitors).
type Monitors struct {
	Push   *monitor.Pushgateway // nil: PUSHGATEWAY_URL unset
	Health *monitor.Healthcheck // nil: HEALTHCHECK_URL unset
}

// NewMonitors builds the monitoring clients that PUSHGATEWAY_URL and
// HEALTHCHECK_URL ask for ("": none); their constructors check the URLs.
// opts go to the healthcheck.
func NewMonitors(pushgatewayURL, healthcheckURL string, opts ...monitor.Option) (Monitors, error) {
	var m Monitors
	var err error
	if pushgatewayURL != "" {
		if m.Push, err = monitor.NewPushgateway(pushgatewayURL); err != nil {
			return m, err
		}
	}
	if healthcheckURL != "" {
		if m.Health, err = monitor.NewHealthcheck(healthcheckURL, opts...); err != nil {
			return m, err
		}
	}
	return m, nil
}

// start pings the healthcheck's /start, just before Elido is read. A
// failure is logged, never more.
func (m Monitors) start(ctx context.Context, log *slog.Logger) {
	if m.Health == nil {
		return
	}
	if err := m.Health.Start(context.WithoutCancel(ctx)); err != nil {
		log.Warn("healthcheck start ping failed", "healthcheck", m.Health.String(), "err", err)
	}
}

// finish reports the run's exit code and report to the Pushgateway and
// the healthcheck, as the last stage of a run. Their failures are logged
// and never change the exit code; they run even after SIGTERM, briefly.
func (m Monitors) finish(ctx context.Context, log *slog.Logger, workspaceID string, code int, rep report.Report, finished time.Time, took time.Duration) {
	ctx = context.WithoutCancel(ctx)
	metrics := monitor.Metrics{Finished: finished, Duration: took, ExitCode: code}
	summary := fmt.Sprintf("exit %d", code)
	if rep.RunKey != "" {
		metrics.DaysChecked = rep.Coverage.Days
		metrics.DaysDiscrepant = rep.Coverage.Missing + rep.Coverage.Surplus
		metrics.DaysUnverifiable = rep.Coverage.Unverifiable
		delta := "delta not known"
		if !rep.Totals.Unknown {
			delta = fmt.Sprintf("delta %+d", rep.Totals.Delta)
		}
		summary = fmt.Sprintf("exit %d: %s %s..%s %s, %d days, %d gaps, %d unverifiable, %s, run %s",
			code, report.StatusText(rep.Status), rep.Window.From, rep.Window.To, rep.Window.TZ, metrics.DaysChecked, metrics.DaysDiscrepant, metrics.DaysUnverifiable, delta, rep.RunKey)
		if rep.Link != "" {
			summary += ", report " + rep.Link
		}
	}
	if m.Push != nil {
		if err := m.Push.Push(ctx, workspaceID, metrics); err != nil {
			log.Warn("pushgateway push failed", "pushgateway", m.Push.String(), "err", err)
		}
	}
	if m.Health != nil {
		if err := m.Health.Finish(ctx, code, summary); err != nil {
			log.Warn("healthcheck ping failed", "healthcheck", m.Health.String(), "err", err)
		}
	}
}
