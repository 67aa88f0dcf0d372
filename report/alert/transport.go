package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/internal/backoff"
	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// slackRetry is the retry policy of every Slack call. A call is retried
// only when a retry cannot post twice:
//
//   - 429: Slack did not act on the request. Wait Retry-After (up to 10
//     minutes; a longer one is not waited for) and retry, whatever the
//     call.
//   - The connection failed before the request was sent (refused, DNS): it
//     never reached Slack. Retry with backoff, whatever the call.
//   - An incoming webhook's 5xx: Slack answered that it did not post the
//     message. Retried with backoff, as a refusal that may pass.
//   - A Web API 5xx, a timeout or a connection lost after the request was
//     sent, and Slack's own internal_error, fatal_error and
//     service_unavailable: Slack may or may not have acted. Retried only
//     for calls that are safe to repeat (chat.update,
//     files.getUploadURLExternal, the upload itself: call.repeatable);
//     never for a post (the webhook's lost answer, chat.postMessage,
//     files.completeUploadExternal), which then fails the send. A failed
//     send ends the run with exit 3 and a Job retry may post again, which is
//     a duplicate only if Slack had in fact posted despite the error.
//
// Up to 4 attempts per call, the first included, 1 s, 2 s, 4 s apart.
var slackRetry = backoff.Policy{
	Attempts:      4,
	Wait:          time.Second,
	Doubling:      true,
	MaxRetryAfter: 10 * time.Minute,
	RateLimited:   true,
	Unsure:        nil, // every 5xx
	RepeatUnsure:  false,
}

const (
	// defaultCallTimeout bounds one attempt of one call: a Slack that
	// never answers costs the run this much per attempt, well within the
	// run's deadline (RECON_TIMEOUT, 30m by default), which leaves time to
	// record what happened. The run's own deadline still wins when nearer.
	defaultCallTimeout = 20 * time.Second
)

// ErrUnconfirmed marks a failed call whose answer never came (no answer
// within the call's timeout, the connection lost after the request was
// sent, the run stopping mid-request) or does not say whether Slack acted
// (a 5xx, internal_error): the message may have been posted. A caller
// treats such a post as pending, to be resolved, not as one Slack refused;
// a refusal (4xx, an ok:false error code, a redirect) does not match it.
var ErrUnconfirmed = errors.New("slack did not confirm the call: it may have been posted")

// WithCallTimeout replaces the bound on one attempt of one Slack call
// (default 20s).
func WithCallTimeout(d time.Duration) Option {
	return func(n *Notifier) { n.callTimeout = d }
}

// httpClient returns c with the redirect policy of a Slack destination
// (see internal/safehttp): an incoming webhook follows no redirect at
// all, since a 3xx means Slack did not post and following it would hand
// the alert, and the webhook URL, to whatever it points at; the Web API
// follows redirects only within its origin, so the bot token never
// leaves it. No request carries Referer.
func httpClient(c *http.Client, webhook bool) *http.Client {
	if webhook {
		return safehttp.Client(c, safehttp.NoRedirects)
	}
	return safehttp.Client(c, safehttp.SameOrigin)
}

// call names one Slack request for logs, errors and the retry policy.
type call struct {
	name       string // webhook, chat.postMessage, …
	repeatable bool   // repeating it cannot post twice
}

var (
	callWebhook    = call{name: "webhook"}
	callPost       = call{name: "chat.postMessage"}
	callUpdate     = call{name: "chat.update", repeatable: true}
	callUploadURL  = call{name: "files.getUploadURLExternal", repeatable: true}
	callUpload     = call{name: "file upload", repeatable: true}
	callCompleteUp = call{name: "files.completeUploadExternal"}
)

