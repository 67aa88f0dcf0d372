package alert

import (
	"strings"

	"github.com/slack-go/slack"
)

// RenderMarkdown renders m as Markdown, block by block: what a person sees
// in Slack, for a terminal (clickrecon demo) or a document. Slack's mrkdwn
// becomes Markdown: *bold* is **bold**, bullets are list items, a code
// block is fenced.
func RenderMarkdown(m Message) string {
	var parts []string
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			parts = append(parts, "### "+oneLine.Replace(b.Text.Text)) // a header is one line
		case *slack.SectionBlock:
			parts = append(parts, mrkdwnToMarkdown(b.Text.Text))
		case *slack.ContextBlock:
			for _, t := range texts(b) {
				parts = append(parts, "<sub>"+mrkdwnToMarkdown(t)+"</sub>")
			}
		case *slack.DividerBlock:
			parts = append(parts, "---")
		}
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// mrkdwnToMarkdown converts the mrkdwn Render writes.
func mrkdwnToMarkdown(s string) string {
	var out []string
	inList := false
	for i, chunk := range strings.Split(s, "```") {
		if i%2 == 1 { // inside a code block
			out = append(out, "```\n"+unescape(chunk)+"\n```")
			inList = false
			continue
		}
		for _, line := range strings.Split(chunk, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if inList && strings.HasPrefix(line, " ") {
				// An indented line under a bullet (a gap day's why line)
				// continues that item: more than two spaces would make
				// it a code block in Markdown.
				out[len(out)-1] += "\n  " + inline(strings.TrimSpace(line))
				continue
			}
			line = inline(line)
			if rest, ok := strings.CutPrefix(line, "• "); ok {
				item := "- " + rest
				if inList {
					out[len(out)-1] += "\n" + item
				} else {
					out = append(out, item)
				}
				inList = true
				continue
			}
			out = append(out, line)
			inList = false
		}
	}
	return strings.Join(out, "\n\n")
}

// inline converts *bold* and ~strike~ outside code spans; code spans keep
// their text, unescaped, as Markdown shows it verbatim.
func inline(line string) string {
	var b strings.Builder
	for i, part := range strings.Split(line, "`") {
		if i > 0 {
			b.WriteString("`")
		}
		if i%2 == 1 {
			b.WriteString(unescape(part))
			continue
		}
		b.WriteString(emphasis(part))
	}
	return b.String()
}

// emphasis doubles the markers of *bold* and ~strike~ pairs.
func emphasis(s string) string {
	for _, m := range []string{"*", "~"} {
		parts := strings.Split(s, m)
		if len(parts) < 3 {
			continue
		}
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				if i%2 == 1 && i == len(parts)-1 { // an unpaired marker stays as it is
					b.WriteString(m)
				} else {
					b.WriteString(m + m)
				}
			}
			b.WriteString(p)
		}
		s = b.String()
	}
	return s
}

func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
