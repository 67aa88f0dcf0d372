// Package alert renders what a run found as Slack messages and carries
// them to Slack, through an incoming webhook or a bot token.
//
// Render, RenderWith, RenderUpdate, RenderNotice and RenderRecovered
// build Block Kit messages and are pure; every message fits Slack's limits
// and has a plain-text fallback. A Notifier is the transport: Post posts a
// message (a bot post may carry a mark in its metadata, which FindPosted
// reads back from the channel), Update edits one in place and Attach puts
// a file in its thread. What to post, and when, is decided by the caller
// over the run history; this package neither reads nor writes it.
//
// A post is never retried when Slack may have acted on it: such a failure
// matches ErrUnconfirmed, one only a configuration change can mend
// ErrMisconfigured. Neither the webhook URL nor the token ever appears in
// an error or a log line: errors from slack-go and net/http quote the
// request URL, so they are rewritten before they leave the package.
package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/internal/backoff"
	"github.com/clickrecon/clickrecon/internal/secret"
)

// SLACK_NOTIFY values.
const (
	NotifyGaps   = "gaps"   // post when a settled gap is new; update on changes and heals
	NotifyAlways = "always" // post every run, gaps or not
)

// ParseNotify reads SLACK_NOTIFY, which is checked here only: gaps (also
// when empty) or always.
func ParseNotify(s string) (string, error) {
	switch s {
	case "":
		return NotifyGaps, nil
	case NotifyGaps, NotifyAlways:
		return s, nil
	}
	return "", fmt.Errorf("SLACK_NOTIFY must be %s or %s, got %q", NotifyGaps, NotifyAlways, s)
}

// The transports, as Transport names them and the run history records
// them.
const (
	TransportWebhook = "webhook" // an incoming webhook: no channel, no ts, no edits
	TransportBot     = "bot"     // a bot token: messages can be edited in place and read back
)

// DefaultAPIURL is Slack's Web API, used with a bot token when APIURL is
// empty.
const DefaultAPIURL = "https://slack.com/api/"

// defaultRequestTimeout bounds one request to Slack when the caller's
// HTTPClient has no timeout of its own.
const defaultRequestTimeout = 30 * time.Second

// Config says where alerts go: WebhookURL, or BotToken with Channel.
type Config struct {
	WebhookURL string       // SLACK_WEBHOOK_URL
	BotToken   string       // SLACK_BOT_TOKEN: scopes chat:write, files:write and channels:history (or groups:history)
	Channel    string       // SLACK_CHANNEL: an ID (C0123ABC), which reading a post back needs; a name posts but cannot be read back
	APIURL     string       // SLACK_API_URL: the Web API base, default DefaultAPIURL
	Notify     string       // SLACK_NOTIFY, as ParseNotify read it: NotifyGaps (default) or NotifyAlways
	HTTPClient *http.Client // default: a client with a 30s timeout
	Logger     *slog.Logger // a line per retried call; nil logs nothing
}

// String describes cfg with its secrets redacted.
func (cfg Config) String() string {
	return fmt.Sprintf("alert.Config{WebhookURL: %s, BotToken: %s, Channel: %q, APIURL: %q, Notify: %q}",
		redacted(cfg.WebhookURL), redacted(cfg.BotToken), cfg.Channel, secret.URL(cfg.APIURL), cfg.Notify)
}

// GoString is String, so that %#v redacts too.
func (cfg Config) GoString() string { return cfg.String() }

// LogValue logs cfg with its secrets redacted.
func (cfg Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("webhook_url", redacted(cfg.WebhookURL)),
		slog.String("bot_token", redacted(cfg.BotToken)),
		slog.String("channel", cfg.Channel),
		slog.String("api_url", secret.URL(cfg.APIURL)),
		slog.String("notify", cfg.Notify),
	)
}

func redacted(secret string) string {
	if secret == "" {
		return "(unset)"
	}
	return "[redacted]"
}

// Notifier posts a run's alerts to one Slack destination.
type Notifier struct {
	transport  string // TransportWebhook or TransportBot
	webhookURL string
	api        *slack.Client // nil for a webhook
	channel    string
	notify     string
	httpClient *http.Client
	log        *slog.Logger
	secrets    []string // never shown in an error or a log line

	callTimeout time.Duration // one attempt of one call (defaultCallTimeout unless an option sets it)

	now   func() time.Time
	retry backoff.Policy // slackRetry, with the clock's sleep

	fleet string // the fleet workspace every message is of ("": none)
}

// Option adjusts a Notifier beyond its Config.
type Option func(*Notifier)

// WithClock replaces the clock the notifier reads and waits on between
// retries, so that tests do not wait out Retry-After for real. sleep must
// return ctx's error if ctx ends first.
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(n *Notifier) {
		n.now = now
		n.retry.Sleep = sleep
	}
}

// WithFleetWorkspace names the fleet workspace (its entry's name) every
// message is of: each message says it first, so that a channel shared by
// several workspaces tells them apart.
func WithFleetWorkspace(name string) Option {
	return func(n *Notifier) { n.fleet = name }
}

