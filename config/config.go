// Package config is what a clickrecon command reads from its environment
// (and its flags, which cmd/clickrecon binds to the same fields), and the
// checks that need no network or database: every mistake listed at once,
// each naming the flag or variable to fix.
package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/envload"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Config is everything the environment can set. Flags override the fields
// they share with it (cmd/clickrecon binds them after Load).
type Config struct {
	APIKey      string `env:"ELIDO_API_KEY"`
	WorkspaceID string `env:"ELIDO_WORKSPACE_ID"`
	APIBase     string `env:"ELIDO_API_BASE, default=https://api.elido.app/v1"`
	RateLimit   int    `env:"ELIDO_RATE_LIMIT, default=60"`
	Retention   int    `env:"ELIDO_RETENTION_DAYS, default=730"`

	StoreDSN       string `env:"STORE_DSN"`
	StorePreset    string `env:"STORE_PRESET, default=events"`
	StoreQueryFile string `env:"STORE_QUERY_FILE"`
	StoreTotalFile string `env:"STORE_TOTAL_QUERY_FILE"`
	StoreTSZone    string `env:"STORE_TIMESTAMP_TZ"` // unset: UTC for the presets; a custom query runs in RECON_TZ

	StoreWriteDSN    string `env:"STORE_WRITE_DSN"`             // repair --apply: a role that may insert
	RepairInsertFile string `env:"REPAIR_INSERT_FILE"`          // repair: an insert for a custom schema
	Apply            bool   `env:"REPAIR_APPLY, default=false"` // repair --apply, run --repair --apply
	Repair           string `env:"RECON_REPAIR"`                // run --repair: true or false (print, apply: the old spelling)
	RepairFlagSet    bool   // --repair, not RECON_REPAIR, gave Repair

	TZ      string        `env:"RECON_TZ, default=UTC"`
	Days    int           `env:"RECON_DAYS, default=3"`
	MaxDays int           `env:"RECON_MAX_DAYS, default=400"`
	Settle  time.Duration `env:"RECON_SETTLE, default=2h"`

	ToleranceAbs int64   `env:"RECON_TOLERANCE_ABS, default=0"`
	TolerancePct float64 `env:"RECON_TOLERANCE_PCT, default=0"`
	FailAbs      int64   `env:"RECON_FAIL_ABS, default=10"`
	FailPct      float64 `env:"RECON_FAIL_PCT, default=5"`

	DrillMax int    `env:"RECON_DRILLDOWN_MAX_REQUESTS, default=500"`
	Diagnose string `env:"RECON_DIAGNOSE, default=raw"`

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
	LogLevel       string        `env:"LOG_LEVEL"`  // "": info, warn on a terminal (logLevel)
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

	// The demo's own flags, which no variable sets.
	Serve      bool
	Port       int
	ClicksFile string

	// serve's own flag, which no variable sets.
	Addr string

	// check's own flag, which no variable sets.
	Offline bool

	// trend's own flags, which no variable sets: the nights before
	// today (--nights, when neither --from nor --to is given), the
	// workspace (--workspace; ELIDO_WORKSPACE_ID when not given, every
	// workspace when both are empty), and the periods of its CSV and
	// text (--by).
	Nights    int
	Workspace string
	By        string

	// FleetFile is the fleet file (fleet.go); FleetName and FleetIndex
	// are run's and check's --workspace and --workspace-index, which
	// choose its entry before anything else is read (cmd applies them).
	FleetFile  string `env:"RECON_FLEET_FILE"`
	FleetSize  string `env:"RECON_FLEET_SIZE"` // the Indexed Job's completions (components/fleet)
	FleetName  string
	FleetIndex string

	// unread are the variables given but unreadable (envload.Unread): a
	// NAME_FILE that cannot be read, NAME and NAME_FILE both set, a value
	// of the wrong type. Their errors come from Load.
	unread map[string]bool
}

