// Package check probes every dependency a configuration names, without
// reading or writing the user's data: the click store and its query, the
// store's writer role and its grants, the run history and its migrations,
// the report destination, Slack, Elido and the monitoring endpoints. Each
// probe is the cheapest question that tells whether a run would get
// through (a statement prepared, never run; a marker of clickrecon's own
// written and removed; auth.test; one summary of one day), and says, when
// it fails, what to change. clickrecon check prints the lines; clickrecon
// run asks the same questions of its store, history and report
// destination before its first request to Elido.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/monitor"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Timeout bounds each probe: one that has not answered by then is told as
// unreachable.
const Timeout = 30 * time.Second

// Spec is what a validated configuration names. A zero field names
// nothing, and its dependency is not probed.
type Spec struct {
	// Offline probes nothing over the network: only the configuration
	// (already validated by the caller), the secret files it read and a
	// report folder on a local or mounted volume.
	Offline bool

	Store        dsn.Target // STORE_DSN
	StoreOptions store.Options
	Query        store.Query
	QueryFile    string          // STORE_QUERY_FILE, "" for a preset: names what to fix
	Day          reconcile.Date  // a day of the window, to bind the query's parameters
	Loc          *time.Location  // RECON_TZ
	StoreWrite   dsn.Target      // STORE_WRITE_DSN
	RepairInsert string          // the text of REPAIR_INSERT_FILE; "": the events schema's
	History      dsn.Target      // HISTORY_DSN
	HistoryGone  error           // HISTORY_DSN names a SQLite file that does not exist
	Reports      *storage.Dest   // RECON_REPORT_DIR, opened
	ReportDir    string          // RECON_REPORT_DIR as given, for the lines
	Slack        *alert.Notifier // nil: no Slack
	Elido        *elido.Client   // nil: Elido is not probed (offline)
	Workspace    string          // ELIDO_WORKSPACE_ID
	Push         *monitor.Pushgateway
	Health       *monitor.Healthcheck
}

// Line is one dependency's answer: ok (Err nil, Note what was reached), or
// what failed and what to change. Retry says a retry may mend it (the
// dependency could not be reached); otherwise only the configuration can.
// Skipped says why it was not probed.
type Line struct {
	Name    string
	Note    string
	Err     error
	Retry   bool
	Skipped bool
	// Assumed are what the dependency's answers rest on that cannot be
	// checked (store.Assumption): said, each on a line of its own, and
	// not a failure.
	Assumed []string
}

// Run probes every dependency s names, in the order a run meets them.
func Run(ctx context.Context, s Spec) []Line {
	var lines []Line
	add := func(name, note string, err error, retry bool) {
		lines = append(lines, Line{Name: name, Note: note, Err: err, Retry: err != nil && retry})
	}
	skip := func(name, why string) {
		lines = append(lines, Line{Name: name, Note: why, Skipped: true})
	}
	lines = append(lines, Line{Name: "configuration", Note: "every variable read and valid"})
	net := !s.Offline
	switch {
	case s.Store.IsZero():
	case !net && s.Store.Dialect != dsn.SQLite:
		skip("store", "not probed without the network: "+s.Store.Redacted)
	default:
		assumed, err, retry := storeProbe(ctx, s)
		add("store", s.Store.Redacted+", "+queryName(s), err, retry)
		for _, a := range assumed {
			lines[len(lines)-1].Assumed = append(lines[len(lines)-1].Assumed, a.Message)
		}
	}
	switch {
	case s.StoreWrite.IsZero():
	case !net && s.StoreWrite.Dialect != dsn.SQLite:
		skip("store writer", "not probed without the network: "+s.StoreWrite.Redacted)
	default:
		err, retry := writer(ctx, s)
		add("store writer", s.StoreWrite.Redacted+": may lock and insert", err, retry)
	}
	switch {
	case s.HistoryGone != nil:
		add("history", "", fmt.Errorf("HISTORY_DSN: %w", s.HistoryGone), false)
	case s.History.IsZero():
	case !net && s.History.Dialect != dsn.SQLite:
		skip("history", "not probed without the network: "+s.History.Redacted)
	default:
		err, retry := History(ctx, s.History)
		add("history", s.History.Redacted+": migrated", err, retry)
	}
	if s.Reports != nil {
		if !net && strings.Contains(s.ReportDir, "://") && !strings.HasPrefix(s.ReportDir, "file://") {
			skip("reports", "not probed without the network: "+s.Reports.Location(""))
		} else {
			err, retry := Reports(ctx, s.Reports)
			add("reports", strings.TrimSuffix(s.Reports.Location(""), "/")+": a marker written and removed", err, retry)
		}
	}
	if s.Slack != nil {
		switch {
		case !net:
			skip("slack", "not probed without the network")
		default:
			err := s.Slack.Check(ctx)
			switch {
			case errors.Is(err, alert.ErrNotTestable):
				skip("slack", "webhook: "+err.Error())
			default:
				add("slack", "the bot token is valid and may read SLACK_CHANNEL", err, !errors.Is(err, alert.ErrMisconfigured))
			}
		}
	}
	switch {
	case s.Elido != nil:
		err, retry := Elido(ctx, s.Elido, s.Day, s.Loc)
		add("elido", "the key reads workspace "+s.Workspace, err, retry)
	case !net:
		skip("elido", "not probed without the network")
	}
	if s.Push != nil {
		if net {
			err := s.Push.Check(ctx)
			add("pushgateway", s.Push.String()+" is up (nothing pushed)", err, !errors.Is(err, monitor.ErrRefused))
		} else {
			skip("pushgateway", "not probed without the network")
		}
	}
	if s.Health != nil {
		if net {
			err := s.Health.Check(ctx)
			add("healthcheck", s.Health.String()+" reached (not pinged: a ping would count as a run)", err, true)
		} else {
			skip("healthcheck", "not probed without the network")
		}
	}
	return lines
}

