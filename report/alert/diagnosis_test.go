package alert

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

// diagnosed is OneDayGap with a day whose loss was diagnosed: an outage
// and an unexplained remainder.
func diagnosed() report.Report {
	r := oneDayGap()
	two := 2
	r.Diagnoses = []report.Diagnosis{
		{Date: "2026-11-25", Kind: "outage", From: "2026-11-25T02:07:13+01:00", To: "2026-11-25T02:31:40+01:00", Clicks: 4, Share: 0.8, Links: &two,
			Evidence: "raw_clicks", Message: "the store recorded none of Elido's 4 clicks"},
		{Date: "2026-11-25", Kind: "unexplained", From: "2026-11-25T00:00:00+01:00", To: "2026-11-26T00:00:00+01:00", Clicks: 1, Share: 0.2,
			Evidence: "raw_clicks", Message: "1 click fits no shape"},
	}
	return r
}

// A diagnosed day's line sits under its gap, with its window in the
// zone's wall clock and the hint that fits its largest shape.
func TestRenderSaysWhyUnderTheGap(t *testing.T) {
	m := Render(diagnosed(), nil)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	payload := string(messageJSON(t, m))
	want := "2026-11-25* missing *-5* (Elido 1,200 · store 1,195) · warn\\n      ↳ _why:_ outage 02:07:13–02:31:40 CET, 4 clicks (80%) · unexplained, 1 click (20%): Elido retries a failed delivery for ~20 minutes only"
	if !strings.Contains(payload, want) {
		t.Errorf("the message lacks %q:\n%s", want, payload)
	}
	if plain := string(messageJSON(t, Render(oneDayGap(), nil))); strings.Contains(plain, "_why:_") {
		t.Error("a day without a diagnosis has a why line")
	}
}

// Each kind gets its hint.
func TestDiagnosisHints(t *testing.T) {
	for kind, hint := range map[string]string{
		"outage": "~20 minutes", "busy_intervals": "next_cursor", "duplicates": "X-Webhook-Delivery", "steady_leak": "drops events",
	} {
		r := oneDayGap()
		th := int64(100)
		r.Diagnoses = []report.Diagnosis{{Date: "2026-11-25", Kind: kind, From: "2026-11-25T00:00:00+01:00", To: "2026-11-26T00:00:00+01:00",
			Clicks: 5, Share: 1, IntervalS: 300, Threshold: &th}}
		if line := report.DiagnosisLine(r, "2026-11-25"); !strings.Contains(line, hint) {
			t.Errorf("%s: %q lacks %q", kind, line, hint)
		}
	}
}

// 400 diagnosed gap days, each with long messages, stay within Slack's
// limits.
func TestRenderManyDiagnosesStaysWithinLimits(t *testing.T) {
	var days []report.Day
	start := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	for i := range 400 {
		days = append(days, day(start.AddDate(0, 0, i).Format("2006-01-02"), 1000, int64(900-i), "missing", "fail"))
	}
	r := newReport(days...)
	for _, d := range days {
		for _, kind := range []string{"outage", "busy_intervals", "duplicates", "steady_leak", "unexplained"} {
			r.Diagnoses = append(r.Diagnoses, report.Diagnosis{Date: d.Date, Kind: kind, From: d.Date + "T00:00:00Z", To: d.Date + "T01:00:00Z",
				Clicks: 20, Share: 0.2, Message: strings.Repeat(fmt.Sprintf("<!channel> %s ", kind), 200)})
		}
	}
	m := Render(r, nil)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	payload := messageJSON(t, m)
	checkLimits(t, payload)
	if strings.Contains(string(payload), "<!channel>") {
		t.Error("a message reached Slack unescaped")
	}
}

// In the Markdown rendering (the demo's preview of the message) the why
// line stays inside its day's list item: indented four spaces or more
// after a blank line it would read as a code block, and it would end the
// list of days.
func TestMarkdownKeepsWhyInItsItem(t *testing.T) {
	md := RenderMarkdown(Render(diagnosed(), nil))
	want := "- **2026-11-25** missing **-5** (Elido 1,200 · store 1,195) · warn\n  ↳ _why:_ outage 02:07:13–02:31:40 CET"
	if !strings.Contains(md, want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, md)
	}
}
