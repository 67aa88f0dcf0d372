package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/secret"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// noticeTimeout bounds the notice's post and record when the run's own
// deadline has passed: a run stopped by RECON_TIMEOUT still says so.
const noticeTimeout = 15 * time.Second

// failures lists what kept the run from checking what it was asked to:
// Elido or the store unreadable, the history down, the deadline passed,
// settled days unverifiable for a reason of their own. Each reason is the
// error's text with every secret of the run removed. Slack failing is not
// one: a notice could not reach it either.
func failures(o Options, out Outcome, historyDown bool) []alert.Cause {
	redact := func(err error) string {
		return secret.Redact(err.Error(), "[redacted]", o.Secrets...)
	}
	var cs []alert.Cause
	if out.Interrupted != "" {
		cs = append(cs, alert.Cause{Key: "run:interrupted", What: "the rest of the run", Why: out.Interrupted,
			Do: "raise RECON_TIMEOUT or RECON_DRILLDOWN_MAX_REQUESTS, or check a shorter window; the CronJob retries"})
	}
	// A read cut short by the run's end is told by the interruption.
	stopped := func(err error) bool {
		return out.Interrupted != "" && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
	}
	if err := out.ElidoErr; err != nil && !stopped(err) {
		cs = append(cs, elidoCause(err, redact(err)))
	}
	if err := out.StoreErr; err != nil && !stopped(err) {
		c := alert.Cause{Key: "store:unavailable", What: "the store's daily counts", Why: redact(err),
			Do: "check that the store is up and reachable at STORE_DSN; the CronJob retries, and the next run checks these days again"}
		switch {
		case errors.Is(err, store.ErrRefused):
			c.Key, c.Do = "store:refused", "fix the user, password or database in STORE_DSN (or its Secret); a retry cannot help"
		case errors.Is(err, store.ErrBadQuery):
			c.Key, c.Do = "store:bad_query", "fix STORE_PRESET or STORE_QUERY_FILE for this database; a retry cannot help"
		}
		cs = append(cs, c)
	}
	if err := out.HistoryErr; err != nil && historyDown {
		c := alert.Cause{Key: "history:unavailable", What: "the run history (gap alerts are held back)", Why: redact(err),
			Do: "check that the database at HISTORY_DSN is up; gap alerts are posted again once it is"}
		if errors.Is(err, history.ErrNotMigrated) {
			c.Key, c.Do = "history:not_migrated", "run clickrecon migrate against HISTORY_DSN (the CronJob's init container does)"
		}
		cs = append(cs, c)
	}
	// Days unverifiable on their own account (Elido's /summary disagrees,
	// older than Elido keeps, a count out of range): when a source failed
	// its cause already says why.
	if out.ElidoErr == nil && out.StoreErr == nil {
		var reasons []string
		for _, d := range out.Report.Days {
			if d.Settled && reconcile.Status(d.Status) == reconcile.Unverifiable && d.Reason != "" {
				reasons = append(reasons, d.Reason)
			}
		}
		if len(reasons) > 0 {
			cs = append(cs, alert.Cause{Key: "days:" + reasonsKey(reasons), What: report.Plural(len(reasons), "settled day", "settled days"),
				Why: secret.Redact(strings.Join(distinct(reasons), "; "), "[redacted]", o.Secrets...),
				Do:  "read each day's reason in the report; they are never alerted as gaps"})
		}
	}
	return cs
}

// elidoCause names an Elido failure by its HTTP status, which stays the
// same every night it lasts, and says what to do.
func elidoCause(err error, why string) alert.Cause {
	c := alert.Cause{Key: "elido:unreadable", What: "Elido's daily counts", Why: why,
		Do: "the CronJob retries and the next run checks these days again; if it lasts, check Elido's status and ELIDO_API_BASE"}
	var ae *elido.APIError
	if !errors.As(err, &ae) {
		return c
	}
	switch s := ae.Status; {
	case s == http.StatusUnauthorized:
		c.Key, c.Do = "elido:http_401", "fix ELIDO_API_KEY (or its Secret) with a valid key; a retry cannot help"
	case s == http.StatusForbidden:
		c.Key, c.Do = "elido:http_403", "give ELIDO_API_KEY a key with the analytics:read scope; a retry cannot help"
	case s == http.StatusNotFound:
		c.Key, c.Do = "elido:http_404", "check ELIDO_WORKSPACE_ID and ELIDO_API_BASE (it ends in /v1); a retry cannot help"
	case s == http.StatusTooManyRequests:
		c.Key, c.Do = "elido:http_429", "lower ELIDO_RATE_LIMIT or move the CronJob's schedule away from other automation"
	case s >= 500:
		c.Key = "elido:http_5xx"
	default:
		c.Key = fmt.Sprintf("elido:http_%d", s)
	}
	return c
}