// do runs fn until it succeeds, fails in a way the retry policy does not
// retry, runs out of attempts, or ctx ends. Its error never holds a secret.
//
// Each attempt is bounded by the call timeout. The error matches
// ErrUnconfirmed when any attempt may have reached Slack without an answer
// that says what it did.
func (n *Notifier) do(ctx context.Context, c call, fn func(ctx context.Context) error, secrets ...string) error {
	timeout := n.callTimeout
	var unsure error // ErrUnconfirmed once an attempt may have acted unseen
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil { // not sent: nothing to confirm
			return n.redact(fmt.Errorf("%s: not sent: %w", c.name, err), errors.Join(unsure, err), secrets)
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := fn(actx)
		timedOut := err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			return nil
		}
		if unconfirmed(err, c) {
			unsure = ErrUnconfirmed
		}
		if timedOut {
			err = fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		if ctx.Err() != nil {
			return n.redact(fmt.Errorf("%s: %w", c.name, err), errors.Join(unsure, ctx.Err()), secrets)
		}
		wait, retry := n.retryAfter(err, c, attempt)
		if !retry || !n.retry.Again(attempt) {
			if retry {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			} else if _, ambiguous := n.retryAfter(err, call{repeatable: true}, attempt); ambiguous {
				err = fmt.Errorf("%w (not retried: Slack may have acted on it, and a retry could post twice)", err)
			}
			var cause error
			if misconfigured(err) {
				cause = ErrMisconfigured
			}
			if errors.Is(err, safehttp.ErrRedirect) {
				cause = errors.Join(cause, safehttp.ErrRedirect)
			}
			if h := hint(err); h != "" {
				err = fmt.Errorf("%w: %s", err, h)
			}
			return n.redact(fmt.Errorf("%s: %w", c.name, err), errors.Join(cause, unsure), secrets)
		}
		if !n.retry.Follows(wait) {
			return n.redact(fmt.Errorf("%s: Slack asked to wait %s, longer than clickrecon waits (%s): %w", c.name, wait, n.retry.MaxRetryAfter, err), unsure, secrets)
		}
		if deadline, ok := ctx.Deadline(); ok && n.now().Add(wait).After(deadline) {
			return n.redact(fmt.Errorf("%s: Slack asked to wait %s, beyond the run's deadline: %w", c.name, wait, err), errors.Join(unsure, context.DeadlineExceeded), secrets)
		}
		n.log.Warn("slack call failed, retrying", "call", c.name, "attempt", attempt, "wait", wait,
			"err", n.redact(err, nil, secrets).Error())
		if err := n.retry.Pause(ctx, wait); err != nil {
			return n.redact(fmt.Errorf("%s: waiting to retry: %w", c.name, err), errors.Join(unsure, err), secrets)
		}
	}
}

// retryAfter says whether err may be retried under the policy above, and
// after how long.
func (n *Notifier) retryAfter(err error, c call, attempt int) (time.Duration, bool) {
	wait := n.retry.Backoff(attempt)
	// Slack may have acted: repeat only what cannot post twice.
	unsure := n.retry.RepeatUnsure || c.repeatable
	if errors.Is(err, safehttp.ErrRedirect) { // the same answer would come again
		return 0, false
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, time.Second), true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) { // a 429 here came without Retry-After
		// A webhook's 5xx says it did not post (unconfirmed): a retry
		// cannot post twice.
		if n.retry.RetryStatus(sc.Code, c.repeatable || c == callWebhook) {
			return wait, true
		}
		return 0, false
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "rate_limited":
			return wait, true
		case "request_timeout": // Slack did not receive the whole request
			return wait, true
		case "internal_error", "fatal_error", "service_unavailable":
			return wait, unsure
		}
		return 0, false
	}
	if notSent(err) {
		return wait, true
	}
	// Any other transport failure (a timeout, a reset, EOF: net/http wraps
	// them all in a *url.Error, a net.Error) may have reached Slack.
	var ne net.Error
	if errors.As(err, &ne) {
		return wait, unsure
	}
	return 0, false
}

