package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// The identity queries: fixed reads of the catalog, kept here rather than
// in queries/ because they are not count queries and nothing in them is
// ever edited.
const (
	// clusterSQL reads the id initdb gave the cluster: the same for every
	// address, user and spelling of the DSN, and kept by a streaming
	// replica. PostgreSQL grants it to PUBLIC; a managed service may not.
	clusterSQL = "SELECT system_identifier::text FROM pg_control_system()"
	// serverSQL stands in when clusterSQL is refused: the address and port
	// the server answered on (the port setting over a Unix socket).
	serverSQL   = "SELECT COALESCE(host(inet_server_addr()), 'local'), current_setting('port')"
	databaseSQL = "SELECT oid::text FROM pg_database WHERE datname = current_database()"
	sqliteSQL   = "SELECT file FROM pragma_database_list WHERE name = 'main'"
)

// Identity returns what the store is, not how its DSN is spelled, so that
// an equivalent DSN (postgresql:// for postgres://, localhost for
// 127.0.0.1, an extra parameter, a relative path) names the same store:
//
//	postgres:cluster=SYSTEM_IDENTIFIER;db=OID  PostgreSQL, from pg_control_system()
//	postgres:server=ADDR:PORT;db=OID            when pg_control_system() is refused
//	sqlite:/resolved/path.db                    SQLite, symbolic links resolved
//	mysql:server_uuid=UUID;db=NAME              MySQL, from @@server_uuid
//	mariadb:host=HOST:PORT;server_id=ID;db=NAME MariaDB (mysqlIdentity)
//
// The second form depends on the address the server was reached at:
// reached another way, the store gets another identity. Combine it with
// the query's name for a store id (report.StoreID).
func (s *Store) Identity(ctx context.Context) (string, error) {
	if s.dialect == dsn.SQLite {
		var file string
		if err := s.db.GetContext(ctx, &file, sqliteSQL); err != nil {
			return "", fmt.Errorf("identify store: %w", err)
		}
		if file == "" {
			return "", errors.New("identify store: the SQLite database has no file")
		}
		if resolved, err := filepath.EvalSymlinks(file); err == nil {
			file = resolved
		}
		return "sqlite:" + file, nil
	}
	if s.dialect == dsn.MySQL {
		return s.mysqlIdentity(ctx)
	}
	var db string
	if err := s.db.GetContext(ctx, &db, databaseSQL); err != nil {
		return "", fmt.Errorf("identify store: read the database's oid: %w", err)
	}
	var cluster string
	err := s.db.GetContext(ctx, &cluster, clusterSQL)
	var pqErr *pq.Error
	switch {
	case err == nil:
		return "postgres:cluster=" + cluster + ";db=" + db, nil
	case errors.As(err, &pqErr) && pqErr.Code == "42501": // insufficient_privilege
		server, err := serverIdentity(ctx, s.db)
		if err != nil {
			return "", fmt.Errorf("identify store: %w", err)
		}
		return "postgres:server=" + server + ";db=" + db, nil
	default:
		return "", fmt.Errorf("identify store: read the cluster's system identifier: %w", err)
	}
}

// serverIdentity is the address and port the server answered on.
func serverIdentity(ctx context.Context, db *sqlx.DB) (string, error) {
	var addr, port string
	if err := db.QueryRowContext(ctx, serverSQL).Scan(&addr, &port); err != nil {
		return "", fmt.Errorf("read the server's address: %w", err)
	}
	return addr + ":" + port, nil
}
