package report

import (
	"fmt"
	"html"
	"strings"
	"testing"
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
