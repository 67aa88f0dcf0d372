package alert

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The worse-trend word names the workspace and store, says each way it got
// worse with its numbers, links the trend, and escapes what it quotes;
// the word that it passed says since when.
func TestRenderWorseAndPassed(t *testing.T) {
	w := Worse{WorkspaceID: "48213", StoreID: "st_1", TZ: "Europe/Warsaw", LastDay: "2026-11-28",
		Says:     []string{"outages on 3 of the last 7 nights (2026-11-22, 2026-11-25, 2026-11-28)", "a <b>&</b> leak"},
		TrendURL: "https://reports.example.com/trend?workspace=48213&x=<y>"}
	m := RenderWorse(w)
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	for _, want := range []string{"getting worse in workspace 48213", "outages on 3 of the last 7 nights", "`st_1`", "a \\u0026lt;b\\u0026gt;\\u0026amp;\\u0026lt;/b\\u0026gt; leak", "|The nights side by side\\u003e"} {
		if !strings.Contains(body, want) {
			t.Errorf("the blocks lack %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<y>") || strings.Contains(body, "<b>") {
		t.Errorf("unescaped text in the blocks:\n%s", body)
	}
	if !strings.Contains(m.Text, "getting worse in workspace 48213") {
		t.Errorf("the fallback text: %q", m.Text)
	}
	w.Since = time.Date(2026, 11, 29, 3, 15, 0, 0, time.UTC)
	p := RenderPassed(w)
	raw, _ = json.Marshal(p.Blocks)
	if !strings.Contains(string(raw), "no longer show the change told on 2026-11-29 03:15:00 UTC") {
		t.Errorf("the passed word: %s", raw)
	}
}
