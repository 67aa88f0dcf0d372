package alert

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/internal/golden"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/reporttest"
)

// The reports of these tests (see reporttest).
var (
	day          = reporttest.Day
	unverifiable = reporttest.Unverifiable
	newReport    = reporttest.New
	oneDayGap    = reporttest.OneDayGap
)

// manyLinks: an outage over two days lost clicks on 400 links, and the
// findings are long.
func manyLinks() report.Report {
	r := newReport(
		day("2026-11-01", 91000, 90100, "missing", "fail"),
		day("2026-11-02", 88000, 87600, "missing", "fail"),
		day("2026-11-03", 87000, 87000, "match", "ok"),
		unverifiable("2026-11-04", 85000),
	)
	for i := range 400 {
		date := "2026-11-01"
		if i%3 == 0 {
			date = "2026-11-02"
		}
		api := int64(1000 + i)
		lost := int64(1 + i%7)
		r.Links = append(r.Links, report.Link{Date: date, LinkID: fmt.Sprintf("lnk_campaign_%03d_%s", i, strings.Repeat("x", i%40)),
			API: api, Local: api - lost, Delta: -lost, Status: "missing"})
	}
	r.Findings = []report.Finding{
		{Kind: "boundary_shift", Message: "A deficit on 2026-11-01 is matched by a surplus on 2026-11-02: a day-boundary or time-zone mismatch, not data loss."},
		{Kind: "api_revised", Message: "Elido's count for 2026-11-01 changed from 91,010 to 91,000 clicks (-10) since run 20261101_20261103_aaaaaaaaaaaa at 2026-11-04T03:00:12Z: the provider revised it after the day had settled"},
	}
	return r
}

// heal: the poller backfilled 2026-11-25, alerted as missing -5.
func heal() Update {
	return Update{
		WorkspaceID: "48213",
		TZ:          "Europe/Warsaw",
		From:        "2026-11-24",
		To:          "2026-11-26",
		RunKey:      "20261125_20261127_77aa12bb34cc",
		GeneratedAt: time.Date(2026, 11, 28, 3, 0, 9, 0, time.UTC),
		Days: []Change{{
			Date: "2026-11-25",
			Kind: ChangeHealed,
			Was:  State{Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5},
			Now:  &State{Status: "match", Severity: "ok", API: 1200, Local: 1200},
		}},
	}
}

func messageJSON(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// linked is r served under RECON_REPORT_URL.
func linked(r report.Report) report.Report {
	r.Link = "https://reports.example.com/clickrecon/" + r.RunKey + "/report.html"
	return r
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  Message
	}{
		{"one_day_gap", Render(oneDayGap(), nil)},
		{"one_day_gap_linked", Render(linked(oneDayGap()), nil)},
		{"400_links", Render(manyLinks(), nil)},
		{"heal", RenderUpdate(heal())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLimits(t, messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".json.golden", messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".md.golden", []byte(RenderMarkdown(tt.msg)))
		})
	}
}

