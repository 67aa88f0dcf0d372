package alert

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/clickrecon/clickrecon/report/alert/slacktest"
)

// Secrets the fake Slack accepts. Tests check that neither ever shows in an
// error, a log line or an Outcome.
const (
	testToken     = "xoxb-1234-5678-s3cretTokenValue"
	testHookPath  = "/services/T0000/B0000/s3cretHookPath"
	testChannelID = "C0ALERTS"
)

// fault is a canned failure for one endpoint.
type fault struct {
	status     int    // HTTP status; 0 with slackErr for an ok:false answer
	retryAfter string // Retry-After header
	slackErr   string // {"ok":false,"error":slackErr}
	always     bool   // stays instead of being used up
}

// received is one request the fake received.
type received struct {
	path string
	form url.Values      // Web API methods (form-encoded)
	hook json.RawMessage // webhook payload
	file []byte          // an upload's file part
}

// fakeSlack is slacktest's Slack with this package's test token and
// channel: the incoming webhook and the parts of the Web API clickrecon
// uses.
type fakeSlack struct {
	*slacktest.Server
	srv *httptest.Server
}

func newFakeSlack(t *testing.T) *fakeSlack {
	s := slacktest.New(t, slacktest.WithToken(testToken), slacktest.WithChannel(testChannelID))
	return &fakeSlack{Server: s, srv: s.Server}
}

func (f *fakeSlack) webhookURL() string { return f.srv.URL + testHookPath }
func (f *fakeSlack) apiURL() string     { return f.srv.URL + "/api/" }

// fail makes the next request to path (or all, with always) fail.
func (f *fakeSlack) fail(path string, ft fault) {
	f.Fail(path, slacktest.Fault{Status: ft.status, RetryAfter: ft.retryAfter, SlackErr: ft.slackErr, Always: ft.always})
}

// got returns the requests received on path, in order.
func (f *fakeSlack) got(path string) []received {
	var rs []received
	for _, r := range f.Requests(path) {
		rs = append(rs, received{path: r.Path, form: r.Form, hook: r.Hook, file: r.File})
	}
	return rs
}
