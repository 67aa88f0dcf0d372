package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/internal/flaghelp"
)

// flagSets declare each command's flags, by name (check takes run's and
// one of its own). Each flag's default is the value its variable already
// set, so a flag wins over the variable. A FlagSet's Usage prints the
// command's help on out.
var flagSets = map[string]func(c *config.Config, out io.Writer) *flag.FlagSet{
	"run": runFlags, "check": checkFlags, "repair": repairFlags, "demo": demoFlags,
	"merge": mergeFlags, "serve": serveFlags, "migrate": migrateFlags, "trend": trendFlags,
}

// newFlags is an empty FlagSet of command name, whose errors parseArgs
// reports and whose help its Usage prints.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("clickrecon "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// The usage of the output flags of run, demo and merge (repair has its own).
const (
	reportDirUsage = "folder or object-storage URL (s3://, file://; gs://, azblob:// in a build with -tags gcs, azblob) for the reports; each run writes DIR/<run_key>/ (RECON_REPORT_DIR)"
	formatUsage    = "what goes to stdout: text or json (RECON_FORMAT)"
	failOnUsage    = "exit 1 when a settled gap is at least this severe: none, warn or fail (RECON_FAIL_ON)"
	applyUsage     = "insert the planned clicks through STORE_WRITE_DSN, one transaction per day (REPAIR_APPLY)"
)

// outputFlags declares --report-dir, --format and --fail-on, with their
// usage.
func outputFlags(fs *flag.FlagSet, c *config.Config, reportDir, format, failOn string) {
	fs.StringVar(&c.ReportDir, "report-dir", c.ReportDir, reportDir)
	fs.StringVar(&c.Format, "format", c.Format, format)
	fs.StringVar(&c.FailOn, "fail-on", c.FailOn, failOn)
}

// tzFlag declares --tz.
func tzFlag(fs *flag.FlagSet, c *config.Config) {
	fs.StringVar(&c.TZ, "tz", c.TZ, "IANA time zone of the calendar days (RECON_TZ)")
}

// windowFlags declares --date, --from and --to.
func windowFlags(fs *flag.FlagSet, c *config.Config) {
	fs.StringVar(&c.Date, "date", c.Date, "reconcile one day, YYYY-MM-DD (RECON_DATE)")
	fs.StringVar(&c.From, "from", c.From, "first day of an inclusive range, YYYY-MM-DD (RECON_FROM)")
	fs.StringVar(&c.To, "to", c.To, "last day of an inclusive range, YYYY-MM-DD (RECON_TO)")
}

// varsNote is how a help says that each flag has a variable.
const varsNote = " (each also set by the variable named in brackets; a flag wins)"

// usageOf is the help of command name: its usage line (with operands),
// its flags, and after them tail.
func usageOf(out io.Writer, fs *flag.FlagSet, name, operands, note string, vars bool, tail string) func() {
	return func() {
		fmt.Fprintf(out, "Usage: clickrecon %s [flags]%s\n\nFlags%s:\n", name, operands, note)
		flaghelp.Print(out, fs, vars)
		fmt.Fprint(out, tail)
	}
}

func runFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("run")
	outputFlags(fs, c, reportDirUsage, formatUsage, failOnUsage)
	tzFlag(fs, c)
	fs.BoolVar(&c.Apply, "apply", c.Apply, "with --repair: "+applyUsage)
	windowFlags(fs, c)
	fs.BoolVar(&c.DryRun, "dry-run", c.DryRun, "post nothing and write no history; the report is still written (RECON_DRY_RUN)")
	fs.StringVar(&c.Drilldown, "drilldown", c.Drilldown, "drill into days that differ: auto or off (RECON_DRILLDOWN)")
	fs.StringVar(&c.Shard, "shard", c.Shard, "reconcile only the I-th (0-based) of N contiguous slices of the window, as I/N (RECON_SHARD)")
	fs.Var(repairFlag{&c.Repair, &c.RepairFlagSet}, "repair", "plan the repair of the settled missing days found and write its files; with --apply, also insert the clicks (RECON_REPAIR)")
	fs.StringVar(&c.FleetName, "workspace", "", "run the workspace of this name in the fleet file RECON_FLEET_FILE: its variables over the shared ones; either flag replaces both variables (RECON_WORKSPACE)")
	fs.StringVar(&c.FleetIndex, "workspace-index", "", "run the I-th (0-based) workspace of RECON_FLEET_FILE, as an Indexed Job's $(JOB_COMPLETION_INDEX) (RECON_WORKSPACE_INDEX)")
	fs.Usage = usageOf(out, fs, "run", "", varsNote, true, runVariables)
	return fs
}

// checkFlags are run's flags, to check what that run would meet, and
// --offline.
func checkFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := runFlags(c, out)
	fs.BoolVar(&c.Offline, "offline", false, "check the configuration and the files it names (secret files, a local report folder) only: nothing over the network")
	fs.Usage = func() {
		fmt.Fprint(out, checkUsage)
		flaghelp.Print(out, fs, true)
		fmt.Fprint(out, runVariables)
	}
	return fs
}

