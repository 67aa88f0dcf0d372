package alert

import (
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/report"
)

// hostile is text a store, Elido or an error body may hand over: Slack
// mentions and links, mrkdwn and Markdown syntax, line breaks.
var hostile = []string{
	"`x` ```code``` `",
	"line\nbreak\r\nand\rcr",
	"<!channel>",
	"<!here|here>",
	"<@U123>",
	"<#C123>",
	"<http://evil.example|click me>",
	"a&b<c>d",
	"*bold* _it_ ~st~",
	"a|b",
}

func hostileAlertReport() report.Report {
	r := oneDayGap()
	for i, id := range hostile {
		r.Links = append(r.Links, report.Link{Date: "2026-11-25", LinkID: id, API: 50, Local: int64(10 + i), Delta: int64(-40 + i), Status: "missing"})
		r.Findings = append(r.Findings, report.Finding{Kind: "note" + id, Message: "finding " + id})
	}
	r.Interrupted = strings.Join(hostile, " ")
	return r
}

// No text from a report can mention anyone, link anywhere or leave its
// code span in the Slack message, and the Markdown rendering keeps one
// item per line.
func TestRenderEscapesHostileText(t *testing.T) {
	m := Render(hostileAlertReport(), nil)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	payload := messageJSON(t, m)
	checkLimits(t, payload)
	for _, b := range m.Blocks {
		for _, text := range texts(b) {
			if strings.ContainsAny(text, "<>") {
				t.Errorf("a text holds a raw < or >: %q", text)
			}
			if strings.Contains(text, "\r") {
				t.Errorf("a text holds a raw CR: %q", text)
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "• `") && strings.Count(line, "`") != 2 {
					t.Errorf("a link id leaves its code span: %q", line)
				}
				if (strings.HasPrefix(line, "• *note") || strings.HasPrefix(line, ":warning:")) && strings.Contains(line, "`") {
					t.Errorf("free text can open a code span: %q", line)
				}
			}
		}
	}
	if strings.ContainsAny(m.Text, "<>") {
		t.Errorf("the fallback holds a raw < or >: %q", m.Text)
	}
	md := RenderMarkdown(m)
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "- `") && strings.Count(line, "`") != 2 {
			t.Errorf("Markdown: a link id leaves its code span: %q", line)
		}
	}
	if strings.Contains(md, "\r") {
		t.Error("Markdown holds a raw CR")
	}
}
