package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// ErrRefused marks a monitoring endpoint that answered, but not as one
// clickrecon can push to: a wrong URL or credentials, which only the
// configuration can mend.
var ErrRefused = errors.New("the endpoint refused")

// Check asks the Pushgateway whether it is up (GET /-/healthy, with the
// URL's basic auth), without pushing anything: a metric pushed by a check
// would read as a run. Its error never shows the password.
func (p *Pushgateway) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/-/healthy", nil)
	if err != nil {
		return err
	}
	if p.user != "" || p.password != "" {
		req.SetBasicAuth(p.user, p.password)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return redact(fmt.Errorf("the Pushgateway at %s: %w", p.url, err), p.password)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the Pushgateway at %s/-/healthy answered %s: check PUSHGATEWAY_URL (the base URL, such as http://pushgateway:9091) and its user:password: %w",
			p.url, resp.Status, ErrRefused)
	}
	return nil
}

// Check opens a connection to the ping URL's host and closes it, without
// sending a request: any request to a ping URL is a ping, and a check's
// would tell Healthchecks a run started or ended. So it finds a host that
// does not resolve or a port that refuses; a wrong path cannot be found
// without pinging.
func (h *Healthcheck) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	port := h.base.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[h.base.Scheme]
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(h.base.Hostname(), port))
	if err != nil {
		return redact(fmt.Errorf("the healthcheck at %s: %w", h, err), h.secrets...)
	}
	return conn.Close()
}
