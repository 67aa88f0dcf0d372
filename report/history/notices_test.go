package history

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A notice is read back as saved; a reminder keeps the failure's first
// post, a resolved notice stays resolved, and a new failure starts over.
func TestNotices(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := migrated(t, dsn)
		ws, st := "notices-"+t.Name(), "st_a"
		if _, ok, err := h.LastNotice(ctx, ws, st); err != nil || ok {
			t.Fatalf("LastNotice before any: ok %v, err %v; want none", ok, err)
		}
		night := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
		save := func(fp, run string, at time.Time) {
			t.Helper()
			if err := h.SaveNotice(ctx, Notice{WorkspaceID: ws, StoreID: st, Fingerprint: fp, Reason: "why " + fp, RunKey: run, LastPosted: at}); err != nil {
				t.Fatal(err)
			}
		}
		last := func() Notice {
			t.Helper()
			n, ok, err := h.LastNotice(ctx, ws, st)
			if err != nil || !ok {
				t.Fatalf("LastNotice: ok %v, err %v", ok, err)
			}
			return n
		}

		save("elido:http_401", "rk1", night)
		want := Notice{WorkspaceID: ws, StoreID: st, Fingerprint: "elido:http_401", Reason: "why elido:http_401", RunKey: "rk1",
			FirstPosted: night, LastPosted: night}
		if diff := cmp.Diff(want, last()); diff != "" {
			t.Errorf("after the first post (-want +got):\n%s", diff)
		}
		if !last().Open() {
			t.Error("a notice just posted is not open")
		}

		week := night.AddDate(0, 0, 7)
		save("elido:http_401", "rk2", week)
		want.RunKey, want.LastPosted = "rk2", week
		if diff := cmp.Diff(want, last()); diff != "" {
			t.Errorf("after a reminder (-want +got):\n%s", diff)
		}

		// Another store of the workspace keeps its own notice.
		if _, ok, _ := h.LastNotice(ctx, ws, "st_b"); ok {
			t.Error("store st_b sees store st_a's notice")
		}

		fixed := week.AddDate(0, 0, 1)
		if err := h.ResolveNotice(ctx, ws, st, "rk3", fixed); err != nil {
			t.Fatal(err)
		}
		if err := h.ResolveNotice(ctx, ws, st, "rk4", fixed.AddDate(0, 0, 1)); err != nil {
			t.Fatal(err)
		}
		want.RunKey, want.Resolved = "rk3", fixed
		if diff := cmp.Diff(want, last()); diff != "" {
			t.Errorf("after the recovery (-want +got):\n%s", diff)
		}

		again := fixed.AddDate(0, 0, 2)
		save("elido:http_401", "rk5", again)
		want = Notice{WorkspaceID: ws, StoreID: st, Fingerprint: "elido:http_401", Reason: "why elido:http_401", RunKey: "rk5",
			FirstPosted: again, LastPosted: again}
		if diff := cmp.Diff(want, last()); diff != "" {
			t.Errorf("a new failure after the recovery (-want +got):\n%s", diff)
		}
	})
}
