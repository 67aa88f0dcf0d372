package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/envload"
	"github.com/clickrecon/clickrecon/internal/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// config is everything the environment can set. Flags override the fields
// they share with it (see parseArgs).
type config struct {
	APIKey      string `env:"ELIDO_API_KEY"`
	WorkspaceID string `env:"ELIDO_WORKSPACE_ID"`
	APIBase     string `env:"ELIDO_API_BASE, default=https://api.elido.app/v1"`
	RateLimit   int    `env:"ELIDO_RATE_LIMIT, default=60"`
	Retention   int    `env:"ELIDO_RETENTION_DAYS, default=730"`

	StoreDSN       string `env:"STORE_DSN"`
	StorePreset    string `env:"STORE_PRESET, default=events"`
	StoreQueryFile string `env:"STORE_QUERY_FILE"`
	StoreTotalFile string `env:"STORE_TOTAL_QUERY_FILE"`
	StoreTSZone    string `env:"STORE_TIMESTAMP_TZ, default=UTC"`

	StoreWriteDSN    string `env:"STORE_WRITE_DSN"`    // repair --apply: a role that may insert
	RepairInsertFile string `env:"REPAIR_INSERT_FILE"` // repair: an insert for a custom schema
	Apply            bool   `env:"REPAIR_APPLY, default=false"`
	Repair           string `env:"RECON_REPAIR"` // run --repair: print or apply

	TZ      string        `env:"RECON_TZ, default=UTC"`
	Days    int           `env:"RECON_DAYS, default=3"`
	MaxDays int           `env:"RECON_MAX_DAYS, default=400"`
	Settle  time.Duration `env:"RECON_SETTLE, default=2h"`

	ToleranceAbs int64   `env:"RECON_TOLERANCE_ABS, default=0"`
	TolerancePct float64 `env:"RECON_TOLERANCE_PCT, default=0"`
	FailAbs      int64   `env:"RECON_FAIL_ABS, default=10"`
	FailPct      float64 `env:"RECON_FAIL_PCT, default=5"`

	DrillMax int `env:"RECON_DRILLDOWN_MAX_REQUESTS, default=500"`

	HistoryDSN string `env:"HISTORY_DSN"`

	SlackWebhookURL string `env:"SLACK_WEBHOOK_URL"`
	SlackBotToken   string `env:"SLACK_BOT_TOKEN"`
	SlackChannel    string `env:"SLACK_CHANNEL"`
	SlackAPIURL     string `env:"SLACK_API_URL"`
	SlackNotify     string `env:"SLACK_NOTIFY, default=gaps"`

	PushgatewayURL string `env:"PUSHGATEWAY_URL"`
	HealthcheckURL string `env:"HEALTHCHECK_URL"`

	ReportDir      string        `env:"RECON_REPORT_DIR, default=reports"`
	ReportURL      string        `env:"RECON_REPORT_URL"`
	ReportKeepDays int           `env:"RECON_REPORT_KEEP_DAYS, default=30"`
	Timeout        time.Duration `env:"RECON_TIMEOUT, default=30m"`
	LogLevel       string        `env:"LOG_LEVEL, default=info"`
	LogFormat      string        `env:"LOG_FORMAT"` // "": text on a terminal, else JSON

	// The variables behind the flags of the same name.
	Date      string `env:"RECON_DATE"`
	From      string `env:"RECON_FROM"`
	To        string `env:"RECON_TO"`
	DryRun    bool   `env:"RECON_DRY_RUN, default=false"`
	FailOn    string `env:"RECON_FAIL_ON, default=none"`
	Drilldown string `env:"RECON_DRILLDOWN, default=auto"`
	Format    string `env:"RECON_FORMAT, default=text"`
	Shard     string `env:"RECON_SHARD"`
}

