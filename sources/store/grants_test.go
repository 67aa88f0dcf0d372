package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A serial id makes every insert draw from its sequence: a STORE_WRITE_DSN
// role with every table privilege but no USAGE on it is refused when the
// writer opens, the sequence named, instead of failing at the first
// insert with a message that names the table's grants.
func TestPostgresWriterNeedsTheSerialSequence(t *testing.T) {
	db, dsn := newPostgres("")(t)
	db.MustExec("ALTER TABLE clicks ADD COLUMN id bigserial")
	_, err := OpenWriter(t.Context(), storeWriteDSN(t, role(t, db, dsn, "SELECT, INSERT, UPDATE")), "", Options{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("OpenWriter: %v; want refused", err)
	}
	errorContains(t, err, "STORE_WRITE_DSN", "GRANT USAGE ON SEQUENCE clicks_id_seq")
	if strings.Contains(err.Error(), "GRANT SELECT") || strings.Contains(err.Error(), "GRANT UPDATE") {
		t.Errorf("err = %v; names a grant the role holds", err)
	}

	enough := role(t, db, dsn, "SELECT, INSERT, UPDATE")
	name := strings.SplitN(strings.TrimPrefix(enough, "postgres://"), ":", 2)[0]
	db.MustExec("GRANT USAGE ON SEQUENCE clicks_id_seq TO " + name)
	w := openWriter(t, enough, Options{})
	got, err := w.Insert(t.Context(), nil, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{TS: repairHour, LinkID: "lnk_a", CountryCode: "PL"}}}}, nil)
	if err != nil || got.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v", got, err)
	}
}
