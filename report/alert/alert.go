// Package alert tells Slack what a run found: one Block Kit message per run
// with settled gaps (or every run, with SLACK_NOTIFY=always), through an
// incoming webhook or a bot token, never repeated and, with history,
// updated or marked healed when the numbers change.
//
// Render and RenderUpdate build messages and are pure; Send decides what
// to post from the report and what history says was alerted before, posts
// it, records it, and with a bot token attaches the report's CSV in the
// alert's thread and edits earlier alerts in place.
//
// De-duplication is by day: history keeps, for each (workspace, zone,
// date), the status and counts last alerted and the message (channel, ts)
// that showed them. A settled gap never alerted, or alerted and healed
// since, is new and makes a run post an alert. A gap alerted with the same
// status and counts is not alerted again. One whose counts changed, and
// one that matches now, update the message that showed it: in place
// (chat.update) with a bot token, as a short new message with a webhook,
// and in the "since the last alert" section when the run posts an alert
// anyway. Provisional and unverifiable days are never alerted as gaps and
// never heal anything. Without history every run alerts on what it finds.
//
// Neither the webhook URL nor the token ever appears in an error or a log
// line: errors from slack-go and net/http quote the request URL, so they
// are rewritten before they leave the package.
package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// SLACK_NOTIFY values.
const (
	NotifyGaps   = "gaps"   // post when a settled gap is new; update on changes and heals
	NotifyAlways = "always" // post every run, gaps or not
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
	BotToken   string       // SLACK_BOT_TOKEN: scopes chat:write and files:write
	Channel    string       // SLACK_CHANNEL: an ID (C0123ABC) or a name the bot is a member of
	APIURL     string       // SLACK_API_URL: the Web API base, default DefaultAPIURL
	Notify     string       // SLACK_NOTIFY: NotifyGaps (default) or NotifyAlways
	HTTPClient *http.Client // default: a client with a 30s timeout
	Logger     *slog.Logger // a line per retried call; nil logs nothing
}

// String describes cfg with its secrets redacted.
func (cfg Config) String() string {
	return fmt.Sprintf("alert.Config{WebhookURL: %s, BotToken: %s, Channel: %q, APIURL: %q, Notify: %q}",
		redacted(cfg.WebhookURL), redacted(cfg.BotToken), cfg.Channel, redactedURL(cfg.APIURL), cfg.Notify)
}

// GoString is String, so that %#v redacts too.
func (cfg Config) GoString() string { return cfg.String() }

// LogValue logs cfg with its secrets redacted.
func (cfg Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("webhook_url", redacted(cfg.WebhookURL)),
		slog.String("bot_token", redacted(cfg.BotToken)),
		slog.String("channel", cfg.Channel),
		slog.String("api_url", redactedURL(cfg.APIURL)),
		slog.String("notify", cfg.Notify),
	)
}

func redacted(secret string) string {
	if secret == "" {
		return "(unset)"
	}
	return "[redacted]"
}

// redactedURL shows a URL that is not itself a secret, such as
// SLACK_API_URL, without a password or query it might carry.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	u.RawQuery = ""
	return u.Redacted()
}

