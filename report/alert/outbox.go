package alert

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report/history"
)

// postEventType is the event type of the Slack message metadata a bot
// post carries: it names the history's intended post (history.Intent), so
// that a rerun that never learned whether the post arrived can find it in
// the channel instead of posting again.
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

// sinceMargin is how far before the intent's creation the search starts:
// the history's clock and Slack's need not agree.
const sinceMargin = 10 * time.Minute

// postMetadata is the option that marks a chat.postMessage as the intended
// post in: pass it with every bot post made after history.Intend.
func postMetadata(in history.Intent) slack.MsgOption {
	return slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType: postEventType,
		EventPayload: map[string]any{
			payloadIntent: strconv.FormatInt(in.ID, 10),
			payloadRunKey: in.RunKey,
		},
	})
}

// pendingSince is when the search for the pending post in starts: a little
// before the history recorded it, or since when Created cannot be read.
func pendingSince(in history.Intent, since time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, in.Created); err == nil {
		return t.Add(-sinceMargin)
	}
	return since
}

// findPosted looks in channel, through conversations.history with message
// metadata, for the message that carries the intended post in (see
// postMetadata), among the messages posted since since. It returns the
// message's ts and true when it is there: the post arrived and is adopted
// (history.MarkPosted) instead of posted again. It returns false when the
// channel has no such message since then: the post never arrived
// (history.Abandon, then post anew). An error (Slack unreachable, the
// token lacking channels:history, a channel too busy to search) resolves
// nothing: post nothing and try again on the next run.
func findPosted(ctx context.Context, api *slack.Client, channel string, in history.Intent, since time.Time) (ts string, found bool, err error) {
	want := strconv.FormatInt(in.ID, 10)
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
			return "", false, fmt.Errorf("find Slack post %d of run %s in %s: %w", in.ID, in.RunKey, channel, err)
		}
		for _, m := range resp.Messages {
			md := m.Metadata
			if md.EventType != postEventType {
				continue
			}
			if id, _ := md.EventPayload[payloadIntent].(string); id != want {
				continue
			}
			if rk, _ := md.EventPayload[payloadRunKey].(string); rk != in.RunKey {
				continue // another history's post with the same id
			}
			return m.Timestamp, true, nil
		}
		if !resp.HasMore || resp.ResponseMetaData.NextCursor == "" {
			return "", false, nil
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
	return "", false, fmt.Errorf("find Slack post %d of run %s in %s: more than %d messages since %s, not all searched",
		in.ID, in.RunKey, channel, historyPage*maxHistoryPages, since.UTC().Format(time.RFC3339))
}

// slackTS writes t as a Slack timestamp, seconds.microseconds.
func slackTS(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// lookBack is how far back the search for a pending post goes when the
// history's record of it has no readable creation time.
const lookBack = 7 * 24 * time.Hour

// resolvePending settles every pending post of s before a run posts
// anything, and returns the id of the webhook post the run's next post may
// repeat (give it as history.Intent.RepeatOf and say so in the message), 0
// when there is none:
//
//   - a bot post (api not nil) is looked for in channel (findPosted): found,
//     it is adopted (history.MarkPosted with its ts); not found, it never
//     arrived (history.Abandon) and its days are alerted again;
//   - a webhook post cannot be read back: the first time it is abandoned
//     and its id returned, so that it is posted once more, marked as a
//     possible repeat; a repeat that is itself pending is taken as
//     delivered (history.MarkPosted with no channel or ts), so a webhook
//     never posts a gap more than twice.
//
// An error leaves the rest pending: the run must post nothing.
func resolvePending(ctx context.Context, h *history.History, api *slack.Client, channel string, s history.Scope, now time.Time) (repeatOf int64, err error) {
	pending, err := h.Pending(ctx, s)
	if err != nil {
		return 0, err
	}
	for _, p := range pending {
		switch {
		case p.Transport == history.TransportBot && api != nil:
			ts, found, err := findPosted(ctx, api, channel, p, pendingSince(p, now.Add(-lookBack)))
			if err != nil {
				return 0, err
			}
			if found {
				err = h.MarkPosted(ctx, p.ID, channel, ts)
			} else {
				err = h.Abandon(ctx, p.ID)
			}
			if err != nil {
				return 0, err
			}
		case p.RepeatOf != 0:
			if err := h.MarkPosted(ctx, p.ID, "", ""); err != nil {
				return 0, err
			}
		default:
			if err := h.Abandon(ctx, p.ID); err != nil {
				return 0, err
			}
			repeatOf = p.ID
		}
	}
	return repeatOf, nil
}
