package alert

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Worse is what the one word of a trend that got worse says: the
// workspace and store it is of, the zone of its days, the last day the
// trend weighed, how it got worse (each a sentence with its numbers,
// from report/trend's Worse), and where the trend is read (serve's
// /trend page; "" when reports are not served).
type Worse struct {
	WorkspaceID string
	StoreID     string
	TZ          string
	LastDay     string
	Says        []string
	Since       time.Time // when the change was first told; zero on the first word
	TrendURL    string
}

// RenderWorse is the message that the nights got worse: one, whatever
// how many ways, each with its numbers. It is told once per change.
func RenderWorse(w Worse) Message {
	ws := clipRunes(w.WorkspaceID, 60)
	title := fmt.Sprintf("📉 Click losses getting worse in workspace %s", ws)
	var b strings.Builder
	fmt.Fprintf(&b, "Over the nights up to %s (%s), store %s:", plain(w.LastDay), esc(w.TZ), code(w.StoreID))
	for _, s := range w.Says {
		fmt.Fprintf(&b, "\n• %s", plain(clipRunes(s, maxWhy)))
	}
	b.WriteString("\nEach night's gaps were alerted on their own; this is the pattern across them. clickrecon says so once more when it has passed.")
	text := fmt.Sprintf("clickrecon: click losses are getting worse in workspace %s: %s", ws, strings.Join(w.Says, "; "))
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks([]slack.Block{
		header(title),
		section(b.String()),
		note(trendNote(w)),
	})}
}

// RenderPassed is the message that the change RenderWorse told has
// passed: the nights no longer show it.
func RenderPassed(w Worse) Message {
	ws := clipRunes(w.WorkspaceID, 60)
	title := fmt.Sprintf("✅ Click losses no longer getting worse in workspace %s", ws)
	body := fmt.Sprintf("The nights up to %s (%s), store %s, no longer show the change told on %s.", plain(w.LastDay), esc(w.TZ), code(w.StoreID), stamp(w.Since))
	text := fmt.Sprintf("clickrecon: click losses are no longer getting worse in workspace %s (up to %s).", ws, w.LastDay)
	return Message{Text: clipBytes(esc(text), maxFallback), Blocks: capBlocks([]slack.Block{
		header(title),
		section(body),
		note(trendNote(w)),
	})}
}

func trendNote(w Worse) string {
	if w.TrendURL == "" {
		return "clickrecon trend shows the nights side by side"
	}
	return "<" + linkURL(w.TrendURL) + "|The nights side by side>"
}