// labelled is m as it is posted: with the fleet workspace's name first,
// in the text and as a context block (when the blocks have room).
func (n *Notifier) labelled(m Message) Message {
	if n.fleet == "" {
		return m
	}
	name := clipRunes(n.fleet, 63)
	m.Text = "[" + name + "] " + m.Text
	if len(m.Blocks) > 0 && len(m.Blocks) < maxBlocks {
		label := slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "Fleet workspace *"+esc(name)+"*", false, false))
		m.Blocks = append([]slack.Block{label}, m.Blocks...)
	}
	return m
}

// New checks cfg and returns a notifier, or nil and no error when cfg
// configures no Slack at all. Its errors name the variable to fix and
// never quote a secret.
func New(cfg Config, opts ...Option) (*Notifier, error) {
	if cfg.WebhookURL == "" && cfg.BotToken == "" && cfg.Channel == "" && cfg.APIURL == "" {
		return nil, nil
	}
	n := &Notifier{
		channel:    cfg.Channel,
		notify:     cfg.Notify,
		httpClient: cfg.HTTPClient,
		log:        cfg.Logger,
		now:        time.Now,
		retry:      slackRetry,
	}
	if n.notify != NotifyAlways {
		n.notify = NotifyGaps
	}
	if n.httpClient == nil {
		n.httpClient = &http.Client{Timeout: defaultRequestTimeout}
	}
	n.httpClient = httpClient(n.httpClient, cfg.WebhookURL != "") // redirects: see transport.go
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	var err error
	switch {
	case cfg.WebhookURL != "" && cfg.BotToken != "":
		return nil, errors.New("SLACK_WEBHOOK_URL and SLACK_BOT_TOKEN are both set: set one of them (a bot token can edit alerts and attach the CSV)")
	case cfg.WebhookURL != "":
		err = n.useWebhook(cfg)
	case cfg.BotToken != "":
		err = n.useBot(cfg)
	case cfg.Channel != "":
		return nil, errors.New("SLACK_CHANNEL is set but SLACK_BOT_TOKEN is not: set SLACK_BOT_TOKEN, or use SLACK_WEBHOOK_URL alone")
	default:
		return nil, errors.New("SLACK_API_URL is set but SLACK_BOT_TOKEN is not: set SLACK_BOT_TOKEN and SLACK_CHANNEL")
	}
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(n)
	}
	if n.callTimeout <= 0 {
		n.callTimeout = defaultCallTimeout
	}
	return n, nil
}

// useWebhook checks cfg's incoming webhook and makes it n's transport,
// noting the URL's secret parts so that no error or log line shows them.
func (n *Notifier) useWebhook(cfg Config) error {
	if cfg.Channel != "" {
		return errors.New("SLACK_CHANNEL is set with SLACK_WEBHOOK_URL: an incoming webhook always posts to the channel it was created for; unset SLACK_CHANNEL, or use SLACK_BOT_TOKEN")
	}
	if cfg.APIURL != "" {
		return errors.New("SLACK_API_URL is set with SLACK_WEBHOOK_URL: it applies only to SLACK_BOT_TOKEN; unset it")
	}
	u, err := url.Parse(cfg.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// Neither the URL nor err (which quotes it) is shown.
		return errors.New("SLACK_WEBHOOK_URL is not a URL such as https://hooks.slack.com/services/T…/B…/…")
	}
	n.transport = TransportWebhook
	n.webhookURL = cfg.WebhookURL
	n.secrets = append(n.secrets, cfg.WebhookURL, u.String(), u.RawQuery)
	if len(u.Path) > 1 { // the path is the webhook's secret
		n.secrets = append(n.secrets, u.Path, u.EscapedPath())
	}
	return nil
}

// useBot checks cfg's bot token, channel and API URL and makes the bot
// n's transport, noting the token (and any password in the URL) so that
// no error or log line shows them.
func (n *Notifier) useBot(cfg Config) error {
	if cfg.Channel == "" {
		return errors.New("SLACK_BOT_TOKEN is set but SLACK_CHANNEL is not: set the channel's ID (C0123ABC…) or name")
	}
	if strings.ContainsAny(cfg.BotToken, " \t\r\n") {
		return errors.New("SLACK_BOT_TOKEN contains white space (a line break from SLACK_BOT_TOKEN_FILE?)")
	}
	if strings.ContainsAny(cfg.Channel, " \t\r\n") {
		return fmt.Errorf("SLACK_CHANNEL %q contains white space: use the channel's ID (C0123ABC…) or name", cfg.Channel)
	}
	apiURL := cfg.APIURL
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("SLACK_API_URL is not a URL such as https://slack.com/api/")
	}
	if !strings.HasSuffix(apiURL, "/") { // slack-go appends the method name
		apiURL += "/"
	}
	n.transport = TransportBot
	n.secrets = append(n.secrets, cfg.BotToken, url.QueryEscape(cfg.BotToken))
	if pw, ok := u.User.Password(); ok {
		n.secrets = append(n.secrets, pw)
	}
	n.api = slack.New(cfg.BotToken, slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(n.httpClient))
	return nil
}
