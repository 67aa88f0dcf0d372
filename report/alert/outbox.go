package alert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report"
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
func resolvePending(ctx context.Context, h alertHistory, api *slack.Client, channel string, s history.Scope, now time.Time) (repeatOf int64, err error) {
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

// delivery is how Send delivers its new message: guard is checked
// immediately before the post, and repeatOf is the unconfirmed webhook
// post it may repeat (resolvePending), 0 for none.
type delivery struct {
	guard    Guard
	repeatOf int64
}

// allOf returns a Guard that passes when every one of guards does.
func allOf(guards []Guard) Guard {
	return func(ctx context.Context) error {
		for _, g := range guards {
			if g == nil {
				continue
			}
			if err := g(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// resolveTimeout bounds the settling of earlier posts: one Slack call per
// page of the channel searched.
func (n *Notifier) resolveTimeout() time.Duration {
	return n.callTimeout * maxHistoryPages
}

// resolve settles the posts an earlier run of rep's workspace, store and
// zone left pending (resolvePending) and returns the id of the webhook
// post the next one may repeat.
func (n *Notifier) resolve(ctx context.Context, h alertHistory, rep report.Report) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, n.resolveTimeout())
	defer cancel()
	s := history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ}
	repeatOf, err := resolvePending(ctx, h, n.api, n.channel, s, n.now())
	if err != nil {
		var cause error
		if misconfigured(err) { // the token cannot read the channel
			cause = ErrMisconfigured
		}
		if h := hint(err); h != "" {
			err = fmt.Errorf("%w: %s (reading it back needs SLACK_CHANNEL as a channel ID and the channels:history or groups:history scope)", err, h)
		}
		return 0, n.redact(err, cause, nil)
	}
	return repeatOf, nil
}

// intent is the outbox record of a new message of kind showing rows, for
// the window from..to.
func (n *Notifier) intent(rep report.Report, kind, from, to string, rows []history.Alert) history.Intent {
	return history.Intent{
		Scope:  history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ},
		RunKey: rep.RunKey, Kind: kind, Transport: n.transport, From: from, To: to, Alerts: rows,
	}
}

// deliver posts m, the new message in, through the outbox: in is recorded
// as pending first (a history that cannot take it means no post), the
// guard is checked, m is posted (with a bot token, carrying in's id in its
// metadata so that a rerun can find it), and in is marked posted with the
// channel and ts Slack returned. posted says whether Slack took m.
//
// A post whose answer never came (ErrUnconfirmed) stays pending: the next
// run settles it (resolvePending) rather than post blindly again. A post
// Slack refused is abandoned. Without history (h nil) m is only posted.
func (n *Notifier) deliver(ctx context.Context, h alertHistory, dl delivery, in history.Intent, m Message) (ch, ts string, posted bool, err error) {
	guard := dl.guard // never nil: Send builds it with allOf
	if h == nil {
		if err := guard(ctx); err != nil {
			return "", "", false, fmt.Errorf("nothing posted: %w", err)
		}
		ch, ts, err := n.post(ctx, m)
		return ch, ts, err == nil, err
	}
	in.RepeatOf = dl.repeatOf
	id, err := h.Intend(ctx, in)
	if err != nil {
		return "", "", false, fmt.Errorf("nothing posted: the history must record a post before it is made, and could not: %w", err)
	}
	in.ID = id
	if err := guard(ctx); err != nil {
		return "", "", false, errors.Join(fmt.Errorf("nothing posted: %w", err), n.abandon(ctx, h, id))
	}
	if in.RepeatOf != 0 {
		m = markRepeat(m)
	}
	var extra []slack.MsgOption
	if n.api != nil {
		extra = append(extra, postMetadata(in))
	}
	ch, ts, err = n.post(ctx, m, extra...)
	if errors.Is(err, ErrUnconfirmed) {
		return "", "", false, fmt.Errorf("%w; it stays pending in the history (post %d), and the next run settles it before posting again", err, id)
	}
	if err != nil {
		return "", "", false, errors.Join(err, n.abandon(ctx, h, id))
	}
	// Marked even when the run is stopping: Slack has the message.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := h.MarkPosted(mctx, id, ch, ts); err != nil {
		return ch, ts, true, fmt.Errorf("posted, but not marked posted in the history; it stays pending (post %d) and the next run settles it: %w", id, err)
	}
	return ch, ts, true, nil
}

// abandon gives up the intended post id, which was never made or which
// Slack refused, even when the run is stopping. A failure leaves it
// pending, for the next run to settle.
func (n *Notifier) abandon(ctx context.Context, h alertHistory, id int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := h.Abandon(ctx, id); err != nil {
		return fmt.Errorf("the next run settles it: %w", err)
	}
	return nil
}

// repeatNote heads a webhook message that may repeat an earlier one whose
// delivery Slack never confirmed.
const repeatNote = "Possible repeat: an earlier post of these days was sent but Slack never confirmed it, so it may already be in this channel."

// markRepeat returns m headed by repeatNote, in its blocks and its text.
func markRepeat(m Message) Message {
	note := slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, ":repeat: "+repeatNote, false, false))
	return checked(Message{
		Text:   clipBytes(repeatNote+"\n"+m.Text, maxFallback),
		Blocks: append([]slack.Block{note}, m.Blocks...),
	})
}
