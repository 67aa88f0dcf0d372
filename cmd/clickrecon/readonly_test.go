package main

import (
	"net/url"
	"strings"
	"testing"
)

// A STORE_WRITE_DSN whose sessions are read-only (as a standby's, or a
// role's with default_transaction_read_only) exits 2 before any request,
// naming STORE_WRITE_DSN and the setting; nothing is written.
func TestRepairIntoAReadOnlySessionExits2(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, lossAndDuplicate(api))
	u, err := url.Parse(f.env["STORE_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c default_transaction_read_only=on")
	u.RawQuery = q.Encode()
	f.env["STORE_WRITE_DSN"] = u.String()
	r := f.repair("--date", "2026-10-25", "--apply")
	if r.code != exitUsage || !strings.Contains(r.stdout, "STORE_WRITE_DSN") || !strings.Contains(r.stdout, "default_transaction_read_only = on") {
		t.Errorf("exit %d; want 2 naming STORE_WRITE_DSN and the setting\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
}
