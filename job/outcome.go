package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// Part is a part of a run that can fail: each failure of a run is told
// by the part it happened in, and the exit code and the Slack notice are
// chosen from these values.
type Part int

// The parts of a run.
const (
	PartElido       Part = iota + 1 // Elido's API: a day count or a drill-down read
	PartStore                       // the store: opened or read
	PartIdentity                    // the store's identity: opened, but could not say what it is
	PartHistoryDown                 // the run history could not be opened: nothing remembers
	PartHistory                     // the run history was opened but not read or written
	PartReport                      // the report could not be stored
	PartLock                        // the run lock: not taken, or lost
	PartSlack                       // Slack: a post or an edit
)

var partNames = map[Part]string{
	PartElido: "elido", PartStore: "store", PartIdentity: "store identity", PartHistoryDown: "history down",
	PartHistory: "history", PartReport: "report storage", PartLock: "run lock", PartSlack: "slack",
}

func (p Part) String() string {
	if s, ok := partNames[p]; ok {
		return s
	}
	return fmt.Sprintf("part(%d)", int(p))
}

// Failure is one thing that failed in a run: where, and why.
type Failure struct {
	Part Part
	Err  error
}

// Interruption is why a run stopped before it finished: its deadline
// (RECON_TIMEOUT) or a signal. It unwraps to context.DeadlineExceeded or
// context.Canceled.
type Interruption struct {
	Deadline bool          // the deadline passed; false: SIGTERM or an interrupt
	Timeout  time.Duration // RECON_TIMEOUT, for the message
}

func (i Interruption) Error() string {
	if i.Deadline {
		return fmt.Sprintf("the run's deadline (RECON_TIMEOUT=%s) passed", i.Timeout)
	}
	return "the run was stopped (SIGTERM or interrupt)"
}

func (i Interruption) Unwrap() error {
	if i.Deadline {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// interruption says why the run stopped early, or nil if it did not.
func interruption(ctx context.Context, timeout time.Duration) error {
	if ctx.Err() == nil {
		return nil
	}
	return Interruption{Deadline: errors.Is(context.Cause(ctx), context.DeadlineExceeded), Timeout: timeout}
}

// Outcome is what a run did: the report and where it went, the comparison
// it came from, what failed, what Slack was told, and the exit code it
// comes to (exitCode).
type Outcome struct {
	Report report.Report
	Dir    string // where the report was stored; "" if it was not
	Result reconcile.Result
	// Interrupted is why the run stopped early (an Interruption); nil if
	// it did not.
	Interrupted error
	// Failures are what failed, in the order the run met them.
	Failures []Failure
	// Told is what the end of the run decided Slack hears.
	Told Decision
	// Unread says the run stopped at its probe, before it read anything
	// (Options.Probe): there are no days to alert or record.
	Unread bool
	// Code is the exit code of docs/contract.md the run comes to.
	Code int
}

// Err returns the first failure of part p, or nil.
func (out Outcome) Err(p Part) error {
	for _, f := range out.Failures {
		if f.Part == p {
			return f.Err
		}
	}
	return nil
}

// Failed returns the outcome with err recorded as a failure of part p;
// a nil err changes nothing.
func (out Outcome) Failed(p Part, err error) Outcome {
	if err != nil {
		out.Failures = append(out.Failures, Failure{Part: p, Err: err})
	}
	return out
}

// Finished logs the run's summary line with its exit code.
// Totals that are not known (no day read on both sides) are left out,
// not logged as a 0 a dashboard would sum.
func (out Outcome) Finished(log *slog.Logger, code int, took time.Duration) {
	rep := out.Report
	args := []any{"status", rep.Status, "exit_code", code, "report", out.Dir,
		"days", rep.Coverage.Days, "missing", rep.Coverage.Missing, "surplus", rep.Coverage.Surplus,
		"provisional", rep.Coverage.Provisional, "unverifiable", rep.Coverage.Unverifiable}
	if !rep.Totals.Unknown {
		args = append(args, "api", rep.Totals.API, "local", rep.Totals.Local, "delta", rep.Totals.Delta)
	}
	args = append(args, "requests", rep.Requests, "duration_ms", took.Milliseconds())
	log.Info("run finished", args...)
}
