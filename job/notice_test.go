package job

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

func unverifiableOn(dates []string, reason func(date string) string) report.Report {
	var r report.Report
	for _, d := range dates {
		r.Days = append(r.Days, report.Day{Date: d, Status: "unverifiable", Settled: true, Reason: reason(d)})
	}
	return r
}

// A cause keeps its key from night to night, whatever the dates, request
// ids and counts in its error; its reason never shows a secret.
func TestFailureKeysStayTheSameAcrossNights(t *testing.T) {
	const key = "sk_live_NEVER_PRINT_ME"
	secrets := []string{key}
	night := func(n int) Outcome {
		dates := []string{fmt.Sprintf("2026-11-%02d", n), fmt.Sprintf("2026-11-%02d", n+1)}
		return Outcome{Report: unverifiableOn(dates, func(d string) string { return "elido failed for " + d })}.
			Failed(PartElido, &elido.APIError{Endpoint: "timeseries", Status: 401, Message: "key " + key + " revoked", RequestID: fmt.Sprintf("req_%d", n)}).
			Failed(PartStore, fmt.Errorf("count clicks for %s: %w", dates[0], store.ErrRefused))
	}
	keys := func(cs []alert.Cause) []string {
		var ks []string
		for _, c := range cs {
			ks = append(ks, c.Key)
			if strings.Contains(c.Why, key) {
				t.Errorf("%s: the reason shows the key: %s", c.Key, c.Why)
			}
		}
		return ks
	}
	first, second := keys(failures(night(10), secrets)), keys(failures(night(20), secrets))
	if diff := cmp.Diff([]string{"elido:http_401", "store:refused"}, first); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the keys changed from one night to the next (-first +second):\n%s", diff)
	}

	// Days unverifiable on their own account: the same kind of reason on
	// other dates is the same cause; another kind is another.
	retention := func(d string) string {
		return "the day is older than Elido keeps analytics (ELIDO_RETENTION_DAYS=29): " + d
	}
	a := failures(Outcome{Report: unverifiableOn([]string{"2026-10-01"}, retention)}, secrets)
	b := failures(Outcome{Report: unverifiableOn([]string{"2026-10-02", "2026-10-03"}, retention)}, secrets)
	c := failures(Outcome{Report: unverifiableOn([]string{"2026-10-02"}, func(d string) string { return "/summary disagrees on " + d })}, secrets)
	if len(a) != 1 || len(b) != 1 || len(c) != 1 || a[0].Key != b[0].Key || a[0].Key == c[0].Key {
		t.Errorf("day causes %v, %v, %v: want one each, the first two alike, the third not", keys(a), keys(b), keys(c))
	}

	// A history that could not be opened is a cause; one never set is not.
	down := Outcome{}.Failed(PartHistoryDown, fmt.Errorf("open history: %w", history.ErrNotMigrated))
	if got := keys(failures(down, secrets)); !cmp.Equal(got, []string{"history:not_migrated"}) {
		t.Errorf("history down: keys %v", got)
	}
	if got := failures(Outcome{}.Failed(PartHistory, errors.New("read failed")), secrets); len(got) != 0 {
		t.Errorf("a history read error with the history open: %v, want no cause of its own", got)
	}
	if got := failures(Outcome{}, secrets); len(got) != 0 {
		t.Errorf("a run that checked everything: causes %v", got)
	}
}
