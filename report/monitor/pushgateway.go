package monitor

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"

	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/internal/secret"
)

// maxErrorText bounds the error of a push, which quotes the Pushgateway's
// answer.
const maxErrorText = 600

// Metrics is what one run reports to the Pushgateway.
type Metrics struct {
	// Finished is when the run ended.
	Finished time.Time
	// Duration is how long the run took.
	Duration time.Duration
	// DaysChecked is the number of days in the window;
	// DaysDiscrepant those settled missing or surplus;
	// DaysUnverifiable those whose two sides could not both be read and
	// trusted.
	DaysChecked, DaysDiscrepant, DaysUnverifiable int
	// ExitCode is the process's exit code (docs/contract.md: 0 to 3).
	ExitCode int
}

// Completed reports whether the run completed: exit 0, or exit 1 (it
// completed and found gaps at or above --fail-on). A gap is data the
// customer is missing, not a failure of the job; it shows in
// clickrecon_days_discrepant, not in the absence of a success.
func (m Metrics) Completed() bool { return m.ExitCode == 0 || m.ExitCode == 1 }

// The metric names, one gauge each, all of the last run of a workspace.
const (
	metricLastRun          = "clickrecon_last_run_timestamp_seconds"
	metricLastSuccess      = "clickrecon_last_success_timestamp_seconds"
	metricDuration         = "clickrecon_duration_seconds"
	metricDaysChecked      = "clickrecon_days_checked"
	metricDaysDiscrepant   = "clickrecon_days_discrepant"
	metricDaysUnverifiable = "clickrecon_days_unverifiable"
	metricExitCode         = "clickrecon_exit_code"
)

// Pushgateway pushes a run's metrics to a Prometheus Pushgateway.
type Pushgateway struct {
	url      string // without user info
	user     string
	password string
	client   *http.Client
	timeout  time.Duration
	// fleetEntry is the name of the fleet's workspace the run is of
	// (run --workspace), "" without a fleet: see ForFleetEntry.
	fleetEntry string
}

// FleetWorkspaceLabel is the grouping label that names a fleet's
// workspace (its entry's name) in a run of one: ForFleetEntry.
const FleetWorkspaceLabel = "fleet_workspace"

// ForFleetEntry returns a Pushgateway that pushes to the same place under
// the grouping key {job="clickrecon", workspace=ID, fleet_workspace=name}:
// each workspace of a fleet, each pod of its Indexed Job, has a group of
// its own, even two entries that read the same Elido workspace (against
// two stores), and none replaces another's metrics.
func (p *Pushgateway) ForFleetEntry(name string) *Pushgateway {
	q := *p
	q.fleetEntry = name
	return &q
}

// NewPushgateway checks rawURL, the Pushgateway's base URL
// (http://pushgateway.monitoring:9091, without /metrics/...). User info in
// it (https://user:password@host) is sent as basic auth, and never to
// another origin: a redirect elsewhere fails the push (see
// internal/safehttp). Its errors never quote the URL.
func NewPushgateway(rawURL string) (*Pushgateway, error) {
	u, err := parseEndpoint("PUSHGATEWAY_URL", rawURL)
	if err != nil {
		return nil, err
	}
	p := &Pushgateway{client: safehttp.Client(nil, safehttp.SameOrigin), timeout: callTimeout}
	if u.User != nil {
		p.user = u.User.Username()
		p.password, _ = u.User.Password()
		u.User = nil
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("PUSHGATEWAY_URL must not have a query string: give the base URL, such as http://pushgateway:9091")
	}
	p.url = u.String()
	return p, nil
}

// String returns the Pushgateway's URL without its password, for a log
// line.
func (p *Pushgateway) String() string { return p.url }

// Push adds m to the Pushgateway under the grouping key
// {job="clickrecon", workspace=workspaceID} (and fleet_workspace, see
// ForFleetEntry) with push-add semantics
// (POST): the metrics pushed replace those of the same name in the group,
// and the others stay. So a failed run, which pushes no
// clickrecon_last_success_timestamp_seconds, leaves the last success in
// place for alerting on its age. No metric carries any other label.
func (p *Pushgateway) Push(ctx context.Context, workspaceID string, m Metrics) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	pusher := push.New(p.url, jobName).
		Grouping("workspace", workspaceID).
		Client(p.client)
	if p.fleetEntry != "" {
		pusher = pusher.Grouping(FleetWorkspaceLabel, p.fleetEntry)
	}
	if p.user != "" || p.password != "" {
		pusher = pusher.BasicAuth(p.user, p.password)
	}
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		g.Set(v)
		pusher.Collector(g)
	}
	finished := float64(m.Finished.UnixMilli()) / 1e3
	gauge(metricLastRun, "When the last clickrecon run of the workspace ended, in Unix seconds.", finished)
	if m.Completed() {
		gauge(metricLastSuccess, "When the last clickrecon run of the workspace that completed (exit 0 or 1) ended, in Unix seconds.", finished)
	}
	gauge(metricDuration, "How long the last clickrecon run took, in seconds.", m.Duration.Seconds())
	gauge(metricDaysChecked, "Days in the window of the last clickrecon run.", float64(m.DaysChecked))
	gauge(metricDaysDiscrepant, "Settled days the last clickrecon run found missing or surplus.", float64(m.DaysDiscrepant))
	gauge(metricDaysUnverifiable, "Days the last clickrecon run could not verify.", float64(m.DaysUnverifiable))
	gauge(metricExitCode, "Exit code of the last clickrecon run: 0 completed, 1 gaps at or above --fail-on, 2 usage or configuration error, 3 could not complete.", float64(m.ExitCode))

	if err := pusher.AddContext(ctx); err != nil {
		// The error quotes the Pushgateway's answer, whole: redact it (a
		// proxy's page may echo the Authorization header), then cut it.
		basic := base64.StdEncoding.EncodeToString([]byte(p.user + ":" + p.password))
		err = secret.ScrubCut(err, maxErrorText, "…", p.password, url.QueryEscape(p.password), basic)
		return fmt.Errorf("push metrics to the Pushgateway at %s: %w", p.url, err)
	}
	return nil
}
