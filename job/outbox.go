package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// sinceMargin is how far before the intent's creation the search for a
// pending post starts: the history's clock and Slack's need not agree.
const sinceMargin = 10 * time.Minute

// lookBack is how far back the search for a pending post goes when the
// history's record of it has no readable creation time.
const lookBack = 7 * 24 * time.Hour

// saveTimeout bounds one record of a Slack action in the history.
const saveTimeout = 10 * time.Second

// pendingSince is when the search for the pending post in starts: a little
// before the history recorded it, or since when Created cannot be read.
func pendingSince(in history.Intent, since time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, in.Created); err == nil {
		return t.Add(-sinceMargin)
	}
	return since
}

// resolvePending settles every pending post of s before a run decides
// anything, so that the decision follows from what Slack answered alone
// (any kind: an alert, an update, a heal, a notice, a reminder, a
// recovery), and returns the id of the last post it settled as
// unconfirmed (0 for none), which a message marked as a possible repeat
// names (history.Intent.RepeatOf):
//
//   - a post recorded but never handed to Slack (the run died between its
//     intent and its post: history.Intent.Sent is false) told nothing
//     (history.Abandon), whatever the transport;
//   - a bot post, with a bot token, is looked for in the channel through
//     its metadata (alert.Notifier.FindPosted): found, Slack has it
//     (history.MarkPosted with its ts); not found, it never arrived
//     (history.Abandon) and nothing of it was told;
//   - a webhook post cannot be read back: it may be in the channel
//     (history.MarkUnconfirmed). What it told counts one lost answer: a
//     day, a heal, a notice or a recovery told once so is told once more,
//     marked as a possible repeat, and one told twice so is taken as told
//     (decideGaps, decideNotice), so a webhook never posts the same thing
//     more than twice, and never loses what it may have said.
//
// A post another run settled meanwhile is left as that run settled it. An
// error leaves the rest pending: the run must post nothing in s.
func resolvePending(ctx context.Context, h *history.History, n *alert.Notifier, s history.Scope, now time.Time) (unconfirmed int64, err error) {
	pending, err := h.Pending(ctx, s)
	if err != nil {
		return 0, err
	}
	for _, p := range pending {
		switch {
		case !p.Sent:
			// Recorded, never handed to Slack: it told nothing.
			if err := h.Abandon(ctx, p.ID); err != nil && !errors.Is(err, history.ErrResolved) {
				return 0, err
			}
		case p.Transport == history.TransportBot && n.Transport() == alert.TransportBot && p.TS != "":
			// An edit of the message p.TS: made if the message carries
			// its mark.
			found, err := n.FindEdited(ctx, alert.PostMark{ID: p.ID, RunKey: p.RunKey}, p.Channel, p.TS)
			if err != nil {
				return 0, err
			}
			if err := settleFound(ctx, h, p.ID, found, p.Channel, p.TS); err != nil {
				return 0, err
			}
		case p.Transport == history.TransportBot && n.Transport() == alert.TransportBot:
			ch, ts, found, err := n.FindPosted(ctx, alert.PostMark{ID: p.ID, RunKey: p.RunKey}, pendingSince(p, now.Add(-lookBack)))
			if err != nil {
				return 0, err
			}
			if err := settleFound(ctx, h, p.ID, found, ch, ts); err != nil {
				return 0, err
			}
		default:
			if err := h.MarkUnconfirmed(ctx, p.ID); err != nil && !errors.Is(err, history.ErrResolved) {
				return 0, err
			}
			unconfirmed = p.ID
		}
	}
	return unconfirmed, nil
}

// settleFound settles the pending post id by what a search of the channel
// found: made, as ch/ts (history.MarkPosted), or never made
// (history.Abandon). One another run settled meanwhile stays as it is.
func settleFound(ctx context.Context, h *history.History, id int64, found bool, ch, ts string) error {
	var err error
	if found {
		err = h.MarkPosted(ctx, id, ch, ts)
	} else {
		err = h.Abandon(ctx, id)
	}
	if err != nil && !errors.Is(err, history.ErrResolved) {
		return err
	}
	return nil
}

// errNotIntended marks a post that was not made because the history could
// not record its intent first.
var errNotIntended = errors.New("nothing posted: the history must record a post before it is made, and could not")

// outbox is the one way a run posts a new message of any kind: through
// Slack, recorded in the history (nil: only posted), with guard checked
// immediately before the post.
type outbox struct {
	slack   *alert.Notifier
	history *history.History
	guard   func(ctx context.Context) error
}

