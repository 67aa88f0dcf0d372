package history

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon"
	"github.com/clickrecon/clickrecon/internal/dsn"
)

// migrateLockKey is the PostgreSQL advisory lock that serialises Migrate
// calls on one database: "clkrecon" in ASCII.
const migrateLockKey int64 = 0x636c6b7265636f6e

// migration is one numbered file of sql/history/<dialect>/.
type migration struct {
	version string // the file name without .sql: 001_history
	sql     string
}

var migrationName = regexp.MustCompile(`^[0-9]{3}_[a-z0-9_]+\.sql$`)

// migrations returns the embedded migrations of d in the order they apply.
func migrations(d dsn.Dialect) ([]migration, error) {
	dir := path.Join("sql", "history", d.String())
	entries, err := fs.ReadDir(clickrecon.SQL, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		if !migrationName.MatchString(e.Name()) {
			return nil, fmt.Errorf("migration %s/%s is not named NNN_name.sql", dir, e.Name())
		}
		b, err := fs.ReadFile(clickrecon.SQL, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: strings.TrimSuffix(e.Name(), ".sql"), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	if len(ms) == 0 {
		return nil, fmt.Errorf("no migrations embedded in %s", dir)
	}
	return ms, nil
}

// Migrate creates or upgrades the history tables at t, a HISTORY_DSN read
// by ParseMigrateDSN, and returns the
// versions it applied, none when the database was up to date. It is
// idempotent and safe to run concurrently: everything happens in one
// transaction, which on PostgreSQL first takes an advisory lock and on
// SQLite the write lock, so a second Migrate waits for the first and then
// finds nothing to do. A SQLite file that does not exist is created.
func Migrate(ctx context.Context, t dsn.Target) (applied []string, err error) {
	h, err := open(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("migrate history %s: %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	defer h.Close()
	applied, err = h.migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate history %s: %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	return applied, nil
}

func (h *History) migrate(ctx context.Context) ([]string, error) {
	ms, err := migrations(h.dialect)
	if err != nil {
		return nil, err
	}
	var applied []string
	err = h.inTx(ctx, func(tx *sqlx.Tx) error {
		if h.dialect == dsn.Postgres {
			if _, err := tx.ExecContext(ctx, h.q.migrateLock, migrateLockKey); err != nil {
				return fmt.Errorf("take the migration lock: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, h.q.migrationsTable); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var done []string
		if err := tx.SelectContext(ctx, &done, h.q.migrationsApplied); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		have := map[string]bool{}
		for _, v := range done {
			have[v] = true
		}
		for _, m := range ms {
			if have[m.version] {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.version, err)
			}
			if _, err := tx.ExecContext(ctx, h.q.migrationRecord, m.version); err != nil {
				return fmt.Errorf("record migration %s: %w", m.version, err)
			}
			applied = append(applied, m.version)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}
