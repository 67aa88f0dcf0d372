// Command clickrecon checks, day by day, that a click store recorded every
// click Elido's analytics counted, and says where the gaps are.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"
	_ "time/tzdata" // zones work in a scratch or distroless image

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/monitor"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// Exit codes (docs/contract.md), which a run's Outcome carries.
const (
	exitOK         = job.ExitOK         // the run completed
	exitGaps       = job.ExitGaps       // the run completed and found gaps at or above --fail-on
	exitUsage      = job.ExitUsage      // usage or configuration error: a retry cannot help
	exitIncomplete = job.ExitIncomplete // the run could not complete: a retry may help
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "none"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// clock returns the current time.
type clock func() time.Time

// deps are the parts of the outside world that tests replace: the clock,
// options for the Elido client, the Slack notifier and the healthcheck (a
// sleep that does not wait), and when the drill-down stops (nil: at its
// share of RECON_TIMEOUT).
type deps struct {
	now        clock
	elido      []elido.Option
	alert      []alert.Option
	monitor    []monitor.Option
	drillLimit func(context.Context) (context.Context, context.CancelFunc)
	// workspace is the fleet entry a run or check is of (--workspace,
	// --workspace-index), "" without a fleet: every log line names it.
	workspace string
}

// run is the whole program short of exiting: it takes everything from the
// OS as parameters so that tests drive it directly.
func run(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) int {
	return runWith(ctx, args, env, stdout, stderr, deps{now: time.Now})
}

func runWith(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		if code, ok := fleetRun(ctx, cmdRun, args[1:], env, stdout, stderr, d); ok {
			return code
		}
		if file, _ := env.Lookup(config.FleetFileVar); file != "" && !helpAsked(args[1:]) {
			return usageExit(stderr, fmt.Errorf("%s names a fleet: choose its workspace with --workspace NAME or --workspace-index I (or %s, %s)", config.FleetFileVar, workspaceVar, workspaceIndexVar))
		}
		return cmdRun(ctx, args[1:], env, stdout, stderr, d)
	case "repair":
		return cmdRepair(ctx, args[1:], env, stdout, stderr, d)
	case "demo":
		return cmdDemo(ctx, args[1:], env, stdout, stderr, d)
	case "check":
		if code, ok := fleetRun(ctx, cmdCheck, args[1:], env, stdout, stderr, d); ok {
			return code
		}
		if code, ok := checkFleet(ctx, args[1:], env, stdout, stderr, d); ok {
			return code
		}
		return cmdCheck(ctx, args[1:], env, stdout, stderr, d)
	case "migrate":
		return cmdMigrate(ctx, args[1:], env, stdout, stderr)
	case "merge":
		return cmdMerge(ctx, args[1:], env, stdout, stderr, d)
	case "serve":
		return cmdServe(ctx, args[1:], env, stdout, stderr)
	case "trend":
		return cmdTrend(ctx, args[1:], env, stdout, stderr, d)
	case "version", "--version", "-version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		return cmdHelp(ctx, args[1:], env, stdout, stderr, d)
	default:
		fmt.Fprintf(stderr, "clickrecon: unknown command %q (run 'clickrecon help')\n", args[0])
		return exitUsage
	}
}

// commands are the commands "clickrecon help COMMAND" knows.
var commands = []string{"run", "check", "demo", "repair", "merge", "serve", "trend", "migrate", "version"}

// cmdHelp is "clickrecon help [COMMAND]": the general help, or exactly
// what "clickrecon COMMAND --help" prints (exit 0). An unknown command,
// or more than one, exits 2.
func cmdHelp(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	switch {
	case len(args) == 0 || (len(args) == 1 && slices.Contains([]string{"help", "-h", "-help", "--help"}, args[0])):
		fmt.Fprint(stdout, usage)
		return exitOK
	case len(args) > 1:
		fmt.Fprintf(stderr, "clickrecon help: unexpected argument %q: give one command (run 'clickrecon help')\n", args[1])
		return exitUsage
	case !slices.Contains(commands, args[0]):
		fmt.Fprintf(stderr, "clickrecon help: unknown command %q (run 'clickrecon help')\n", args[0])
		return exitUsage
	}
	return runWith(ctx, []string{args[0], "--help"}, env, stdout, stderr, d)
}

// versionUsage is the help of clickrecon version.
const versionUsage = "Usage: clickrecon version\n\nPrints the version and the commit clickrecon was built from. It takes no\nflag and no operand.\n"