// Notifier posts a run's alerts to one Slack destination.
type Notifier struct {
	transport  string // history.TransportWebhook or history.TransportBot
	webhookURL string
	api        *slack.Client // nil for a webhook
	channel    string
	notify     string
	httpClient *http.Client
	log        *slog.Logger
	secrets    []string // never shown in an error or a log line

	callTimeout time.Duration // one attempt of one call; 0 is defaultCallTimeout

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// Option adjusts a Notifier beyond its Config.
type Option func(*Notifier)

// WithClock replaces the clock the notifier reads and waits on between
// retries, so that tests do not wait out Retry-After for real. sleep must
// return ctx's error if ctx ends first.
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(n *Notifier) {
		n.now = now
		n.sleep = sleep
	}
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
		sleep:      sleep,
	}
	switch n.notify {
	case "":
		n.notify = NotifyGaps
	case NotifyGaps, NotifyAlways:
	default:
		return nil, fmt.Errorf("SLACK_NOTIFY must be %s or %s, got %q", NotifyGaps, NotifyAlways, cfg.Notify)
	}
	if n.httpClient == nil {
		n.httpClient = &http.Client{Timeout: defaultRequestTimeout}
	}
	n.httpClient = httpClient(n.httpClient, cfg.WebhookURL != "") // redirects: see transport.go
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.WebhookURL != "" && cfg.BotToken != "":
		return nil, errors.New("SLACK_WEBHOOK_URL and SLACK_BOT_TOKEN are both set: set one of them (a bot token can edit alerts and attach the CSV)")
	case cfg.WebhookURL != "":
		if cfg.Channel != "" {
			return nil, errors.New("SLACK_CHANNEL is set with SLACK_WEBHOOK_URL: an incoming webhook always posts to the channel it was created for; unset SLACK_CHANNEL, or use SLACK_BOT_TOKEN")
		}
		if cfg.APIURL != "" {
			return nil, errors.New("SLACK_API_URL is set with SLACK_WEBHOOK_URL: it applies only to SLACK_BOT_TOKEN; unset it")
		}
		u, err := url.Parse(cfg.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			// Neither the URL nor err (which quotes it) is shown.
			return nil, errors.New("SLACK_WEBHOOK_URL is not a URL such as https://hooks.slack.com/services/T…/B…/…")
		}
		n.transport = history.TransportWebhook
		n.webhookURL = cfg.WebhookURL
		n.secrets = append(n.secrets, cfg.WebhookURL, u.String(), u.RawQuery)
		if len(u.Path) > 1 { // the path is the webhook's secret
			n.secrets = append(n.secrets, u.Path, u.EscapedPath())
		}
	case cfg.BotToken != "":
		if cfg.Channel == "" {
			return nil, errors.New("SLACK_BOT_TOKEN is set but SLACK_CHANNEL is not: set the channel's ID (C0123ABC…) or name")
		}
		if strings.ContainsAny(cfg.BotToken, " \t\r\n") {
			return nil, errors.New("SLACK_BOT_TOKEN contains white space (a line break from SLACK_BOT_TOKEN_FILE?)")
		}
		if strings.ContainsAny(cfg.Channel, " \t\r\n") {
			return nil, fmt.Errorf("SLACK_CHANNEL %q contains white space: use the channel's ID (C0123ABC…) or name", cfg.Channel)
		}
		apiURL := cfg.APIURL
		if apiURL == "" {
			apiURL = DefaultAPIURL
		}
		u, err := url.Parse(apiURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, errors.New("SLACK_API_URL is not a URL such as https://slack.com/api/")
		}
		if !strings.HasSuffix(apiURL, "/") { // slack-go appends the method name
			apiURL += "/"
		}
		n.transport = history.TransportBot
		n.secrets = append(n.secrets, cfg.BotToken, url.QueryEscape(cfg.BotToken))
		if pw, ok := u.User.Password(); ok {
			n.secrets = append(n.secrets, pw)
		}
		n.api = slack.New(cfg.BotToken, slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(n.httpClient))
	case cfg.Channel != "":
		return nil, errors.New("SLACK_CHANNEL is set but SLACK_BOT_TOKEN is not: set SLACK_BOT_TOKEN, or use SLACK_WEBHOOK_URL alone")
	default:
		return nil, errors.New("SLACK_API_URL is set but SLACK_BOT_TOKEN is not: set SLACK_BOT_TOKEN and SLACK_CHANNEL")
	}
	for _, o := range opts {
		o(n)
	}
	return n, nil
}

// saveAlerts records what Slack already has. The record is written even
// when the run is stopping (SIGTERM, the deadline) right after a post:
// dropping it would post the same alert again on the next run. It is
// bounded on its own.
func saveAlerts(ctx context.Context, h *history.History, m history.Message, rows []history.Alert) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	return h.SaveAlerts(ctx, m, rows)
}

// saveTimeout bounds one record of a Slack action in the history.
const saveTimeout = 10 * time.Second

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Outcome is what Send did, for the run's log line.
type Outcome struct {
	Transport string // webhook or bot
	// Posted is the kind of the new message posted (alert, update or
	// healed); empty when none was. Channel and TS name it (bot token
	// only).
	Posted  string
	Channel string
	TS      string
	Updated []string // earlier alerts edited in place, as channel/ts
	// The report's settled gaps and heals, by what Slack already knew.
	New, Unchanged, Changed, Healed []string
	CSVAttached                     bool
	Skipped                         string   // why nothing was sent
	Warnings                        []string // what failed without failing the send
}

// LogValue logs the outcome's non-empty fields.
func (o Outcome) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("transport", o.Transport)}
	add := func(key string, v any, set bool) {
		if set {
			attrs = append(attrs, slog.Any(key, v))
		}
	}
	add("posted", o.Posted, o.Posted != "")
	add("channel", o.Channel, o.Channel != "")
	add("ts", o.TS, o.TS != "")
	add("updated", o.Updated, len(o.Updated) > 0)
	add("new", o.New, len(o.New) > 0)
	add("unchanged", o.Unchanged, len(o.Unchanged) > 0)
	add("changed", o.Changed, len(o.Changed) > 0)
	add("healed", o.Healed, len(o.Healed) > 0)
	add("csv_attached", o.CSVAttached, o.CSVAttached)
	add("skipped", o.Skipped, o.Skipped != "")
	add("warnings", o.Warnings, len(o.Warnings) > 0)
	return slog.GroupValue(attrs...)
}

