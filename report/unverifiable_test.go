package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Every unverifiable day's reason is in report.md and report.html, not
// only the first: each may have failed for its own reason.
func TestRenderersShowEveryUnverifiableReason(t *testing.T) {
	r := sample(t)
	var reasons []string
	for i := range 5 {
		reason := fmt.Sprintf("Elido: GET timeseries 2026-11-%02d: HTTP 502 <bad gateway> (request req_%d)", i+1, i)
		r.Days = append(r.Days, Day{Date: fmt.Sprintf("2026-11-%02d", i+1), Hours: 24, Status: "unverifiable", Severity: "ok", Settled: true, Reason: reason})
		reasons = append(reasons, reason)
	}
	md, err := Markdown(r)
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range reasons {
		if !strings.Contains(string(md), reason) {
			t.Errorf("report.md lacks %q", reason)
		}
		if !strings.Contains(string(page), html.EscapeString(reason)) {
			t.Errorf("report.html lacks %q", reason)
		}
	}
}

// A number that is not known is null in report.json, never 0 or "": the
// totals of a run that verified no day (Elido, or the store, read nothing)
// and a country that is not known. Markdown and HTML show -. Read back,
// they are still unknown.
func TestUnknownIsNull(t *testing.T) {
	w := reconcile.Window{From: date("2026-11-29"), To: date("2026-11-30"), Loc: time.UTC}
	res := reconcile.Compare(reconcile.Input{
		Window: w, Now: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Settle: 2 * time.Hour,
		API: map[reconcile.Date]reconcile.Reading{
			date("2026-11-29"): reconcile.Unknown(errors.New("HTTP 502")),
			date("2026-11-30"): reconcile.Unknown(errors.New("HTTP 502")),
		},
		Local: map[reconcile.Date]reconcile.Reading{date("2026-11-29"): reconcile.Known(40), date("2026-11-30"): reconcile.Known(0)},
	})
	r := New(res, w, Meta{RunKey: "k", WorkspaceID: "48213", GeneratedAt: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)})
	r.Countries = []Country{{Date: "2026-11-29", CountryCode: "", API: 3, Local: ptr(2), Delta: ptr(-1)}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"totals":{"api":null,"local":null,"delta":null,"api_summary":null}`, `"country_code":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report.json lacks %s:\n%s", want, b)
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Totals.Unknown || back.Countries[0].CountryCode != "" {
		t.Errorf("read back: totals %+v, country %q: unknown is lost", back.Totals, back.Countries[0].CountryCode)
	}
	md, err := Markdown(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Elido (daily buckets) | - |", "| Local store | - |", "| Delta (local − Elido) | - |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	page, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<div>Elido <b>-</b></div><div>store <b>-</b></div><div>delta <b>-</b></div>") {
		t.Errorf("report.html shows unknown totals as numbers")
	}

	// Known totals, 0 included, stay numbers.
	r.Totals = Totals{}
	if b, err = json.Marshal(r.Totals); err != nil || string(b) != `{"api":0,"local":0,"delta":0,"api_summary":null}` {
		t.Errorf("known totals: %s (%v)", b, err)
	}
}

func ptr(n int64) *int64 { return &n }