// cmdVersion is "clickrecon version": a flag or an operand is a usage
// error (exit 2, with the usage on stderr), as for every other command;
// -h prints the usage.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, versionUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "clickrecon version: %v\n\n%s", err, versionUsage)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "clickrecon version: unexpected argument %q\n\n%s", fs.Arg(0), versionUsage)
		return exitUsage
	}
	fmt.Fprintf(stdout, "clickrecon %s (commit %s)\n", version, commit)
	return exitOK
}

// The help texts, kept as text files beside the code.
var (
	//go:embed help/usage.txt
	usage string
	//go:embed help/migrate.txt
	migrateUsage string
	//go:embed help/check.txt
	checkUsage string
	//go:embed help/run-variables.txt
	runVariables string
)

// parseArgs loads the environment, then applies the flags over it. It
// returns errFlagHelp after printing the help for -h. An error in the
// environment comes with the config read from the rest of it, so that a
// caller can join it to the errors of its own checks (flagStop). An
// operand ends the command at once, alone (stopError): the config was not
// read as its user meant, and its checks would only add noise.
func parseArgs(ctx context.Context, name string, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) (config.Config, error) {
	c, rest, err := parseArgsWithOperands(ctx, name, args, env, stdout, stderr)
	if !flagStop(err) && len(rest) > 0 {
		return config.Config{}, stopError{unexpectedArg(name, rest)}
	}
	return c, err
}

// stopError is a usage error that ends the command at once, reported by
// usageExit alone: neither the environment's errors nor the command's own
// checks are listed with it.
type stopError struct{ error }

func (e stopError) Unwrap() error { return e.error }

// unexpectedArg refuses the operands of a command that takes flags only.
func unexpectedArg(name string, rest []string) error {
	return fmt.Errorf("unexpected argument %q: clickrecon %s takes flags only (see --help)", rest[0], name)
}

// parseArgsWithOperands is parseArgs for a command that takes operands
// after its flags (merge); it returns them.
func parseArgsWithOperands(ctx context.Context, name string, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) (config.Config, []string, error) {
	// The flags are parsed even when the environment does not load, over
	// what did load (a bad variable keeps its default), so that -h works
	// and a bad flag is reported first; the environment's errors come
	// after, with the config.
	c, envErr := config.Load(ctx, env)
	fs := flagSets[name](&c, stdout)
	help := fs.Usage
	fs.Usage = func() {} // the flag package calls it on every error too
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return config.Config{}, nil, errFlagHelp
		}
		fmt.Fprintf(stderr, "clickrecon %s: %v (run 'clickrecon %s --help')\n", name, err, name)
		return config.Config{}, nil, errFlagReported
	}
	// A window given by flags replaces one given by variables whole:
	// --date over RECON_FROM/RECON_TO, --from/--to over RECON_DATE.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["date"] && !set["from"] && !set["to"] {
		c.From, c.To = "", ""
	}
	if (set["from"] || set["to"]) && !set["date"] {
		c.Date = ""
	}
	return c, fs.Args(), envErr
}

// flagStop reports whether parseArgs's err ends the command at once: help
// was printed, a bad flag was reported, or an operand was given to a
// command that takes none (stopError). Any other error is the
// environment's, to be listed with the command's own checks.
func flagStop(err error) bool {
	var stop stopError
	return errors.Is(err, errFlagHelp) || errors.Is(err, errFlagReported) || errors.As(err, &stop)
}

var (
	errFlagHelp     = errors.New("help requested")
	errFlagReported = errors.New("bad flag, already reported by the flag package")
)

// usageExit reports a usage or configuration error and returns exit 2.
// Several errors (errors.Join) are listed one a line, so that one run
// shows every mistake to fix.
func usageExit(stderr io.Writer, err error) int {
	switch {
	case errors.Is(err, errFlagHelp):
		return exitOK
	case errors.Is(err, errFlagReported):
		return exitUsage
	}
	errs := flatten(err)
	if len(errs) == 1 {
		fmt.Fprintf(stderr, "clickrecon: %v\n", errs[0])
		return exitUsage
	}
	fmt.Fprintf(stderr, "clickrecon: %d configuration errors:\n", len(errs))
	for _, e := range errs {
		fmt.Fprintf(stderr, "  - %v\n", e)
	}
	return exitUsage
}

// flatten returns the errors errors.Join put together, nested or not, in
// order; any other error is one.
func flatten(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}