func queryName(s Spec) string {
	if s.QueryFile != "" {
		return "the query of STORE_QUERY_FILE"
	}
	return "preset " + s.Query.Name()
}

// Exit is the exit code of the lines (docs/contract.md): 2 when one needs
// the configuration changed, else 3 when one could not be reached, else 0.
func Exit(lines []Line) int {
	code := 0
	for _, l := range lines {
		switch {
		case l.Err != nil && !l.Retry:
			return 2
		case l.Err != nil:
			code = 3
		}
	}
	return code
}

// Write prints one line per dependency: its name, then ok and what was
// reached, "not checked" and why, or FAILED and what to change.
func Write(w io.Writer, lines []Line) {
	for _, l := range lines {
		switch {
		case l.Err != nil && l.Retry:
			fmt.Fprintf(w, "%-14s UNREACHABLE: %v (a retry may pass)\n", l.Name, l.Err)
		case l.Err != nil:
			fmt.Fprintf(w, "%-14s FAILED: %v\n", l.Name, l.Err)
		case l.Skipped:
			fmt.Fprintf(w, "%-14s not checked: %s\n", l.Name, l.Note)
		default:
			fmt.Fprintf(w, "%-14s ok: %s\n", l.Name, l.Note)
		}
		for _, a := range l.Assumed {
			fmt.Fprintf(w, "%-14s ASSUMED: %s\n", "", a)
		}
	}
}

// Store prepares, never runs, every statement a run would use on the
// store (store.Probe). When only the configuration can mend what failed,
// the error names what to fix and retry is false.
func Store(ctx context.Context, s Spec) (err error, retry bool) {
	_, err, retry = storeProbe(ctx, s)
	return err, retry
}

// storeProbe is Store, and returns too what the store's counts rest on
// that cannot be checked (store.ProbeAssumed).
func storeProbe(ctx context.Context, s Spec) (assumed []store.Assumption, err error, retry bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	assumed, err = store.ProbeAssumed(ctx, s.Store, s.StoreOptions, s.Query, s.Day, s.Loc)
	switch {
	case err == nil:
		return assumed, nil, false
	case errors.Is(err, store.ErrBadQuery):
		return nil, BadQuery(s.QueryFile, s.Query, err), false
	case errors.Is(err, store.ErrRefused):
		return nil, fmt.Errorf("STORE_DSN: %w", err), false
	}
	return nil, fmt.Errorf("STORE_DSN: %w", err), true
}

// BadQuery says which variable to fix when the store query does not fit
// the database.
func BadQuery(queryFile string, q store.Query, err error) error {
	if queryFile != "" {
		return fmt.Errorf("STORE_QUERY_FILE %s (or STORE_TOTAL_QUERY_FILE) does not fit the database at STORE_DSN: %w", queryFile, err)
	}
	return fmt.Errorf("STORE_PRESET=%s does not fit the database at STORE_DSN (events reads table clicks, one row per click; daily reads table click_counts, a counter per link and day; "+
		"or write a query for your own schema in STORE_QUERY_FILE): %w", q.Name(), err)
}

// writer opens STORE_WRITE_DSN as repair would, which checks its grants
// (store.OpenWriter), and checks that it writes into the store STORE_DSN
// reads. Nothing is inserted.
func writer(ctx context.Context, s Spec) (error, bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	w, err := store.OpenWriter(ctx, s.StoreWrite, s.RepairInsert, s.StoreOptions)
	if err != nil {
		return err, !errors.Is(err, store.ErrRefused)
	}
	defer w.Close()
	if s.Store.IsZero() {
		return nil, false
	}
	st, err := store.Open(ctx, s.Store, s.StoreOptions)
	if err != nil {
		return nil, false // the store's own line tells it
	}
	defer st.Close()
	if err := w.CheckTarget(ctx, st); err != nil {
		return err, !errors.Is(err, store.ErrRefused)
	}
	return nil, false
}

// History opens the run history, which checks that it is migrated. When
// only the configuration can mend what failed (the file or database does
// not exist, the role is refused, clickrecon migrate was not run), retry
// is false.
func History(ctx context.Context, t dsn.Target) (err error, retry bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	h, err := history.Open(ctx, t)
	if err == nil {
		h.Close()
		return nil, false
	}
	err = fmt.Errorf("HISTORY_DSN: %w", err)
	return err, !(errors.Is(err, history.ErrNotMigrated) || errors.Is(err, iofs.ErrNotExist) || dsn.Refused(err))
}

// Reports writes and removes a marker of clickrecon's own at the report
// destination (storage.Dest.Probe).
func Reports(ctx context.Context, d *storage.Dest) (err error, retry bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := d.Probe(ctx); err != nil {
		return fmt.Errorf("--report-dir (RECON_REPORT_DIR) cannot be written: %w: give a folder the run may write (a writable volume) or a bucket the credentials may write to", err),
			!errors.Is(err, storage.ErrUnwritable)
	}
	return nil, false
}

// Elido asks for the summary of one day: one request, which tells a key
// revoked or lacking its scope and a workspace that does not exist.
func Elido(ctx context.Context, c *elido.Client, day reconcile.Date, loc *time.Location) (err error, retry bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	_, err = c.Summary(ctx, day, day, loc)
	if err == nil {
		return nil, false
	}
	// The client's errors say what to check (the key, the workspace, the
	// base URL).
	return err, !elido.NeedsFixing(err) && !errors.Is(err, safehttp.ErrRedirect)
}
