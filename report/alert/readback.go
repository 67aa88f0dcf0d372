package alert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/slack-go/slack"
)

// postEventType is the event type of the Slack message metadata a bot
// post carries: it names the intended post (PostMark), so that a rerun
// that never learned whether the post arrived can find it in the channel
// instead of posting again.
const postEventType = "clickrecon_post"

// The metadata's payload keys. intent_id is a string: Slack returns JSON
// numbers, which would come back as float64.
const (
	payloadIntent = "intent_id"
	payloadRunKey = "run_key"
)

// historyPage and maxHistoryPages bound the search of a channel: the
// messages posted since the intent was recorded, 200 at a time, at most
// 2,000. A channel busier than that gives an error, never a second post.
const (
	historyPage     = 200
	maxHistoryPages = 10
)

// PostMark names an intended post in a bot post's metadata: ID is the
// run history's record of the post (its outbox id), RunKey the run's key,
// which tells apart two histories' posts with the same id. The zero mark
// puts no metadata on the post.
type PostMark struct {
	ID     int64
	RunKey string
}

// metadata is the option that carries mark on a chat.postMessage.
func (mark PostMark) metadata() slack.MsgOption {
	return slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType: postEventType,
		EventPayload: map[string]any{
			payloadIntent: strconv.FormatInt(mark.ID, 10),
			payloadRunKey: mark.RunKey,
		},
	})
}

// FindPosted looks in the channel, through conversations.history with
// message metadata, for the bot post that carries mark (see Post), among
// the messages posted since since. It returns the message's ts and true
// when it is there, with the channel's ID as Post returns it: the post
// arrived and is to be adopted instead of posted again. It returns false when the channel has no such message
// since then: the post never arrived. An error (Slack unreachable, the
// token lacking channels:history, a channel too busy to search, a webhook,
// which cannot be read back) settles nothing: post nothing and try again
// on the next run. The search is bounded by ten call timeouts, one per
// page; its error never holds a secret and matches ErrMisconfigured when
// only the configuration can mend it.
func (n *Notifier) FindPosted(ctx context.Context, mark PostMark, since time.Time) (channel, ts string, found bool, err error) {
	if n == nil || n.api == nil {
		return "", "", false, errors.New("a webhook's posts cannot be read back: set SLACK_BOT_TOKEN and SLACK_CHANNEL instead")
	}
	ctx, cancel := context.WithTimeout(ctx, n.callTimeout*maxHistoryPages)
	defer cancel()
	ts, found, err = findPosted(ctx, n.api, n.channel, mark, since)
	if err != nil {
		var cause error
		if misconfigured(err) { // the token cannot read the channel
			cause = ErrMisconfigured
		}
		if h := hint(err); h != "" {
			err = fmt.Errorf("%w: %s (reading it back needs SLACK_CHANNEL as a channel ID and the channels:history or groups:history scope)", err, h)
		}
		return "", "", false, n.redact(err, cause, nil)
	}
	return n.channel, ts, found, nil
}

// findPosted is FindPosted's search of channel through api.
func findPosted(ctx context.Context, api *slack.Client, channel string, mark PostMark, since time.Time) (ts string, found bool, err error) {
	params := &slack.GetConversationHistoryParameters{
		ChannelID:          channel,
		Oldest:             slackTS(since),
		Inclusive:          true,
		Limit:              historyPage,
		IncludeAllMetadata: true,
	}
	for range maxHistoryPages {
		resp, err := api.GetConversationHistoryContext(ctx, params)
		if err != nil {
			return "", false, fmt.Errorf("find Slack post %d of run %s in %s: %w", mark.ID, mark.RunKey, channel, err)
		}
		for _, m := range resp.Messages {
			if marked(m.Metadata, mark) {
				return m.Timestamp, true, nil
			}
		}
		if !resp.HasMore || resp.ResponseMetaData.NextCursor == "" {
			return "", false, nil
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
	return "", false, fmt.Errorf("find Slack post %d of run %s in %s: more than %d messages since %s, not all searched",
		mark.ID, mark.RunKey, channel, historyPage*maxHistoryPages, since.UTC().Format(time.RFC3339))
}

// FindEdited reads the message ts of channel (conversations.history, that
// message alone, with its metadata) and reports whether it carries mark:
// the edit UpdateMarked made under mark was made. A message without it
// was not edited so (or edited again since, by another mark). An error
// (Slack unreachable, the token lacking channels:history) settles
// nothing, as FindPosted's; a message that is gone is not found.
func (n *Notifier) FindEdited(ctx context.Context, mark PostMark, channel, ts string) (bool, error) {
	if n == nil || n.api == nil {
		return false, errors.New("a webhook's posts cannot be read back: set SLACK_BOT_TOKEN and SLACK_CHANNEL instead")
	}
	ctx, cancel := context.WithTimeout(ctx, n.callTimeout)
	defer cancel()
	resp, err := n.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
		ChannelID: channel, Oldest: ts, Latest: ts, Inclusive: true, Limit: 1, IncludeAllMetadata: true,
	})
	if err != nil {
		var cause error
		if misconfigured(err) {
			cause = ErrMisconfigured
		}
		return false, n.redact(fmt.Errorf("find the edit %d of run %s of Slack message %s in %s: %w", mark.ID, mark.RunKey, ts, channel, err), cause, nil)
	}
	for _, m := range resp.Messages {
		if m.Timestamp == ts && marked(m.Metadata, mark) {
			return true, nil
		}
	}
	return false, nil
}

// marked reports whether md is mark's.
func marked(md slack.SlackMetadata, mark PostMark) bool {
	if md.EventType != postEventType {
		return false
	}
	id, _ := md.EventPayload[payloadIntent].(string)
	rk, _ := md.EventPayload[payloadRunKey].(string)
	return id == strconv.FormatInt(mark.ID, 10) && rk == mark.RunKey // another history's post may have the same id
}

// slackTS writes t as a Slack timestamp, seconds.microseconds.
func slackTS(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// repeatNote heads a webhook message that may repeat an earlier one whose
// delivery Slack never confirmed.
const repeatNote = "Possible repeat: an earlier post of these days was sent but Slack never confirmed it, so it may already be in this channel."

// MarkRepeat returns m headed by a note that it may repeat an earlier post
// whose delivery Slack never confirmed, in its blocks and its text, and
// still within Slack's limits.
func MarkRepeat(m Message) Message {
	note := slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, ":repeat: "+repeatNote, false, false))
	return checked(Message{
		Text:   clipBytes(repeatNote+"\n"+m.Text, maxFallback),
		Blocks: append([]slack.Block{note}, m.Blocks...),
	})
}