// secretVars may also be read from a file named by NAME_FILE (a mounted
// Kubernetes Secret). A file's trailing line break is dropped.
var secretVars = []string{"ELIDO_API_KEY", "STORE_DSN", "STORE_WRITE_DSN", "HISTORY_DSN", "SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "PUSHGATEWAY_URL", "HEALTHCHECK_URL"}

// Load reads the environment. An error names the variable. Each
// variable is judged on its own (envload.Load): one whose value cannot be
// read is set aside (its default stands, and unread names it) and the rest
// are read, so that the error lists every bad variable at once, and the
// config returned with it is still fit for the checks of ValidateRun,
// which then add theirs and never call a variable set aside "not set".
func Load(ctx context.Context, env envconfig.Lookuper) (Config, error) {
	var c Config
	err := envload.Load(ctx, env, &c, secretVars)
	c.unread = envload.Unread(err)
	return c, err
}

// isSet reports whether the variable name was given: value is what it
// holds, "" when it was set aside as unreadable (its error already says
// what is wrong with it, so it is not also "not set").
func (c Config) isSet(name, value string) bool { return value != "" || c.unread[name] }

// ValidateCommon checks what run and demo share: the tolerances, the
// output flags and the logging variables. It returns every mistake it
// finds, joined (errors.Join), not only the first.
func (c Config) ValidateCommon() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(c.Tolerance().Validate())
	switch c.FailOn {
	case "none", "warn", "fail":
	default:
		add(fmt.Errorf("--fail-on (RECON_FAIL_ON) must be none, warn or fail, got %q", c.FailOn))
	}
	switch c.Drilldown {
	case "auto", "off":
	default:
		add(fmt.Errorf("--drilldown (RECON_DRILLDOWN) must be auto or off, got %q", c.Drilldown))
	}
	switch job.DiagnoseMode(c.Diagnose) {
	case job.DiagnoseRaw, job.DiagnoseHourly, job.DiagnoseOff:
	default:
		add(fmt.Errorf("RECON_DIAGNOSE must be raw, hourly or off, got %q", c.Diagnose))
	}
	switch c.Format {
	case "text", "json":
	default:
		add(fmt.Errorf("--format (RECON_FORMAT) must be text or json, got %q", c.Format))
	}
	add(c.CheckLogging())
	_, err := alert.ParseNotify(c.SlackNotify)
	add(err)
	if c.ReportURL != "" {
		// Any run key will do: this checks the base URL alone.
		_, err := storage.HTMLURL(c.ReportURL, "run")
		add(err)
	}
	add(CheckReportDir(c.ReportDir))
	if c.Settle < 0 {
		add(fmt.Errorf("RECON_SETTLE must not be negative, got %s", c.Settle))
	}
	if c.Timeout <= 0 {
		add(fmt.Errorf("RECON_TIMEOUT must be positive, got %s", c.Timeout))
	}
	if c.ReportKeepDays < 0 {
		add(fmt.Errorf("RECON_REPORT_KEEP_DAYS must not be negative (0 keeps every report), got %d", c.ReportKeepDays))
	}
	if c.MaxDays < 1 {
		add(fmt.Errorf("RECON_MAX_DAYS must be at least 1, got %d", c.MaxDays))
	}
	if c.DrillMax < 0 {
		add(fmt.Errorf("RECON_DRILLDOWN_MAX_REQUESTS must not be negative, got %d", c.DrillMax))
	}
	return errors.Join(errs...)
}

// CheckLogging checks LOG_LEVEL and LOG_FORMAT, which every command that
// logs reads; it returns both mistakes, joined.
func (c Config) CheckLogging() error {
	var errs []error
	switch strings.ToLower(c.LogFormat) {
	case "", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("LOG_FORMAT must be json or text, got %q", c.LogFormat))
	}
	if _, err := console.ParseLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckReportDir refuses a --report-dir that is meant as an object-storage
// URL but is not one, such as s3:/bucket or gs:bucket: taken as a folder,
// it would quietly write the reports to ./s3:/bucket on the pod's disk.
// It also refuses a gs:// or azblob:// URL in a build without that driver
// (storage.CheckDriver), before any command reads or writes anything.
func CheckReportDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("--report-dir (RECON_REPORT_DIR) must not be empty")
	}
	if err := storage.CheckDriver(dir); err != nil {
		return fmt.Errorf("--report-dir (RECON_REPORT_DIR): %w", err)
	}
	scheme, _, ok := strings.Cut(dir, ":")
	if !ok || strings.Contains(dir, "://") || len(scheme) < 2 || strings.ContainsAny(scheme, `/\.`) {
		return nil // a folder (C:\reports has a one-letter drive), or a URL storage.Open checks
	}
	for _, r := range scheme {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '+' || r == '-') {
			return nil
		}
	}
	return fmt.Errorf("--report-dir (RECON_REPORT_DIR) %q is neither a folder nor a URL: write %s://BUCKET/PREFIX (two slashes) for object storage, or ./%s for a local folder of that name",
		dir, strings.ToLower(scheme), dir)
}

