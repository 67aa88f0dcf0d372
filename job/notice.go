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

	"github.com/clickrecon/clickrecon/internal/secret"
	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// failures lists what kept the run from checking what it was asked to, or
// from keeping what it found: Elido or the store unreadable, the history
// down, the deadline passed, the report not stored, settled days
// unverifiable for a reason of their own. Each reason is the
// error's text with every secret of the run removed. Slack failing is not
// one: a notice could not reach it either.
func failures(out Outcome, secrets []string) []alert.Cause {
	redact := func(err error) string {
		return secret.Redact(err.Error(), "[redacted]", secrets...)
	}
	var cs []alert.Cause
	if out.Interrupted != nil {
		cs = append(cs, alert.Cause{Key: "run:interrupted", What: "the rest of the run", Why: out.Interrupted.Error(),
			Do: "raise RECON_TIMEOUT or RECON_DRILLDOWN_MAX_REQUESTS, or check a shorter window; the CronJob retries"})
	}
	// A read cut short by the run's end is told by the interruption.
	stopped := func(err error) bool {
		return out.Interrupted != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
	}
	elidoErr, storeErr := out.Err(PartElido), out.Err(PartStore)
	if storeErr == nil {
		storeErr = out.Err(PartIdentity)
	}
	if err := elidoErr; err != nil && !stopped(err) {
		cs = append(cs, elidoCause(err, redact(err)))
	}
	if err := storeErr; err != nil && !stopped(err) {
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
	if err := out.Err(PartHistoryDown); err != nil {
		c := alert.Cause{Key: "history:unavailable", What: "the run history (gap alerts are held back)", Why: redact(err),
			Do: "check that the database at HISTORY_DSN is up; gap alerts are posted again once it is"}
		if errors.Is(err, history.ErrNotMigrated) {
			c.Key, c.Do = "history:not_migrated", "run clickrecon migrate against HISTORY_DSN (the CronJob's init container does)"
		}
		cs = append(cs, c)
	}
	// A report that could not be stored is told once, like a source: the
	// run checked, but nothing of it is kept but what Slack hears.
	if err := out.Err(PartReport); err != nil {
		cs = append(cs, alert.Cause{Key: alert.CauseReportUnstored, What: "the report (it was not stored)", Why: redact(err),
			Do: "check RECON_REPORT_DIR: the bucket exists and its credentials may write to it, or the folder can be created and written"})
	}
	// Days unverifiable on their own account (Elido's /summary disagrees,
	// older than Elido keeps, a count out of range): when a source failed
	// its cause already says why.
	if elidoErr == nil && storeErr == nil {
		var reasons []string
		for _, d := range out.Report.Days {
			if d.Settled && d.Status == reconcile.Unverifiable && d.Reason != "" {
				reasons = append(reasons, d.Reason)
			}
		}
		if len(reasons) > 0 {
			cs = append(cs, alert.Cause{Key: "days:" + reasonsKey(reasons), What: words.Plural(len(reasons), "settled day", "settled days"),
				Why: secret.Redact(strings.Join(distinct(reasons), "; "), "[redacted]", secrets...),
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