// unconfirmed reports whether err, from call c, leaves open whether Slack
// acted on the request: no answer came after it may have been sent, or
// the Web API's answer (a 5xx, internal_error) does not say. An incoming
// webhook's answer always says: a 5xx is Slack saying it did not post
// the message, a refusal like any other (the message is posted again
// unmarked, never taken as possibly delivered). A bot's post, which can
// be read back, is settled by reading it back.
func unconfirmed(err error, c call) bool {
	if errors.Is(err, safehttp.ErrRedirect) || notSent(err) {
		return false
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return false
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Code >= 500 && c != callWebhook
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "internal_error", "fatal_error", "service_unavailable":
			return true
		}
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// ErrMisconfigured marks a Slack failure only a change of configuration
// can mend: a webhook removed or refused, a token revoked or lacking a
// scope, a channel that does not exist, is archived or lacks the bot.
var ErrMisconfigured = errors.New("slack is misconfigured")

// misconfigured reports whether err is such a failure.
func misconfigured(err error) bool {
	if errors.Is(err, safehttp.ErrRedirect) {
		return true // the URL points at a redirector, not at Slack
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		switch sc.Code {
		case http.StatusForbidden, http.StatusNotFound, http.StatusGone:
			return true
		}
		return false
	}
	switch slackErrorCode(err) {
	case "not_authed", "invalid_auth", "token_revoked", "token_expired", "account_inactive",
		"missing_scope", "channel_not_found", "not_in_channel", "is_archived":
		return true
	}
	return false
}

// hint says what to do about a failure a retry cannot fix.
func hint(err error) string {
	if errors.Is(err, safehttp.ErrRedirect) {
		return "Slack answered with a redirect, so nothing was posted and nothing was sent on: set SLACK_WEBHOOK_URL or SLACK_API_URL to the URL Slack gives, not one that redirects"
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) { // the webhook answers with a status
		switch sc.Code {
		case http.StatusBadRequest:
			return "Slack refused the message (invalid_payload or invalid_blocks)"
		case http.StatusForbidden:
			return "the webhook may not post here (action_prohibited)"
		case http.StatusNotFound:
			return "the webhook was removed or the URL is wrong (no_service): create a new one and update SLACK_WEBHOOK_URL"
		case http.StatusGone:
			return "the webhook's channel was archived (channel_is_archived): create a webhook for another channel"
		}
		return ""
	}
	switch slackErrorCode(err) {
	case "not_authed", "invalid_auth", "token_revoked", "token_expired", "account_inactive":
		return "SLACK_BOT_TOKEN is not valid: install the app again and update it"
	case "missing_scope":
		return "the bot token lacks a scope: add chat:write, files:write and channels:history (groups:history for a private channel), then reinstall the app"
	case "channel_not_found", "not_in_channel":
		return "check SLACK_CHANNEL and invite the bot to the channel (/invite @app)"
	case "is_archived":
		return "SLACK_CHANNEL is archived: choose another channel"
	case "invalid_blocks", "invalid_blocks_format", "msg_too_long":
		return "Slack refused the message's blocks"
	}
	return ""
}

func slackErrorCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// notSent reports whether err happened before the request left: a refused
// connection or a name that did not resolve.
func notSent(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// redact returns err's message with every secret replaced, as a new error
// that keeps only cause (a context error, or nil) in its chain: the errors
// slack-go and net/http return quote the URL, which for a webhook is the
// secret. Slack's error code (message_not_found, …), which holds no
// secret, is kept for slackCode.
func (n *Notifier) redact(err error, cause error, extra []string) error {
	msg := err.Error()
	for _, s := range append(append([]string(nil), n.secrets...), extra...) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	re := &redactedError{msg: msg, cause: cause, code: slackErrorCode(err)}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		re.status = sc.Code
	}
	return re
}

type redactedError struct {
	msg    string
	cause  error
	code   string
	status int // the HTTP status of a webhook's answer, when it failed on it
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// slackCode returns the error code of the Web API answer behind err, or "".
func slackCode(err error) string {
	var re *redactedError
	if errors.As(err, &re) {
		return re.code
	}
	return ""
}

// postWebhook posts m to the incoming webhook, and its plain text alone if
// Slack refuses the blocks.
func (n *Notifier) postWebhook(ctx context.Context, m Message) error {
	m = n.labelled(m)
	err := n.webhookOnce(ctx, m)
	if !n.blocksRefused(err, m) {
		return err
	}
	n.log.Warn("slack refused the blocks, posting the plain-text fallback", "call", callWebhook.name, "err", err.Error())
	if ferr := n.webhookOnce(ctx, plainText(m)); ferr != nil {
		return fmt.Errorf("%w; the plain-text fallback failed too: %w", err, ferr)
	}
	return nil
}

func (n *Notifier) webhookOnce(ctx context.Context, m Message) error {
	msg := &slack.WebhookMessage{Text: m.Text}
	if len(m.Blocks) > 0 {
		msg.Blocks = &slack.Blocks{BlockSet: m.Blocks}
	}
	return n.do(ctx, callWebhook, func(ctx context.Context) error {
		return slack.PostWebhookCustomHTTPContext(ctx, n.webhookURL, n.httpClient, msg)
	})
}

// postMessage posts m to channel with the bot token, or its plain text
// alone if Slack refuses the blocks, and returns the channel's ID and the
// message's ts.
func (n *Notifier) postMessage(ctx context.Context, channel string, m Message, extra ...slack.MsgOption) (string, string, error) {
	m = n.labelled(m)
	ch, ts, err := n.postMessageOnce(ctx, channel, m, extra...)
	if !n.blocksRefused(err, m) {
		return ch, ts, err
	}
	n.log.Warn("slack refused the blocks, posting the plain-text fallback", "call", callPost.name, "err", err.Error())
	ch, ts, ferr := n.postMessageOnce(ctx, channel, plainText(m), extra...)
	if ferr != nil {
		return "", "", fmt.Errorf("%w; the plain-text fallback failed too: %w", err, ferr)
	}
	return ch, ts, nil
}

func (n *Notifier) postMessageOnce(ctx context.Context, channel string, m Message, extra ...slack.MsgOption) (string, string, error) {
	var ch, ts string
	err := n.do(ctx, callPost, func(ctx context.Context) error {
		var err error
		ch, ts, err = n.api.PostMessageContext(ctx, channel, append(msgOptions(m), extra...)...)
		return err
	})
	return ch, ts, err
}

// updateMessage replaces the message ts in channel with m, or with its
// plain text alone if Slack refuses the blocks.
func (n *Notifier) updateMessage(ctx context.Context, channel, ts string, m Message, extra ...slack.MsgOption) error {
	m = n.labelled(m)
	update := func(m Message) error {
		return n.do(ctx, callUpdate, func(ctx context.Context) error {
			_, _, _, err := n.api.UpdateMessageContext(ctx, channel, ts, append(msgOptions(m), extra...)...)
			return err
		})
	}
	err := update(m)
	if !n.blocksRefused(err, m) {
		return err
	}
	n.log.Warn("slack refused the blocks, updating with the plain-text fallback", "call", callUpdate.name, "err", err.Error())
	if ferr := update(plainText(m)); ferr != nil {
		return fmt.Errorf("%w; the plain-text fallback failed too: %w", err, ferr)
	}
	return nil
}

func msgOptions(m Message) []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false)}
	if len(m.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(m.Blocks...))
	}
	return opts
}

