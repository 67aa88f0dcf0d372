package dbtest

import (
	"testing"

	"github.com/jmoiron/sqlx"
)

// Server is what a real-server helper (pgtest, mysqltest) tells Fresh:
// how to reach its server and how a test's own schema or database is
// made, dropped and opened.
type Server struct {
	Helper string // the calling package, for messages: "pgtest"
	Kind   string // the kind of server: "PostgreSQL", "MySQL"
	EnvVar string // the variable that points the tests at another server
	Where  string // the server's DSN, its password redacted
	What   string // what a test gets: "schema" or "database"
	Prefix string // the start of its name (Name)
	// Admin connects to the server itself.
	Admin func() (*sqlx.DB, error)
	// Create and Drop are the statements that make and remove the
	// namespace called name, with its name quoted.
	Create, Drop func(name string) string
	// Open returns a handle whose connections use the namespace called
	// name, and the DSN that opens it; its error says what failed.
	Open func(name string) (*sqlx.DB, string, error)
}

// Fresh creates a fresh, uniquely named schema or database for t on s and
// returns a handle on it and its DSN. The handle is closed and the
// namespace dropped when t ends. A server that does not answer ends t as
// Unavailable says.
func Fresh(t testing.TB, s Server) (*sqlx.DB, string) {
	t.Helper()
	admin, err := s.Admin()
	if err != nil {
		Unavailable(t, s.Helper, s.Kind, s.EnvVar, s.Where, err)
		return nil, "" // only reached when t's Skipf or Fatalf returns
	}
	name := Name(s.Prefix, t.Name())
	if _, err := admin.Exec(s.Create(name)); err != nil {
		admin.Close()
		t.Fatalf("%s: create %s %s: %v", s.Helper, s.What, name, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(s.Drop(name)); err != nil {
			t.Errorf("%s: drop %s %s: %v", s.Helper, s.What, name, err)
		}
	})
	db, dsn, err := s.Open(name)
	if err != nil {
		t.Fatalf("%s: %v", s.Helper, err)
	}
	t.Cleanup(func() { db.Close() }) // runs before the namespace is dropped
	return db, dsn
}