// plan is what a report means for Slack, given what was alerted before.
type plan struct {
	fresh   []report.Day // settled gaps not alerted (or healed since)
	same    []report.Day // alerted with these very numbers
	changed []Change     // alerted with other numbers
	healed  []Change     // alerted, and matching now
	prior   map[string]history.Alert
}

// decide sorts rep's settled days by what prior (history's alerts, by
// date; nil without history) says Slack was told.
func decide(rep report.Report, prior map[string]history.Alert) plan {
	p := plan{prior: prior}
	for _, d := range rep.Days {
		a, had := prior[d.Date]
		open := had && !a.Healed
		switch {
		case isGap(d) && !open:
			p.fresh = append(p.fresh, d)
		case isGap(d) && a.Status == d.Status && a.API == *d.API && a.Local == *d.Local:
			p.same = append(p.same, d)
		case isGap(d):
			p.changed = append(p.changed, Change{Date: d.Date, Kind: ChangeChanged, Was: alerted(a), Now: current(d)})
		case open && d.Settled && d.Status == "match" && d.API != nil && d.Local != nil:
			p.healed = append(p.healed, Change{Date: d.Date, Kind: ChangeHealed, Was: alerted(a), Now: current(d)})
		}
	}
	return p
}

func alerted(a history.Alert) State {
	return State{Status: a.Status, Severity: a.Severity, API: a.API, Local: a.Local, Delta: a.Delta}
}

func current(d report.Day) *State {
	s := State{Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local}
	s.Delta = s.Local - s.API
	return &s
}

// Send tells Slack what rep means: it posts an alert when a settled gap is
// new (or always, with SLACK_NOTIFY=always), updates earlier alerts whose
// days changed or healed, and stays silent when everything was already
// said. h is the run history, nil without one. With a bot token, csv (the
// report's report.csv) is attached in the alert's thread.
//
// Call it after the report is written and the run recorded, never on a
// dry run. A nil Notifier (no Slack configured) sends nothing. Whatever reached Slack is recorded in h as soon as it did, so a
// failure later in Send, and a rerun, do not post it twice. An error means
// the alert, or an update nothing else reports, did not reach Slack (or
// could not be recorded); a failure to attach the CSV or to edit an
// earlier alert that the new one already reports is a warning in the
// Outcome instead.
func (n *Notifier) Send(ctx context.Context, rep report.Report, csv []byte, h *history.History) (Outcome, error) {
	if n == nil {
		return Outcome{Skipped: "Slack is not configured"}, nil
	}
	out := Outcome{Transport: n.transport}
	var prior map[string]history.Alert
	if h != nil {
		var err error
		prior, err = h.Alerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, rep.Window.From, rep.Window.To)
		if err != nil {
			return out, fmt.Errorf("slack: %w", err)
		}
	}
	p := decide(rep, prior)
	out.New, out.Unchanged = dates(p.fresh), dates(p.same)
	out.Changed, out.Healed = changeDates(p.changed), changeDates(p.healed)
	switch {
	case len(p.fresh) > 0 || n.notify == NotifyAlways:
		return n.sendAlert(ctx, rep, csv, h, p, out)
	case len(p.changed)+len(p.healed) > 0:
		return n.sendUpdates(ctx, rep, h, p, out)
	case len(p.same) > 0:
		out.Skipped = "already alerted with the same numbers"
	default:
		out.Skipped = "no settled gap"
	}
	return out, nil
}

