package alert

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// FuzzRender: whatever a link id, a finding or an error holds, the alert
// is valid JSON within Slack's limits (50 blocks, 3000 bytes a text), and
// no text can mention (<!channel>, <@U123>) or link (<http://…|x>).
func FuzzRender(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, "finding "+h, int64(-40))
	}
	f.Add(strings.Repeat("`<!here>&", 400), strings.Repeat("\r\n", 2000), int64(-9223372036854775808))
	f.Fuzz(func(t *testing.T, id, text string, delta int64) {
		r := oneDayGap()
		for i := range 12 {
			r.Links = append(r.Links, report.Link{Date: "2026-11-25", LinkID: id + strings.Repeat("x", i), API: 50, Local: 10, Delta: delta, Status: "missing"})
			r.Findings = append(r.Findings, report.Finding{Kind: text, Message: text})
		}
		r.Interrupted = text
		for _, m := range []Message{
			Render(r, []Change{{Date: text, Kind: ChangeChanged, Was: State{Status: reconcile.Status(text), Delta: delta}, Now: &State{Status: reconcile.Status(id), Severity: reconcile.Severity(text)}}}),
			RenderUpdate(Update{WorkspaceID: "48213", TZ: "UTC", From: "2026-11-24", To: "2026-11-26", RunKey: "k",
				Days: []Change{{Date: id, Kind: ChangeHealed, Was: State{Status: reconcile.Status(text)}}}}),
		} {
			if err := m.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			payload, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(payload) {
				t.Fatalf("invalid JSON: %q", payload)
			}
			checkLimits(t, payload)
			for _, b := range m.Blocks {
				for _, s := range texts(b) {
					if b.BlockType() != "header" && strings.ContainsAny(s, "<>") {
						t.Fatalf("a mrkdwn text holds a raw < or >: %q", s)
					}
				}
			}
		}
	})
}