// blocksRefused reports whether err is Slack refusing m's blocks, so that
// the same content as plain text may still go out: invalid_blocks (or
// invalid_blocks_format) from the Web API; from a webhook, a 400, which is
// how it refuses a payload (its body, invalid_blocks or invalid_payload,
// is not passed on by slack-go; a text-only payload is the remedy for
// both). A message without blocks has no fallback.
func (n *Notifier) blocksRefused(err error, m Message) bool {
	if err == nil || len(m.Blocks) == 0 {
		return false
	}
	var re *redactedError
	if !errors.As(err, &re) {
		return false
	}
	switch re.code {
	case "invalid_blocks", "invalid_blocks_format":
		return true
	}
	return n.api == nil && re.status == http.StatusBadRequest
}

// attach uploads content as a file into the thread of the message ts in
// channel, with files upload v2: get an upload URL, upload, complete.
func (n *Notifier) attach(ctx context.Context, channel, ts, filename, title string, content []byte) error {
	var up *slack.GetUploadURLExternalResponse
	err := n.do(ctx, callUploadURL, func(ctx context.Context) error {
		var err error
		up, err = n.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: filename, FileSize: len(content)})
		return err
	})
	if err != nil {
		return err
	}
	// The upload URL is a capability: it stays out of errors too.
	err = n.do(ctx, callUpload, func(ctx context.Context) error {
		return n.api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: up.UploadURL, Reader: bytes.NewReader(content), Filename: filename})
	}, up.UploadURL)
	if err != nil {
		return err
	}
	return n.do(ctx, callCompleteUp, func(ctx context.Context) error {
		_, err := n.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files:           []slack.FileSummary{{ID: up.FileID, Title: title}},
			Channel:         channel,
			ThreadTimestamp: ts,
		})
		return err
	})
}