// sendAlert posts rep's alert, records it, attaches the CSV and edits the
// earlier alerts of the days that changed or healed.
func (n *Notifier) sendAlert(ctx context.Context, rep report.Report, csv []byte, h *history.History, p plan, out Outcome) (Outcome, error) {
	since := append(append([]Change(nil), p.changed...), p.healed...)
	sort.Slice(since, func(i, j int) bool { return since[i].Date < since[j].Date })

	// The earlier alerts to edit are read before this one is recorded,
	// which moves the days it shows away from them.
	var edits []earlier
	if n.api != nil && h != nil {
		var err error
		if edits, err = n.earlierAlerts(ctx, rep, h, p); err != nil {
			return out, err
		}
	}

	ch, ts, err := n.post(ctx, checked(Render(rep, since)))
	if err != nil {
		return out, fmt.Errorf("post the Slack alert: %w", err)
	}
	out.Posted, out.Channel, out.TS = history.KindAlert, ch, ts
	if h != nil {
		var rows []history.Alert
		for _, d := range append(append(append([]report.Day(nil), p.fresh...), p.same...), gapDays(rep, p.changed)...) {
			rows = append(rows, n.row(rep, d, ch, ts))
		}
		for _, c := range p.healed {
			a := p.prior[c.Date]
			a.Healed, a.RunKey = true, rep.RunKey
			rows = append(rows, a)
		}
		m := n.message(rep, history.KindAlert, history.ActionPosted, ch, ts)
		if err := saveAlerts(ctx, h, m, rows); err != nil {
			return out, fmt.Errorf("the Slack alert was posted but not recorded, so the next run will post it again: %w", err)
		}
	}
	if n.api != nil && len(csv) > 0 {
		err := n.attach(ctx, ch, ts, "clickrecon-"+rep.RunKey+".csv", "report.csv of run "+rep.RunKey, csv)
		if err != nil {
			out.Warnings = append(out.Warnings, "report CSV not attached: "+err.Error())
		} else {
			out.CSVAttached = true
		}
	}
	for _, e := range edits {
		if e.ts == ts {
			continue
		}
		// Best effort: the alert just posted already reports these days.
		if err := n.updateMessage(ctx, e.channel, e.ts, checked(RenderUpdate(e.update))); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("earlier alert %s/%s not updated: %v", e.channel, e.ts, err))
			continue
		}
		out.Updated = append(out.Updated, e.channel+"/"+e.ts)
	}
	return out, nil
}

// sendUpdates reports days whose numbers changed or that healed, when no
// alert is posted: with a bot token each earlier alert is edited in place;
// with a webhook, or for an alert that cannot be edited, one short message
// is posted.
func (n *Notifier) sendUpdates(ctx context.Context, rep report.Report, h *history.History, p plan, out Outcome) (Outcome, error) {
	var loose []Change // to report in a new message
	if n.api != nil {
		edits, err := n.earlierAlerts(ctx, rep, h, p)
		if err != nil {
			return out, err
		}
		inPlace := map[string]bool{}
		for _, e := range edits {
			err := n.updateMessage(ctx, e.channel, e.ts, checked(RenderUpdate(e.update)))
			if isGone(err) {
				continue // reported below, in a new message
			}
			if err != nil {
				return out, fmt.Errorf("update the Slack alert %s/%s: %w", e.channel, e.ts, err)
			}
			m := n.message(rep, updateKind(e.mine), history.ActionUpdated, e.channel, e.ts)
			if err := saveAlerts(ctx, h, m, n.changedRows(rep, p, e.mine, e.channel, e.ts, "", "")); err != nil {
				return out, fmt.Errorf("the Slack alert %s/%s was updated but not recorded: %w", e.channel, e.ts, err)
			}
			out.Updated = append(out.Updated, e.channel+"/"+e.ts)
			for _, c := range e.mine {
				inPlace[c.Date] = true
			}
		}
		for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
			if !inPlace[c.Date] {
				loose = append(loose, c)
			}
		}
	} else {
		loose = append(append(loose, p.changed...), p.healed...)
	}
	if len(loose) == 0 {
		return out, nil
	}
	sort.Slice(loose, func(i, j int) bool { return loose[i].Date < loose[j].Date })
	from, to := loose[0].Date, loose[len(loose)-1].Date
	for _, c := range loose {
		a := p.prior[c.Date]
		from, to = min(from, a.From), max(to, a.To)
	}
	kind := updateKind(loose)
	u := Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, From: from, To: to, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt, Days: loose}
	ch, ts, err := n.post(ctx, checked(RenderUpdate(u)))
	if err != nil {
		return out, fmt.Errorf("post the Slack %s message: %w", kind, err)
	}
	out.Posted, out.Channel, out.TS = kind, ch, ts
	if err := saveAlerts(ctx, h, n.message(rep, kind, history.ActionPosted, ch, ts), n.changedRows(rep, p, loose, ch, ts, from, to)); err != nil {
		return out, fmt.Errorf("the Slack %s message was posted but not recorded, so the next run will post it again: %w", kind, err)
	}
	return out, nil
}

// earlier is an earlier alert to edit, and what it becomes.
type earlier struct {
	channel, ts string
	mine        []Change // the changes of this run it shows
	update      Update
}