// digits are what changes from night to night in a day's reason: its
// date, its counts.
var digits = regexp.MustCompile(`[0-9]+`)

// reasonsKey names the kinds of reasons days were unverifiable for, the
// same on every night they last, whatever the dates.
func reasonsKey(reasons []string) string {
	var kinds []string
	for _, r := range reasons {
		kinds = append(kinds, digits.ReplaceAllString(r, "#"))
	}
	sum := sha256.Sum256([]byte(strings.Join(distinct(kinds), "\n")))
	return hex.EncodeToString(sum[:6])
}

func distinct(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// noticeHistory is what a notice needs of the run history.
type noticeHistory interface {
	LastNotice(ctx context.Context, workspaceID, storeID string) (history.Notice, bool, error)
	SaveNotice(ctx context.Context, n history.Notice) error
	ResolveNotice(ctx context.Context, workspaceID, storeID, runKey string, at time.Time) error
}

// notice tells Slack, apart from any gap alert, when the run could not
// check what it was asked to, once per cause (alert.DecideNotice), and
// once when checking works again. h is nil without a history or when it
// could not be opened (historyDown): then nothing remembers, and every
// run that could not check posts its notice. It posts nothing on a dry
// run, after SIGTERM (no post once the pod is told to stop), or when the
// gap alert itself could not reach Slack. The run lock is not needed: a
// notice repeated by two overlapping runs is harmless, and a lock that
// cannot be taken is often the very failure to tell. It returns the
// error of the post, and of the record separately.
func notice(ctx context.Context, d Deps, o Options, h noticeHistory, out Outcome, historyDown bool, alwaysMessage bool) (postErr, recordErr error) {
	causes := failures(o, out, historyDown)
	switch {
	case d.Notifier == nil, o.DryRun:
		return nil, nil
	case out.SlackErr != nil:
		if len(causes) > 0 {
			d.Log.Warn("slack notice skipped: Slack itself failed", "causes", alert.Fingerprint(causes))
		}
		return nil, nil
	case out.Interrupted != "" && !errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return nil, nil
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), noticeTimeout)
		defer cancel()
	}
	// Notices are kept under the store as STORE_DSN names it (o.StoreID):
	// a store that is down cannot say what it is, and its recovery must
	// find the notice its failure left.
	rep := out.Report
	in := alert.NoticeInput{Causes: causes, Always: alwaysMessage, Now: d.Now()}
	if h != nil && !historyDown {
		var err error
		in.Last, in.HadLast, err = h.LastNotice(ctx, o.WorkspaceID, o.StoreID)
		if err != nil {
			// The history answered once and not now: say so, and post
			// as if nothing remembered.
			d.Log.Error("history not read for the last notice", "err", err)
			recordErr = err
			in.Causes = append(in.Causes, alert.Cause{Key: "history:unavailable", What: "the run history",
				Why: secret.Redact(err.Error(), "[redacted]", o.Secrets...), Do: "check that the database at HISTORY_DSN is up"})
		} else {
			in.Remembered = true
		}
	}
	action := alert.DecideNotice(in)
	fp := alert.Fingerprint(in.Causes)
	switch action {
	case alert.NoticeQuiet:
		if len(in.Causes) > 0 {
			d.Log.Info("slack notice not repeated: Slack was told of this cause", "causes", fp, "last_posted", in.Last.LastPosted)
		}
		return nil, recordErr
	case alert.NoticeRecovered:
		if err := d.Notifier.PostNotice(ctx, alert.RenderRecovered(rep, in.Last)); err != nil {
			d.Log.Error("slack recovery message failed", "err", err)
			return err, recordErr
		}
		d.Log.Info("slack notice", "action", action, "was", in.Last.Fingerprint)
		if err := h.ResolveNotice(ctx, o.WorkspaceID, o.StoreID, rep.RunKey, d.Now()); err != nil {
			d.Log.Error("the recovery message was posted but not recorded: the next run posts it again", "err", err)
			return nil, err
		}
		return nil, recordErr
	}
	m := alert.RenderNotice(rep, in.Causes, action == alert.NoticeRemind, in.Last.FirstPosted, in.Remembered)
	if err := d.Notifier.PostNotice(ctx, m); err != nil {
		d.Log.Error("slack notice failed", "causes", fp, "err", err)
		return err, recordErr
	}
	d.Log.Info("slack notice", "action", action, "causes", fp, "remembered", in.Remembered)
	if !in.Remembered {
		return nil, recordErr
	}
	n := history.Notice{WorkspaceID: o.WorkspaceID, StoreID: o.StoreID, Fingerprint: fp, Reason: alert.NoticeReason(in.Causes),
		RunKey: rep.RunKey, LastPosted: d.Now()}
	if err := h.SaveNotice(ctx, n); err != nil {
		d.Log.Error("the notice was posted but not recorded: the next run posts it again", "err", err)
		return nil, err
	}
	return nil, recordErr
}
