package alert

import (
	"strings"

	"github.com/slack-go/slack"
)

// maxPlainText bounds the plain-text fallback. Slack accepts up to 40,000
// characters of text; a message well under 4,000 is shown whole.
const maxPlainText = 3900

// plainText is m without blocks: the same content as one mrkdwn text, for
// when Slack refuses the blocks (invalid_blocks), so that the alert still
// reaches people. The header is bold, sections and context notes follow in
// order, dividers become blank lines. Block texts are already mrkdwn,
// escaped by Render, so they go in as they are.
func plainText(m Message) Message {
	var parts []string
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if b.Text != nil && strings.TrimSpace(b.Text.Text) != "" {
				parts = append(parts, "*"+esc(strings.TrimSpace(b.Text.Text))+"*")
			}
		case *slack.SectionBlock, *slack.ContextBlock:
			for _, t := range texts(b) {
				if strings.TrimSpace(t) != "" {
					parts = append(parts, t)
				}
			}
		}
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		text = m.Text
	}
	return Message{Text: clipBytes(text, maxPlainText)}
}