// DSNs are a command's DSNs, each parsed once, where it is validated:
// what opens a database takes its parsed DSN from here.
type DSNs struct {
	Store      dsn.Target // STORE_DSN (store.ParseDSN)
	History    dsn.Target // HISTORY_DSN (history.ParseDSN); zero when unset
	StoreWrite dsn.Target // STORE_WRITE_DSN (store.ParseWriteDSN); zero when unset
	// HistoryMissing says HISTORY_DSN names a SQLite file that does not
	// exist (history is then zero): the probe tells it, to Slack too.
	HistoryMissing error
}

// Lock is the database whose lock keeps two runs of a workspace apart
// (runlock.On): a PostgreSQL history or store (an advisory lock), else
// the SQLite history, else the SQLite store (a lock file beside it).
func (d DSNs) Lock() dsn.Target { return runlock.On(d.History, d.Store) }

// ValidateRun checks everything a reconciliation run needs, given the
// current time, and returns the window it names and its DSNs, parsed
// (but for STORE_WRITE_DSN, which repair's checks parse). Nothing here
// touches the network or a database. It returns every mistake it finds,
// joined.
func (c Config) ValidateRun(now time.Time) (reconcile.Window, DSNs, error) {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(envload.Placeholders(c, secretVars))
	add(c.ValidateCommon())
	ec := c.Elido()
	if c.unread["ELIDO_API_KEY"] {
		ec.APIKey = "unread" // Load told what is wrong with it
	}
	add(ec.Validate())
	var parsed DSNs
	if !c.isSet("STORE_DSN", c.StoreDSN) {
		add(fmt.Errorf("STORE_DSN is not set: give postgres://USER@HOST/DB, mysql://USER@HOST/DB or sqlite:PATH (or STORE_DSN_FILE)"))
	} else if c.StoreDSN != "" {
		var err error
		parsed.Store, err = store.ParseDSN(c.StoreDSN)
		add(err)
	}
	if c.Days < 1 {
		add(fmt.Errorf("RECON_DAYS must be at least 1, got %d", c.Days))
	}
	if c.Retention < 0 {
		add(fmt.Errorf("ELIDO_RETENTION_DAYS must not be negative (0: no limit), got %d", c.Retention))
	}
	if c.HistoryDSN != "" {
		// A SQLite file that does not exist is left to the probe
		// (job.Run's probe), which tells Slack: a history deleted overnight
		// must not fail the night in silence. A new install's file, before
		// clickrecon migrate, is refused there with the same words.
		var err error
		parsed.History, err = history.ParseDSN(c.HistoryDSN)
		if errors.Is(err, fs.ErrNotExist) {
			parsed.HistoryMissing = err
		} else {
			add(err)
		}
	}
	var w reconcile.Window
	loc, err := reconcile.LoadZone(c.TZ)
	add(err)
	if err != nil {
		// No window without a zone; its dates are still checked, so that
		// every mistake is listed at once.
		for _, d := range []struct{ flag, value string }{{"--date", c.Date}, {"--from", c.From}, {"--to", c.To}} {
			if _, err := reconcile.ParseDate(d.value); d.value != "" && err != nil {
				add(fmt.Errorf("%s: %w", d.flag, err))
			}
		}
	}
	if err == nil && c.MaxDays >= 1 && c.Days >= 1 {
		w, err = reconcile.NewWindow(reconcile.WindowSpec{
			Date: c.Date, From: c.From, To: c.To, Days: c.Days, MaxDays: c.MaxDays, Shard: c.Shard,
		}, loc, now)
		add(err)
	}
	return w, parsed, errors.Join(errs...)
}