// deliver posts m, the new message in, through the outbox: in is recorded
// as pending first (a history that cannot take it means no post, an error
// matching errNotIntended), the guard is checked, in is marked sent (so
// that a run that dies before the post leaves a post the next run knows
// never left, and gives up), m is posted as it is
// (with a bot token, carrying in's id in its metadata so that a rerun can
// find it), and the outcome is recorded: Slack accepted it
// (history.MarkPosted, with the channel and ts Slack returned: what it
// told counts as told) or refused it (history.Abandon: nothing of it
// counts). posted says whether Slack took m.
//
// A post whose answer never came (alert.ErrUnconfirmed) stays pending: the
// next run settles it (resolvePending) before it decides anything. Without
// history m is only posted.
func (o outbox) deliver(ctx context.Context, in history.Intent, m alert.Message) (ch, ts string, posted bool, err error) {
	if o.history == nil {
		if err := o.guard(ctx); err != nil {
			return "", "", false, fmt.Errorf("nothing posted: %w", err)
		}
		ch, ts, err := o.slack.Post(ctx, m, alert.PostMark{})
		return ch, ts, err == nil, err
	}
	act := outboxAct{done: "posted", undone: "nothing posted", pending: "it stays pending in the history (post %d), and the next run settles it before posting again"}
	return o.through(ctx, in, act, func(mark alert.PostMark) (string, string, error) { return o.slack.Post(ctx, m, mark) })
}

// edit makes the bot's edit in of the message in.Channel/in.TS into m,
// through the outbox as deliver posts: recorded as pending first, the
// guard checked, marked sent, made with in's mark in the message's
// metadata (alert.Notifier.UpdateMarked: a rerun finds it there,
// resolvePending), then recorded as made (history.MarkPosted: its days
// told) or given up when Slack refused it. gone reports a message that can
// no longer be edited (alert.Gone): the edit is given up, and its news
// goes into a new message.
func (o outbox) edit(ctx context.Context, in history.Intent, m alert.Message) (gone bool, err error) {
	act := outboxAct{done: "edited", undone: "nothing edited", pending: "the edit stays pending in the history (post %d), and the next run settles it"}
	_, _, _, err = o.through(ctx, in, act, func(mark alert.PostMark) (string, string, error) {
		if err := o.slack.UpdateMarked(ctx, in.Channel, in.TS, m, mark); err != nil {
			// Slack's refusal, whose code says the message is gone; an
			// edit without an answer is not one.
			gone = !errors.Is(err, alert.ErrUnconfirmed) && alert.Gone(err)
			return "", "", err
		}
		return in.Channel, in.TS, nil
	})
	return gone, err
}

// outboxAct names, in a message's errors, what the outbox does through
// Slack.
type outboxAct struct {
	done    string // "posted": Slack took it
	undone  string // "nothing posted": it was not made
	pending string // why it stays pending, with the post's id (%d)
}

// through makes one Slack action of in through the outbox: in is recorded
// as pending first (a history that cannot take it means no action, an
// error matching errNotIntended), the guard is checked, in is marked sent
// (so that a run that dies before the action leaves a post the next run
// knows never left, and gives up), do makes the action with in's mark,
// and its outcome is recorded: made (history.MarkPosted with the channel
// and ts do returns, even when the run is stopping: Slack has it) or
// refused (history.Abandon). An action whose
// answer never came (alert.ErrUnconfirmed) stays pending: the next run
// settles it (resolvePending) before it decides anything. made says
// whether Slack took the action.
func (o outbox) through(ctx context.Context, in history.Intent, act outboxAct, do func(alert.PostMark) (ch, ts string, err error)) (ch, ts string, made bool, err error) {
	id, err := o.history.Intend(ctx, in)
	if err != nil {
		return "", "", false, fmt.Errorf("%w: %w", errNotIntended, err)
	}
	if err := o.guard(ctx); err != nil {
		return "", "", false, errors.Join(fmt.Errorf("%s: %w", act.undone, err), abandon(ctx, o.history, id))
	}
	if err := o.history.MarkSent(ctx, id); err != nil {
		return "", "", false, errors.Join(fmt.Errorf("%w: %w", errNotIntended, err), abandon(ctx, o.history, id))
	}
	ch, ts, err = do(alert.PostMark{ID: id, RunKey: in.RunKey})
	if errors.Is(err, alert.ErrUnconfirmed) {
		return "", "", false, fmt.Errorf("%w; "+act.pending, err, id)
	}
	if err != nil {
		return "", "", false, errors.Join(err, abandon(ctx, o.history, id))
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := o.history.MarkPosted(mctx, id, ch, ts); err != nil {
		return ch, ts, true, fmt.Errorf("%s, but not recorded in the history; it stays pending (post %d) and the next run settles it: %w", act.done, id, err)
	}
	return ch, ts, true, nil
}

// abandon gives up the intended post id, which was never made or which
// Slack refused, even when the run is stopping. A failure leaves it
// pending, for the next run to settle.
func abandon(ctx context.Context, h *history.History, id int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := h.Abandon(ctx, id); err != nil {
		return fmt.Errorf("the next run settles it: %w", err)
	}
	return nil
}
