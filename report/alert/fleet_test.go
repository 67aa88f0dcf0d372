package alert

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// A fleet workspace's notifier says the workspace first in every
// message: the fallback text, and a context block unless the blocks are
// already at Slack's limit. Without one, messages are as rendered.
func TestFleetWorkspaceLabelsEveryMessage(t *testing.T) {
	m := Message{Text: "Click gaps in workspace 48213", Blocks: []slack.Block{header("Click gaps")}}
	if got := (&Notifier{}).labelled(m); got.Text != m.Text || len(got.Blocks) != 1 {
		t.Errorf("without a fleet workspace: %q, %d blocks", got.Text, len(got.Blocks))
	}
	n := &Notifier{}
	WithFleetWorkspace("acme_*x*")(n)
	got := n.labelled(m)
	b, _ := json.Marshal(got.Blocks[0])
	if got.Text != "[acme_*x*] Click gaps in workspace 48213" || len(got.Blocks) != 2 || !strings.Contains(string(b), "Fleet workspace *"+esc("acme_*x*")+"*") {
		t.Errorf("labelled: %q, %d blocks, first %s", got.Text, len(got.Blocks), b)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the labelled message is not one Slack takes: %v", err)
	}
	full := Message{Text: "x", Blocks: make([]slack.Block, maxBlocks)}
	for i := range full.Blocks {
		full.Blocks[i] = header("h")
	}
	if got := n.labelled(full); len(got.Blocks) != maxBlocks || !strings.HasPrefix(got.Text, "[acme_*x*] ") {
		t.Errorf("at the block limit: %d blocks, text %q", len(got.Blocks), got.Text)
	}
}