// secretVars may also be read from a file named by NAME_FILE (a mounted
// Kubernetes Secret). A file's trailing line break is dropped.
var secretVars = []string{"ELIDO_API_KEY", "STORE_DSN", "STORE_WRITE_DSN", "HISTORY_DSN", "SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "PUSHGATEWAY_URL", "HEALTHCHECK_URL"}

// loadConfig reads the environment. An error names the variable.
func loadConfig(ctx context.Context, env envconfig.Lookuper) (config, error) {
	var c config
	if err := envload.Load(ctx, env, &c, secretVars); err != nil {
		return config{}, err
	}
	return c, nil
}

// validateCommon checks what run and demo share: the tolerances, the
// output flags and the logging variables.
func (c config) validateCommon() error {
	tol := c.tolerance()
	if err := tol.Validate(); err != nil {
		return err
	}
	switch c.FailOn {
	case "none", "warn", "fail":
	default:
		return fmt.Errorf("--fail-on (RECON_FAIL_ON) must be none, warn or fail, got %q", c.FailOn)
	}
	switch c.Drilldown {
	case "auto", "off":
	default:
		return fmt.Errorf("--drilldown (RECON_DRILLDOWN) must be auto or off, got %q", c.Drilldown)
	}
	switch c.Format {
	case "text", "json":
	default:
		return fmt.Errorf("--format (RECON_FORMAT) must be text or json, got %q", c.Format)
	}
	switch strings.ToLower(c.LogFormat) {
	case "", "json", "text":
	default:
		return fmt.Errorf("LOG_FORMAT must be json or text, got %q", c.LogFormat)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if _, err := alert.ParseNotify(c.SlackNotify); err != nil {
		return err
	}
	if c.ReportURL != "" {
		// Any run key will do: this checks the base URL alone.
		if _, err := report.HTMLURL(c.ReportURL, "run"); err != nil {
			return err
		}
	}
	switch {
	case c.Settle < 0:
		return fmt.Errorf("RECON_SETTLE must not be negative, got %s", c.Settle)
	case c.Timeout <= 0:
		return fmt.Errorf("RECON_TIMEOUT must be positive, got %s", c.Timeout)
	case c.ReportDir == "":
		return fmt.Errorf("--report-dir (RECON_REPORT_DIR) must not be empty")
	case c.ReportKeepDays < 0:
		return fmt.Errorf("RECON_REPORT_KEEP_DAYS must not be negative (0 keeps every report), got %d", c.ReportKeepDays)
	case c.MaxDays < 1:
		return fmt.Errorf("RECON_MAX_DAYS must be at least 1, got %d", c.MaxDays)
	case c.DrillMax < 0:
		return fmt.Errorf("RECON_DRILLDOWN_MAX_REQUESTS must not be negative, got %d", c.DrillMax)
	}
	return nil
}

// validateRun checks everything a reconciliation run needs, given the
// current time, and returns the window it names. Nothing here touches the
// network or a database.
func (c config) validateRun(now time.Time) (reconcile.Window, error) {
	var w reconcile.Window
	if err := c.validateCommon(); err != nil {
		return w, err
	}
	if err := c.elido().Validate(); err != nil {
		return w, err
	}
	switch {
	case c.StoreDSN == "":
		return w, fmt.Errorf("STORE_DSN is not set: give postgres://USER@HOST/DB, mysql://USER@HOST/DB or sqlite:PATH (or STORE_DSN_FILE)")
	case c.Days < 1:
		return w, fmt.Errorf("RECON_DAYS must be at least 1, got %d", c.Days)
	case c.Retention < 0:
		return w, fmt.Errorf("ELIDO_RETENTION_DAYS must not be negative (0: no limit), got %d", c.Retention)
	}
	if _, err := dsn.Parse(c.StoreDSN, dsn.Options{Name: "STORE_DSN", MissingHint: "check STORE_DSN", MySQL: true}); err != nil {
		return w, err
	}
	if c.HistoryDSN != "" {
		if _, err := dsn.Parse(c.HistoryDSN, dsn.Options{Name: "HISTORY_DSN", Mode: dsn.ReadWrite, MissingHint: "run clickrecon migrate to create it"}); err != nil {
			return w, err
		}
	}
	loc, err := reconcile.LoadZone(c.TZ)
	if err != nil {
		return w, err
	}
	return reconcile.NewWindow(reconcile.WindowSpec{
		Date: c.Date, From: c.From, To: c.To, Days: c.Days, MaxDays: c.MaxDays, Shard: c.Shard,
	}, loc, now)
}

// secrets returns every secret the configuration holds, with the
// passwords of its DSNs and URLs on their own: what a Slack notice, which
// quotes errors, must never show.
func (c config) secrets() []string {
	// A DSN is shown redacted (internal/dsn): its password is the secret,
	// not a SQLite file's path.
	out := []string{c.APIKey, c.SlackWebhookURL, c.SlackBotToken, c.PushgatewayURL, c.HealthcheckURL}
	for _, raw := range []string{c.StoreDSN, c.StoreWriteDSN, c.HistoryDSN, c.PushgatewayURL, c.HealthcheckURL} {
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				out = append(out, pw, url.QueryEscape(pw))
			}
		}
	}
	if u, err := url.Parse(c.SlackWebhookURL); err == nil && len(u.Path) > 1 {
		out = append(out, u.Path)
	}
	var kept []string
	for _, s := range out {
		if len(s) >= 4 { // a one-letter "secret" would blank out every reason
			kept = append(kept, s)
		}
	}
	return kept
}

// lockDSN is the database whose lock keeps two runs of a workspace apart
// (runlock.DSN): a PostgreSQL history or store (an advisory lock), else
// the SQLite history, else the SQLite store (a lock file beside it).
func (c config) lockDSN() string { return runlock.DSN(c.HistoryDSN, c.StoreDSN) }

// elido returns the Elido client's configuration; its Validate is where
// the ELIDO_* variables are checked.
func (c config) elido() elido.Config {
	return elido.Config{
		BaseURL:       c.APIBase,
		APIKey:        c.APIKey,
		WorkspaceID:   c.WorkspaceID,
		RatePerMinute: c.RateLimit,
	}
}

// slack returns the notifier's configuration.
func (c config) slack() alert.Config {
	return alert.Config{
		WebhookURL: c.SlackWebhookURL,
		BotToken:   c.SlackBotToken,
		Channel:    c.SlackChannel,
		APIURL:     c.SlackAPIURL,
		Notify:     c.SlackNotify,
	}
}

func (c config) tolerance() reconcile.Tolerance {
	return reconcile.Tolerance{Abs: c.ToleranceAbs, Pct: c.TolerancePct, FailAbs: c.FailAbs, FailPct: c.FailPct}
}

func (c config) failOn() reconcile.Severity {
	if c.FailOn == "none" {
		return ""
	}
	return reconcile.Severity(c.FailOn)
}
