// Package history keeps clickrecon's memory between runs in HISTORY_DSN, a
// PostgreSQL (postgres://…) or SQLite (sqlite:PATH) database of the job's
// own: every run with its window, status and per-day results, the Slack
// messages sent, and what was last alerted for each day, which is what lets
// a later run stay quiet about a gap already reported, edit an alert whose
// numbers changed and report a gap that healed.
//
// Every Slack post, whatever its kind (an alert, an update, a heal, a
// notice, a reminder, a recovery), is recorded as intended (Intend) before
// it is made and settled after with the outcome Slack gave: accepted
// (MarkPosted), answer lost and unreadable (MarkUnconfirmed) or refused
// (Abandon), what it told recorded in the same transaction; a post whose
// answer never came is settled by the next run (Pending) instead of being
// repeated.
//
// Migrate creates and upgrades the tables from the numbered files of
// sql/history (embedded in the binary); Open refuses a database that was
// not migrated. Errors never contain the DSN's password, and the package
// logs nothing.
package history

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// History is an open connection pool to a migrated history database. It is
// safe for concurrent use.
type History struct {
	db      *sqlx.DB
	dialect dsn.Dialect
	q       queries
	// now is the clock every time the history records is read from
	// (WithClock): the run's, not the database server's.
	now func() time.Time
}

// An Option changes how Open's history behaves.
type Option func(*History)

// WithClock makes now the clock of every time the history records: when
// a run was recorded, a post intended, sent and settled, a day alerted and
// told healed. Without it, the wall clock. The run passes its own, so
// that these times and the report's agree (and a simulated night's are
// virtual).
func WithClock(now func() time.Time) Option {
	return func(h *History) { h.now = now }
}

// stamp is the time to record now, as the history writes instants.
func (h *History) stamp() string { return h.now().UTC().Format(instant) }

//go:embed queries
var queryFiles embed.FS

// queries holds the SQL of one dialect, one statement per file: of
// queries/<dialect>/ where the dialects' texts differ, else of
// queries/shared/, written once with PostgreSQL's $1 placeholders, which
// SQLite reads as ?1 (sharedFor).
type queries struct {
	migrateLock       string // PostgreSQL only
	migrationsTable   string
	migrationsExist   string
	migrationsApplied string
	migrationRecord   string
	insertRun         string
	insertRunDay      string
	latestAPI         string
	alertsInWindow    string
	openAlerts        string
	alertsOfMessage   string
	upsertAlert       string
	insertMessage     string
	insertIntent      string
	intent            string
	pendingIntents    string
	resolveIntent     string
	markSent          string
	rememberStoreID   string
	knownStoreID      string
	storeRows         string
	adoptAlerts       string
	adoptOutbox       string
	notice            string
	saveNotice        string
	resolveNotice     string
	otherZone         string
	insertRunDiag     string
	trendDays         string
	trendDiagnoses    string
	trendStores       string
	trendAlerts       string
}

func loadQueries(d dsn.Dialect) (queries, error) {
	var q queries
	files := map[string]*string{
		"migrations_table":     &q.migrationsTable,
		"migrations_exist":     &q.migrationsExist,
		"migrations_applied":   &q.migrationsApplied,
		"migration_record":     &q.migrationRecord,
		"insert_run":           &q.insertRun,
		"insert_run_day":       &q.insertRunDay,
		"latest_api":           &q.latestAPI,
		"alerts_in_window":     &q.alertsInWindow,
		"open_alerts":          &q.openAlerts,
		"alerts_of_message":    &q.alertsOfMessage,
		"upsert_alert":         &q.upsertAlert,
		"insert_message":       &q.insertMessage,
		"insert_intent":        &q.insertIntent,
		"intent":               &q.intent,
		"pending_intents":      &q.pendingIntents,
		"resolve_intent":       &q.resolveIntent,
		"mark_sent":            &q.markSent,
		"remember_store_id":    &q.rememberStoreID,
		"known_store_id":       &q.knownStoreID,
		"store_rows":           &q.storeRows,
		"adopt_alerts":         &q.adoptAlerts,
		"adopt_outbox":         &q.adoptOutbox,
		"notice":               &q.notice,
		"save_notice":          &q.saveNotice,
		"resolve_notice":       &q.resolveNotice,
		"other_zone":           &q.otherZone,
		"insert_run_diagnosis": &q.insertRunDiag,
		"trend_days":           &q.trendDays,
		"trend_diagnoses":      &q.trendDiagnoses,
		"trend_stores":         &q.trendStores,
		"trend_alerts":         &q.trendAlerts,
	}
	if d == dsn.Postgres {
		files["migrate_lock"] = &q.migrateLock
	}
	for name, dst := range files {
		b, err := fs.ReadFile(queryFiles, "queries/"+d.String()+"/"+name+".sql")
		if errors.Is(err, fs.ErrNotExist) {
			if b, err = fs.ReadFile(queryFiles, "queries/shared/"+name+".sql"); err == nil {
				b = sharedFor(d, b)
			}
		}
		if err != nil {
			return queries{}, fmt.Errorf("load query %s: %w", name, err)
		}
		*dst = string(b)
	}
	return q, nil
}