// Secrets returns every secret the configuration holds, with the
// passwords of its DSNs and URLs on their own: what a Slack notice, which
// quotes errors, must never show.
func (c Config) Secrets(d DSNs) []string {
	// A DSN is shown redacted (internal/dsn): its password, and the
	// parameters that carry one, are the secret, not a SQLite file's path.
	out := []string{c.APIKey, c.SlackWebhookURL, c.SlackBotToken, c.PushgatewayURL, c.HealthcheckURL}
	for _, t := range []dsn.Target{d.Store, d.StoreWrite, d.History} {
		out = append(out, t.Secrets...)
	}
	for _, raw := range []string{c.PushgatewayURL, c.HealthcheckURL} {
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

// Elido returns the Elido client's configuration; its Validate is where
// the ELIDO_* variables are checked.
func (c Config) Elido() elido.Config {
	return elido.Config{
		BaseURL:       c.APIBase,
		APIKey:        c.APIKey,
		WorkspaceID:   c.WorkspaceID,
		RatePerMinute: c.RateLimit,
	}
}

// CheckSlack checks the Slack variables together (alert.New), unless one
// of their secrets was unreadable: Load told that, and the rest
// would be judged without it.
func (c Config) CheckSlack() error {
	if c.unread["SLACK_WEBHOOK_URL"] || c.unread["SLACK_BOT_TOKEN"] {
		return nil
	}
	_, err := alert.New(c.Slack())
	return err
}

// Slack returns the notifier's configuration.
func (c Config) Slack() alert.Config {
	return alert.Config{
		WebhookURL: c.SlackWebhookURL,
		BotToken:   c.SlackBotToken,
		Channel:    c.SlackChannel,
		APIURL:     c.SlackAPIURL,
		Notify:     c.SlackNotify,
	}
}

// Tolerance is the run's tolerance and failure thresholds.
func (c Config) Tolerance() reconcile.Tolerance {
	return reconcile.Tolerance{Abs: c.ToleranceAbs, Pct: c.TolerancePct, FailAbs: c.FailAbs, FailPct: c.FailPct}
}

// FailOnSeverity is --fail-on (RECON_FAIL_ON) as a severity, "" for none.
func (c Config) FailOnSeverity() reconcile.Severity {
	if c.FailOn == "none" {
		return ""
	}
	return reconcile.Severity(c.FailOn)
}

// ValidateRepair checks what repair needs beyond what run does, and
// returns the custom insert statement (REPAIR_INSERT_FILE), if any, and
// STORE_WRITE_DSN parsed (zero when unset).
func (c Config) ValidateRepair() (insert string, storeWrite dsn.Target, err error) {
	switch {
	case c.StoreQueryFile != "":
		return "", dsn.Target{}, errors.New("repair reads the events schema (table clicks: ts, link_id, country_code) and cannot use STORE_QUERY_FILE: unset it (REPAIR_INSERT_FILE may give an insert for a table with more columns)")
	case c.StorePreset == store.PresetDaily:
		return "", dsn.Target{}, errors.New("repair needs each click's time, and the daily preset has a counter per link and day: it cannot be repaired click by click (docs/repair.md says how to raise its counters from Elido's per-link breakdown instead)")
	case c.Apply && !c.isSet("STORE_WRITE_DSN", c.StoreWriteDSN):
		return "", dsn.Target{}, errors.New("--apply needs STORE_WRITE_DSN (or STORE_WRITE_DSN_FILE): a role that may insert into the click store; STORE_DSN stays read-only")
	case strings.Contains(c.ReportDir, "://"):
		return "", dsn.Target{}, fmt.Errorf("repair writes its files to a local folder: give --report-dir (RECON_REPORT_DIR) as a path, not %s", dsn.Redact(c.ReportDir))
	}
	if c.StoreWriteDSN != "" {
		if storeWrite, err = store.ParseWriteDSN(c.StoreWriteDSN); err != nil {
			return "", dsn.Target{}, err
		}
	}
	if c.RepairInsertFile == "" {
		return "", storeWrite, nil
	}
	b, err := os.ReadFile(c.RepairInsertFile)
	if err != nil {
		return "", dsn.Target{}, fmt.Errorf("REPAIR_INSERT_FILE: %w", err)
	}
	return string(b), storeWrite, nil
}

// ValidateRunRepair checks what run's --repair (RECON_REPAIR) needs, with
// or without --apply, and returns the custom insert statement, if any, and
// STORE_WRITE_DSN parsed (zero when unset).
func (c Config) ValidateRunRepair(mode job.RepairMode) (insert string, storeWrite dsn.Target, err error) {
	if mode == job.RepairOff {
		return "", dsn.Target{}, nil
	}
	c.Apply = mode == job.RepairApply
	insert, storeWrite, err = c.ValidateRepair()
	if err != nil {
		return "", dsn.Target{}, fmt.Errorf("--repair: %w", err)
	}
	return insert, storeWrite, nil
}

// RunRepair is run's repair mode, from --repair and --apply
// (RECON_REPAIR, REPAIR_APPLY; job.ParseRepairMode).
func (c Config) RunRepair() (mode job.RepairMode, warning string, err error) {
	return job.ParseRepairMode(c.Repair, c.RepairFlagSet, c.Apply)
}