// Transport names how the notifier reaches Slack: TransportWebhook or
// TransportBot.
func (n *Notifier) Transport() string { return n.transport }

// Post posts m by the configured transport and returns the channel's ID
// and the message's ts (a webhook returns neither). A message that breaks
// a Slack limit goes as its bare fallback text, and one whose blocks Slack
// refuses as its plain text: an alert must not be lost to invalid_blocks.
// A bot post carries mark in its metadata (see FindPosted); the zero mark,
// and a webhook, carry none.
//
// A post is never retried when Slack may have taken it: an error matching
// ErrUnconfirmed says the message may be in the channel; any other error
// says it is not. The error never holds a secret.
func (n *Notifier) Post(ctx context.Context, m Message, mark PostMark) (channel, ts string, err error) {
	m = checked(m)
	if n.api == nil {
		return "", "", n.postWebhook(ctx, m)
	}
	var extra []slack.MsgOption
	if mark != (PostMark{}) {
		extra = append(extra, mark.metadata())
	}
	return n.postMessage(ctx, n.channel, m, extra...)
}

// Update replaces the bot message ts in channel with m, checked as Post
// checks it; an update is retried, since a repeat changes nothing. Gone
// tells the failures of a message that can no longer be edited.
func (n *Notifier) Update(ctx context.Context, channel, ts string, m Message) error {
	if n.api == nil {
		return errors.New("a webhook's messages cannot be edited: set SLACK_BOT_TOKEN and SLACK_CHANNEL instead")
	}
	return n.updateMessage(ctx, channel, ts, checked(m))
}

// UpdateMarked is Update that puts mark in the message's metadata in
// place of the post's, so that a rerun that never learned whether the
// edit was made can find out (FindEdited). Its error matches
// ErrUnconfirmed when the edit may have been made unseen.
func (n *Notifier) UpdateMarked(ctx context.Context, channel, ts string, m Message, mark PostMark) error {
	if n.api == nil {
		return errors.New("a webhook's messages cannot be edited: set SLACK_BOT_TOKEN and SLACK_CHANNEL instead")
	}
	return n.updateMessage(ctx, channel, ts, checked(m), mark.metadata())
}

// Attach uploads data as the file filename, titled title, into the thread
// of the bot message ts in channel, with files upload v2.
func (n *Notifier) Attach(ctx context.Context, channel, ts, filename, title string, data []byte) error {
	if n.api == nil {
		return errors.New("a webhook cannot attach a file: set SLACK_BOT_TOKEN and SLACK_CHANNEL instead")
	}
	return n.attach(ctx, channel, ts, filename, title, data)
}

// Gone reports whether err, from Update, says the message can no longer
// be edited (deleted, archived channel, too old): its news is then posted
// as a new message instead.
func Gone(err error) bool {
	switch slackCode(err) {
	case "message_not_found", "cant_update_message", "edit_window_closed", "channel_not_found", "is_archived", "not_in_channel":
		return true
	}
	return false
}

// checked returns m, or the bare fallback text if m broke a Slack limit:
// an alert must not be lost to invalid_blocks.
func checked(m Message) Message {
	if m.Validate() != nil {
		return minimal(m)
	}
	return m
}
