// Package monitor tells the systems that watch the nightly job how each run
// went: a Prometheus Pushgateway (PUSHGATEWAY_URL) gets a few gauges at the
// end of a run, and a healthchecks.io-style ping URL (HEALTHCHECK_URL) is
// pinged when the run starts and when it ends, with its exit code.
//
// Both are optional and best effort. Their errors are returned for the
// caller to log; a run's outcome and exit code never depend on them. Every
// call bounds itself with a short timeout, so a monitoring endpoint that
// hangs cannot hold the job past its deadline, and every call should be
// given a context that is still alive at the end of a run, such as
// context.WithoutCancel(runCtx): the end of a run is also what SIGTERM and
// the deadline cause, and that is exactly when the report matters.
//
// No error or String carries a secret: a Pushgateway URL's password is
// sent as basic auth and never shown, and a ping URL's path (which holds
// the check's secret UUID or ping key) is shown as "…".
//
// The package logs nothing.
package monitor

import (
	"errors"
	"net/url"
	"time"

	"github.com/clickrecon/clickrecon/internal/secret"
)

// jobName is the Pushgateway job label, and the User-Agent of the pings.
const jobName = "clickrecon"

// callTimeout bounds one Push, Start or Finish, retries included.
const callTimeout = 10 * time.Second

// parseEndpoint reads a monitoring URL: http(s) with a host. what names
// the variable in errors, which never quote the URL itself.
func parseEndpoint(what, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New(what + " is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New(what + " is not a valid URL (it is not shown: it may hold a secret)")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New(what + " must be an http:// or https:// URL with a host, such as https://hc-ping.com/<uuid>")
	}
	if u.Fragment != "" {
		return nil, errors.New(what + " must not have a #fragment")
	}
	return u, nil
}

// redact replaces every non-empty secret in err's message with "…".
func redact(err error, secrets ...string) error {
	return secret.Scrub(err, "…", secrets...)
}
