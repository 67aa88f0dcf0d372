package alert

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// ErrNotTestable says a webhook cannot be tested without posting to its
// channel: Check reads its URL's form only.
var ErrNotTestable = errors.New("an incoming webhook cannot be tested without posting to its channel: its URL is well formed, which is all that can be checked")

// Check asks Slack, without posting anything, whether the notifier can
// do what a run does: for a bot token, that the token is valid
// (auth.test) and that it may read SLACK_CHANNEL back (one message of
// conversations.history, which a rerun needs to find what it posted, and
// which fails when the bot is not in the channel). A webhook cannot be
// tested without posting: its URL was checked by New, and Check returns
// ErrNotTestable. The error never holds a secret, and matches
// ErrMisconfigured when only the configuration can mend it.
func (n *Notifier) Check(ctx context.Context) error {
	if n.api == nil {
		return ErrNotTestable
	}
	ctx, cancel := context.WithTimeout(ctx, n.callTimeout)
	defer cancel()
	if _, err := n.api.AuthTestContext(ctx); err != nil {
		return n.checkErr(fmt.Errorf("auth.test: %w", err))
	}
	params := &slack.GetConversationHistoryParameters{ChannelID: n.channel, Limit: 1}
	if _, err := n.api.GetConversationHistoryContext(ctx, params); err != nil {
		return n.checkErr(fmt.Errorf("conversations.history of SLACK_CHANNEL %s: %w", n.channel, err))
	}
	return nil
}

// checkErr is err with what to do about it, redacted.
func (n *Notifier) checkErr(err error) error {
	var cause error
	if misconfigured(err) {
		cause = ErrMisconfigured
	}
	if h := hint(err); h != "" {
		err = fmt.Errorf("%w: %s", err, h)
	}
	return n.redact(err, cause, nil)
}