// earlierAlerts returns, for each earlier bot alert showing a day that
// changed or healed, the Update it becomes: all the days it shows, with
// this run's news.
func (n *Notifier) earlierAlerts(ctx context.Context, rep report.Report, h *history.History, p plan) ([]earlier, error) {
	type key struct{ channel, ts string }
	mine := map[key][]Change{}
	for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
		a := p.prior[c.Date]
		if a.TS == "" || a.Channel == "" { // a webhook alert cannot be edited
			continue
		}
		k := key{a.Channel, a.TS}
		mine[k] = append(mine[k], c)
	}
	now := map[string]report.Day{}
	for _, d := range rep.Days {
		now[d.Date] = d
	}
	news := map[string]Change{}
	for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
		news[c.Date] = c
	}
	var edits []earlier
	for k, cs := range mine {
		rows, err := h.MessageAlerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, k.channel, k.ts)
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		u := Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt}
		for _, a := range rows {
			if u.From == "" || a.From < u.From {
				u.From = a.From
			}
			u.To = max(u.To, a.To)
			c, ok := news[a.Date]
			switch {
			case ok:
			case a.Healed:
				c = Change{Date: a.Date, Kind: ChangeHealed, Was: alerted(a)}
			default:
				c = Change{Date: a.Date, Kind: ChangeOpen, Was: alerted(a)}
				if d, ok := now[a.Date]; ok && isGap(d) {
					c.Now = current(d)
				}
			}
			u.Days = append(u.Days, c)
		}
		edits = append(edits, earlier{channel: k.channel, ts: k.ts, mine: cs, update: u})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].ts < edits[j].ts })
	return edits, nil
}

// changedRows returns the alert rows of changes reported by the message
// ch/ts: a healed day is marked, a changed one takes its new numbers. from
// and to, when set, are the message's window; else a row keeps its own.
func (n *Notifier) changedRows(rep report.Report, p plan, cs []Change, ch, ts, from, to string) []history.Alert {
	var rows []history.Alert
	for _, c := range cs {
		a := p.prior[c.Date]
		a.RunKey, a.Channel, a.TS = rep.RunKey, ch, ts
		if from != "" {
			a.From, a.To, a.Transport = from, to, n.transport
		}
		switch c.Kind {
		case ChangeHealed:
			a.Healed = true
		case ChangeChanged:
			a.Status, a.Severity = c.Now.Status, c.Now.Severity
			a.API, a.Local, a.Delta = c.Now.API, c.Now.Local, c.Now.Delta
		}
		rows = append(rows, a)
	}
	return rows
}

func (n *Notifier) row(rep report.Report, d report.Day, ch, ts string) history.Alert {
	return history.Alert{
		Date: d.Date, Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local, Delta: *d.Delta,
		Transport: n.transport, Channel: ch, TS: ts, From: rep.Window.From, To: rep.Window.To, RunKey: rep.RunKey,
	}
}

func (n *Notifier) message(rep report.Report, kind, action, ch, ts string) history.Message {
	return history.Message{RunKey: rep.RunKey, WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ,
		Kind: kind, Action: action, Transport: n.transport, Channel: ch, TS: ts}
}

// post posts m by the configured transport. A webhook returns no channel
// and no ts.
func (n *Notifier) post(ctx context.Context, m Message) (string, string, error) {
	if n.api == nil {
		return "", "", n.postWebhook(ctx, m)
	}
	return n.postMessage(ctx, n.channel, m)
}

// checked returns m, or the bare fallback text if m broke a Slack limit:
// an alert must not be lost to invalid_blocks.
func checked(m Message) Message {
	if m.Validate() != nil {
		return minimal(m)
	}
	return m
}

// isGone reports whether a chat.update failed because the message can no
// longer be edited (deleted, archived channel, too old): its news is then
// posted as a new message instead.
func isGone(err error) bool {
	switch slackCode(err) {
	case "message_not_found", "cant_update_message", "edit_window_closed", "channel_not_found", "is_archived", "not_in_channel":
		return true
	}
	return false
}

func updateKind(cs []Change) string {
	for _, c := range cs {
		if c.Kind != ChangeHealed {
			return history.KindUpdate
		}
	}
	return history.KindHealed
}

// gapDays returns the report days of changes.
func gapDays(rep report.Report, cs []Change) []report.Day {
	want := map[string]bool{}
	for _, c := range cs {
		want[c.Date] = true
	}
	var days []report.Day
	for _, d := range rep.Days {
		if want[d.Date] {
			days = append(days, d)
		}
	}
	return days
}

func dates(days []report.Day) []string {
	var ds []string
	for _, d := range days {
		ds = append(ds, d.Date)
	}
	return ds
}

func changeDates(cs []Change) []string {
	var ds []string
	for _, c := range cs {
		ds = append(ds, c.Date)
	}
	return ds
}
