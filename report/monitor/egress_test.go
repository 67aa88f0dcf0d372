package monitor

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// seen is one request a server received: what could leak to it.
type seen struct {
	path, query, referer, authorization, body string
}

// recordingServer records every request and answers it with h.
type recordingServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newRecordingServer(t *testing.T, h http.HandlerFunc) *recordingServer {
	t.Helper()
	s := &recordingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("Referer"), r.Header.Get("Authorization"), string(b)})
		s.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *recordingServer) received() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// TestHealthcheckRedirectToAnotherOrigin: the ping URL is the check's
// secret; a redirect elsewhere must not carry it there (in Referer, or at
// all), and the ping fails without retrying.
func TestHealthcheckRedirectToAnotherOrigin(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			other := newRecordingServer(t, nil)
			hc := newRecordingServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/ping", status)
			})
			h, err := NewHealthcheck(hc.URL + "/" + checkUUID)
			if err != nil {
				t.Fatal(err)
			}
			h.retry.Wait = time.Millisecond
			err = h.Finish(context.Background(), 0, "ok")
			if !errors.Is(err, safehttp.ErrRedirect) {
				t.Fatalf("error %v, want a refused redirect", err)
			}
			if strings.Contains(err.Error(), checkUUID) {
				t.Errorf("error shows the check's UUID: %v", err)
			}
			if !strings.Contains(err.Error(), strings.TrimPrefix(other.URL, "http://")) {
				t.Errorf("error %q does not say where the ping was redirected", err)
			}
			if got := other.received(); len(got) > 0 {
				t.Errorf("the other origin received %+v, want nothing", got)
			}
			if n := len(hc.received()); n != 1 {
				t.Errorf("%d pings, want 1: a redirect is not retried", n)
			}
		})
	}
}

// TestHealthcheckRedirectWithinOriginSendsNoReferer: a same-origin
// redirect is followed, without a Referer that would quote the ping URL.
func TestHealthcheckRedirectWithinOriginSendsNoReferer(t *testing.T) {
	hc := newRecordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v2/") {
			http.Redirect(w, r, "/v2"+r.URL.Path, http.StatusPermanentRedirect)
		}
	})
	h, err := NewHealthcheck(hc.URL + "/" + checkUUID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := hc.received()
	if len(got) != 2 || got[1].path != "/v2/"+checkUUID+"/start" {
		t.Fatalf("requests %+v, want the ping and its redirect", got)
	}
	for i, r := range got {
		if r.referer != "" {
			t.Errorf("request %d carried Referer %q", i, r.referer)
		}
	}
}

// TestPushRedirectToAnotherOrigin: the Pushgateway's basic credentials
// must not follow a redirect to another port.
func TestPushRedirectToAnotherOrigin(t *testing.T) {
	other := newRecordingServer(t, nil)
	gw := newRecordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	p, err := NewPushgateway(strings.Replace(gw.URL, "http://", "http://pusher:s3cret-pw@", 1))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Push(context.Background(), "48213", Metrics{Finished: time.Unix(1, 0)})
	if !errors.Is(err, safehttp.ErrRedirect) {
		t.Fatalf("error %v, want a refused redirect", err)
	}
	if got := other.received(); len(got) > 0 {
		t.Errorf("the other origin received %d requests (Authorization %q), want none", len(got), got[0].authorization)
	}
	if got := gw.received(); len(got) != 1 || got[0].referer != "" {
		t.Errorf("the Pushgateway got %+v: want one request, no Referer", got)
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestPushErrorBodyEchoingCredentials: a Pushgateway (or a proxy in front
// of it) whose error page echoes the request's Authorization header must
// not put the credentials in the error, in any encoding, and a long page
// is cut after it is redacted.
func TestPushErrorBodyEchoingCredentials(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("pusher:s3cret-pw"))
	gw := newRecordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, strings.Repeat("x", 100)+"Authorization: "+r.Header.Get("Authorization")+strings.Repeat(" filler", 2000))
	})
	p, err := NewPushgateway(strings.Replace(gw.URL, "http://", "http://pusher:s3cret-pw@", 1))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Push(context.Background(), "48213", Metrics{Finished: time.Unix(1, 0)})
	if err == nil {
		t.Fatal("got nil error")
	}
	if !strings.Contains(err.Error(), "502") {
		t.Errorf("error %q does not give the status", err)
	}
	for _, s := range []string{"s3cret-pw", basic, basic[:12]} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error shows %q", s)
		}
	}
	if len(err.Error()) > 2000 {
		t.Errorf("error is %d bytes long: the body must be cut", len(err.Error()))
	}
}