// repairFlags are run's window flags; repair writes a local plan, prints
// text and has exit codes of its own.
func repairFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("repair")
	outputFlags(fs, c, "local folder for the plan: repair writes DIR/repair-<run_key>/ (RECON_REPORT_DIR)",
		"accepted, but repair always prints text (RECON_FORMAT)", "accepted, but repair exits with its own codes (RECON_FAIL_ON)")
	tzFlag(fs, c)
	fs.BoolVar(&c.Apply, "apply", c.Apply, applyUsage)
	windowFlags(fs, c)
	fs.Usage = usageOf(out, fs, "repair", "", varsNote, true, flaghelp.Without(runVariables, notReadByRepair))
	return fs
}

func demoFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("demo")
	outputFlags(fs, c, reportDirUsage, formatUsage, failOnUsage)
	tzFlag(fs, c)
	fs.BoolVar(&c.Serve, "serve", false, "serve the simulated Elido API on 127.0.0.1 until SIGINT or SIGTERM, and print the variables that point clickrecon run at it")
	fs.IntVar(&c.Port, "port", 0, "with --serve: the port to listen on (0: a free one)")
	fs.StringVar(&c.ClicksFile, "clicks", "", "with --serve: a CSV file of the clicks Elido counts, with the header "+demo.ClicksHeader+" (ts RFC 3339; UTC without an offset); default: the demo's own")
	fs.Usage = usageOf(out, fs, "demo", "", " (the demo reads no variable but LOG_LEVEL and LOG_FORMAT)", false, "")
	return fs
}

func mergeFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("merge")
	outputFlags(fs, c, reportDirUsage, formatUsage, failOnUsage)
	fs.Usage = usageOf(out, fs, "merge", " REPORT...", varsNote, true, "")
	return fs
}

func serveFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("serve")
	fs.StringVar(&c.ReportDir, "report-dir", c.ReportDir, "folder or object-storage URL (s3://, file://; gs://, azblob:// in a build with -tags gcs, azblob) the runs write their reports to; serve only reads it (RECON_REPORT_DIR)")
	fs.StringVar(&c.Addr, "addr", serveAddr, "HOST:PORT to listen on; the default is reached only from this machine or pod (kubectl port-forward)")
	fs.Usage = func() {
		fmt.Fprint(out, "Usage: clickrecon serve [flags]\n\nA read-only web server over the reports: / lists the runs, newest first,\nand links each run's report.html; /trend puts the nights side by side (from\nthe run history when HISTORY_DSN is set). It never writes or deletes.\n\nFlags (each also set by the variable named in brackets; a flag wins):\n")
		flaghelp.Print(out, fs, true)
	}
	return fs
}

func trendFlags(c *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("trend")
	fs.StringVar(&c.ReportDir, "report-dir", c.ReportDir, "folder or object-storage URL the runs write their reports to; trend only reads it (RECON_REPORT_DIR)")
	fs.StringVar(&c.Format, "format", c.Format, "what goes to stdout: text, json or csv (RECON_FORMAT)")
	tzFlag(fs, c)
	fs.StringVar(&c.From, "from", c.From, "first day of the range, YYYY-MM-DD (RECON_FROM)")
	fs.StringVar(&c.To, "to", c.To, "last day of the range, YYYY-MM-DD; default yesterday in RECON_TZ (RECON_TO)")
	fs.IntVar(&c.Nights, "nights", 90, "without --from: the range is this many days, ending at --to")
	fs.StringVar(&c.Workspace, "workspace", c.WorkspaceID, "the workspace whose runs to read (with RECON_FLEET_FILE, an entry's name too); empty: every workspace in the reports (ELIDO_WORKSPACE_ID)")
	fs.StringVar(&c.By, "by", "week", "the periods of the text and the CSV: day, week or month")
	fs.Usage = usageOf(out, fs, "trend", "", varsNote, true, trendTail)
	return fs
}

// trendTail is what trend's help says after its flags.
const trendTail = `
Each calendar day of the range is counted once, by its latest verdict: the
latest run that compared it (match, missing or surplus), or, when none did,
the latest that held it (provisional, unverifiable). A day no report holds
is "unchecked". Weeks are ISO weeks (Monday to Sunday).
`

// migrateFlags has no flag: only its help.
func migrateFlags(_ *config.Config, out io.Writer) *flag.FlagSet {
	fs := newFlags("migrate")
	fs.Usage = func() { fmt.Fprint(out, migrateUsage) }
	return fs
}

// notReadByRepair are the variables of run's help that repair does not
// read (its help leaves them out): it posts nothing, pushes nothing and
// compares nothing but whole hours.
var notReadByRepair = []string{"SLACK_", "PUSHGATEWAY_URL", "HEALTHCHECK_URL", "RECON_TOLERANCE_", "RECON_FAIL_",
	"RECON_DRILLDOWN_", "RECON_REPORT_URL", "RECON_REPORT_KEEP_DAYS", "STORE_QUERY_FILE", "STORE_TOTAL_QUERY_FILE"}
