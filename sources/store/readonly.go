package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// ErrReadOnly marks a STORE_WRITE_DSN whose server or session refuses
// writes: a replica or standby, or a role whose sessions are read-only.
// Repair refuses it before anything is written, whatever the role's
// privileges (a MariaDB role with READ_ONLY ADMIN, or a MySQL one with
// SUPER, would write into a read_only replica, which then differs from its
// primary). errors.Is(err, ErrRefused) holds too: a rerun cannot mend it.
var ErrReadOnly = errors.New("STORE_WRITE_DSN names a server or session that is read-only: repair writes only into the primary, through a session that may write")

// checkWritable refuses, before anything is written, a store the Writer's
// server or session keeps read-only (pgReadOnly, mysqlReadOnly).
func (w *Writer) checkWritable(ctx context.Context) error {
	switch w.dialect {
	case dsn.Postgres:
		var recovery bool
		var tx, def string
		if err := w.db.QueryRowContext(ctx, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only'), current_setting('default_transaction_read_only')").Scan(&recovery, &tx, &def); err != nil {
			return fmt.Errorf("read whether the server may be written: %w", classifyWrite(err))
		}
		return pgReadOnly(recovery, tx, def)
	case dsn.MySQL:
		rows, err := w.db.QueryContext(ctx, mysqlReadOnlySQL)
		if err != nil {
			return fmt.Errorf("read whether the server may be written: %w", classifyWrite(err))
		}
		defer rows.Close()
		vars := map[string]string{}
		for rows.Next() {
			var name, value string
			if err := rows.Scan(&name, &value); err != nil {
				return fmt.Errorf("read whether the server may be written: %w", err)
			}
			vars[strings.ToLower(name)] = value
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read whether the server may be written: %w", classifyWrite(err))
		}
		return mysqlReadOnly(vars)
	}
	return nil // SQLite: the file's permissions, which the first write meets (classifyWrite)
}

// mysqlReadOnlySQL reads the variables that make a MySQL or MariaDB
// server or session refuse writes; a server lacks those it does not have
// (super_read_only is MySQL's), and a session sees its own
// transaction_read_only (tx_read_only before MySQL 8 and MariaDB 11.1).
const mysqlReadOnlySQL = "SHOW VARIABLES WHERE Variable_name IN ('read_only', 'super_read_only', 'innodb_read_only', 'transaction_read_only', 'tx_read_only')"

// pgReadOnly says why a PostgreSQL session cannot write, or nil: the
// server is a hot standby (pg_is_in_recovery()), or the session's
// transactions are read-only (transaction_read_only,
// default_transaction_read_only, set for the role, the database or the
// server, or in the DSN's options).
func pgReadOnly(recovery bool, txReadOnly, defaultReadOnly string) error {
	switch {
	case recovery:
		return configError{fmt.Errorf("%w: it is a PostgreSQL hot standby (pg_is_in_recovery() is true), which refuses every write; point STORE_WRITE_DSN at the primary", ErrReadOnly)}
	case on(defaultReadOnly):
		return configError{fmt.Errorf("%w: its sessions are read-only (default_transaction_read_only = on, set for its role, database or server, or in the DSN): give STORE_WRITE_DSN a role whose sessions may write", ErrReadOnly)}
	case on(txReadOnly):
		return configError{fmt.Errorf("%w: its session is read-only (transaction_read_only = on): give STORE_WRITE_DSN a role whose sessions may write", ErrReadOnly)}
	}
	return nil
}

// mysqlReadOnly says why a MySQL or MariaDB server or session cannot be
// written, or nil, from its variables (names in lower case): whatever the
// role's privileges, a read_only server is a replica (or one kept from
// writes on purpose), and repair does not write into it.
func mysqlReadOnly(vars map[string]string) error {
	var why []string
	for _, name := range []string{"read_only", "super_read_only", "innodb_read_only", "transaction_read_only", "tx_read_only"} {
		if v, ok := vars[name]; ok && !off(v) {
			why = append(why, "@@"+name+" is "+strings.ToUpper(v))
		}
	}
	if len(why) == 0 {
		return nil
	}
	return configError{fmt.Errorf("%w: %s (a replica, or a server or session kept from writes); repair does not write there even when the role may (READ_ONLY ADMIN, SUPER): point STORE_WRITE_DSN at the primary", ErrReadOnly, strings.Join(why, ", "))}
}

// off reads a MySQL variable that is off: any other value of read_only
// (ON, or MariaDB 11's NO_LOCK and NO_LOCK_NO_ADMIN) keeps writes out.
func off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0", "false", "no", "":
		return true
	}
	return false
}

// on reads a boolean server variable as PostgreSQL shows it.
func on(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "1", "true", "yes":
		return true
	}
	return false
}