// checkLimits decodes a message's JSON as Slack would and checks every
// limit on what it finds, independently of Validate.
func checkLimits(t *testing.T, payload []byte) {
	t.Helper()
	var m struct {
		Text   string          `json:"text"`
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(m.Text) == "" {
		t.Error("no plain-text fallback")
	}
	var raw []map[string]any
	if err := json.Unmarshal(m.Blocks, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || len(raw) > 50 {
		t.Errorf("%d blocks, want 1 to 50", len(raw))
	}
	var walk func(v any, inHeader bool)
	walk = func(v any, inHeader bool) {
		switch v := v.(type) {
		case map[string]any:
			if typ, _ := v["type"].(string); typ == "plain_text" || typ == "mrkdwn" {
				text, _ := v["text"].(string)
				limit := 3000
				if inHeader {
					limit = 150
				}
				if text == "" || len(text) > limit {
					t.Errorf("a %s text has %d bytes, want 1 to %d", typ, len(text), limit)
				}
				if strings.Contains(text, "<!") || strings.Contains(text, "<@") {
					t.Errorf("a text can mention: %q", text)
				}
			}
			for _, c := range v {
				walk(c, inHeader)
			}
		case []any:
			for _, c := range v {
				walk(c, inHeader)
			}
		}
	}
	for _, b := range raw {
		walk(b, b["type"] == "header")
		if b["type"] == "context" {
			if els, _ := b["elements"].([]any); len(els) > 10 {
				t.Errorf("a context block has %d elements, more than 10", len(els))
			}
		}
	}
}

// However large the report, the message fits Slack's limits, says what it
// left out, and lets nothing from the report format or mention.
func TestRenderStaysWithinLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ø", 5000)
	tests := []struct {
		name  string
		rep   func() report.Report
		since []Change
		want  []string // in the message
	}{
		{name: "400_links", rep: manyLinks, want: []string{"…and 390 more links; see the report"}},
		{name: "400_gap_days", rep: func() report.Report {
			var days []report.Day
			start := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
			for i := range 400 {
				days = append(days, day(start.AddDate(0, 0, i).Format("2006-01-02"), 1000, int64(900-i), "missing", "fail"))
			}
			return newReport(days...)
		}, want: []string{"…and 390 more days; see the report", "--from 2025-10-01 --to 2026-11-04"}},
		{name: "huge_findings_and_ids", rep: func() report.Report {
			r := oneDayGap()
			r.WorkspaceID = strings.Repeat("w", 500)
			r.Interrupted = long
			r.Window.TZ = "America/Argentina/ComodRivadavia"
			for i := range 300 {
				r.Findings = append(r.Findings, report.Finding{Kind: long, Message: long + "<!channel>"})
				r.Links = append(r.Links, report.Link{Date: "2026-11-25", LinkID: strings.Repeat("`<!here>&", 300) + fmt.Sprint(i), API: 5, Local: 1, Delta: -4, Status: "missing"})
			}
			return r
		}, want: []string{"more findings; see the report", "more links; see the report"}},
		{name: "many_changes", rep: oneDayGap, since: func() []Change {
			var cs []Change
			for i := range 200 {
				cs = append(cs, Change{Date: fmt.Sprintf("2026-%02d-%02d", 1+i/28, 1+i%28), Kind: ChangeHealed,
					Was: State{Status: "missing", Delta: -5}, Now: &State{Status: "match"}})
			}
			return cs
		}(), want: []string{"…and 190 more days; see the report"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Render(tt.rep(), tt.since)
			if err := m.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			payload := messageJSON(t, m)
			checkLimits(t, payload)
			for _, w := range tt.want {
				if !strings.Contains(string(payload), w) {
					t.Errorf("the message lacks %q", w)
				}
			}
		})
	}
}

// Validate catches what Slack would refuse, so a broken renderer could
// never cost an alert: Send falls back to the plain text.
func TestValidateRefusesWhatSlackRefuses(t *testing.T) {
	t.Parallel()
	ok := Render(oneDayGap(), nil)
	tooMany := Message{Text: "x"}
	for range 51 {
		tooMany.Blocks = append(tooMany.Blocks, slack.NewDividerBlock())
	}
	tests := []struct {
		name string
		msg  Message
	}{
		{"no_fallback_text", Message{Blocks: ok.Blocks}},
		{"51_blocks", tooMany},
		{"long_section", Message{Text: "x", Blocks: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", strings.Repeat("a", 3001), false, false), nil, nil)}}},
		{"long_header", Message{Text: "x", Blocks: []slack.Block{slack.NewHeaderBlock(slack.NewTextBlockObject("plain_text", strings.Repeat("a", 151), true, false))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.msg.Validate(); err == nil {
				t.Error("Validate accepted it")
			}
			if err := checked(tt.msg).Validate(); tt.msg.Text != "" && err != nil {
				t.Errorf("the fallback is invalid too: %v", err)
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate refused a rendered message: %v", err)
	}
}

// The alert re-checks what report.html does (report.RecheckCommands): one
// command per run of gap days, --date for a single one.
func TestRecheckCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rep  report.Report
		want string
	}{
		{"one_gap_day", oneDayGap(), "clickrecon run --date 2026-11-25 --tz Europe/Warsaw"},
		{"one_command_per_run_of_gap_days", newReport(
			day("2026-11-20", 10, 5, "missing", "warn"),
			day("2026-11-21", 10, 10, "match", "ok"),
			day("2026-11-22", 10, 99, "surplus", "fail"),
			day("2026-11-23", 10, 2, "missing", "fail"),
		), "clickrecon run --date 2026-11-20 --tz Europe/Warsaw\nclickrecon run --from 2026-11-22 --to 2026-11-23 --tz Europe/Warsaw"},
		{"no_gap_rechecks_the_window", newReport(
			day("2026-11-20", 10, 10, "match", "ok"),
			day("2026-11-21", 10, 10, "match", "ok"),
		), "clickrecon run --from 2026-11-20 --to 2026-11-21 --tz Europe/Warsaw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recheck(tt.rep); got != tt.want {
				t.Errorf("recheck = %q, want %q", got, tt.want)
			}
			md := RenderMarkdown(Render(tt.rep, nil))
			if !strings.Contains(md, "```\n"+tt.want+"\n```") {
				t.Errorf("the alert's re-check is not %q:\n%s", tt.want, md)
			}
		})
	}
}

// Totals the report says are unknown are shown as -, never 0, whatever
// the coverage counts (a report merged from shards, say).
func TestRenderUnknownTotals(t *testing.T) {
	rep := newReport(day("2026-11-24", 100, 90, "missing", "warn"))
	rep.Totals = report.Totals{Unknown: true}
	md := RenderMarkdown(Render(rep, nil))
	if !strings.Contains(md, "**Elido** - · **store** - · **delta** -") || strings.Contains(md, "**Elido** 0") {
		t.Errorf("alert with unknown totals:\n%s", md)
	}
}