// placeholder is a positional parameter as PostgreSQL writes it: $1.
var placeholder = regexp.MustCompile(`\$([0-9]+)`)

// sharedFor returns a statement of queries/shared/ for dialect d: as it
// is for PostgreSQL, with each $N made ?N for SQLite. A shared statement
// holds no other $ (the test checks).
func sharedFor(d dsn.Dialect, text []byte) []byte {
	if d == dsn.SQLite {
		return placeholder.ReplaceAll(text, []byte("?$1"))
	}
	return text
}

// Open connects to the history database at t, a HISTORY_DSN read by
// ParseDSN, and checks that Migrate has brought it up to the version this
// binary needs.
func Open(ctx context.Context, t dsn.Target, opts ...Option) (*History, error) {
	h, err := open(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("open history %s: %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	for _, o := range opts {
		o(h)
	}
	if err := h.checkMigrated(ctx); err != nil {
		h.Close()
		return nil, fmt.Errorf("open history %s: %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	return h, nil
}

// ParseDSN reads HISTORY_DSN for Open: PostgreSQL, or a SQLite file that
// must exist (migrate creates it).
func ParseDSN(rawDSN string) (dsn.Target, error) {
	return dsn.Parse(rawDSN, dsn.Options{Name: "HISTORY_DSN", Mode: dsn.ReadWrite, MissingHint: "run clickrecon migrate to create it"})
}

// ParseMigrateDSN reads HISTORY_DSN for Migrate: PostgreSQL, or a SQLite
// file that is created when it does not exist.
func ParseMigrateDSN(rawDSN string) (dsn.Target, error) {
	return dsn.Parse(rawDSN, dsn.Options{Name: "HISTORY_DSN", Mode: dsn.ReadWriteCreate})
}

func open(ctx context.Context, t dsn.Target) (*History, error) {
	q, err := loadQueries(t.Dialect)
	if err != nil {
		return nil, err
	}
	db, err := t.Open()
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return &History{db: db, dialect: t.Dialect, q: q, now: time.Now}, nil
}

// ErrNotMigrated is returned by Open for a database whose tables are
// missing or older than this binary needs.
var ErrNotMigrated = errors.New("the history tables are missing or out of date: run clickrecon migrate")

func (h *History) checkMigrated(ctx context.Context) error {
	var exists bool
	if err := h.db.GetContext(ctx, &exists, h.q.migrationsExist); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if !exists {
		return ErrNotMigrated
	}
	var applied []string
	if err := h.db.SelectContext(ctx, &applied, h.q.migrationsApplied); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	ms, err := migrations(h.dialect)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, v := range applied {
		have[v] = true
	}
	for _, m := range ms {
		if !have[m.version] {
			return fmt.Errorf("migration %s is not applied: %w", m.version, ErrNotMigrated)
		}
	}
	return nil
}

// Close closes the connection pool.
func (h *History) Close() error { return h.db.Close() }

// inTx runs fn in a transaction and commits it when fn returns nil: the
// rows fn writes are all kept or all dropped.
func (h *History) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := h.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
