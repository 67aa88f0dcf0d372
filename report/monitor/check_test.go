package monitor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The Pushgateway is asked whether it is up, with the URL's basic auth,
// and nothing is pushed; a URL that is not a Pushgateway's is ErrRefused.
func TestPushgatewayCheckPushesNothing(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if user, pw, _ := r.BasicAuth(); r.URL.Path != "/-/healthy" || user != "u" || pw != "s3cret-pw" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("OK"))
	}))
	defer srv.Close()
	p, err := NewPushgateway(strings.Replace(srv.URL, "http://", "http://u:s3cret-pw@", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
	wrong, err := NewPushgateway(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Check(context.Background()); !errors.Is(err, ErrRefused) {
		t.Errorf("a URL that is not the Pushgateway's base: %v, want ErrRefused", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if !strings.HasPrefix(s, "GET ") {
			t.Errorf("Check sent %s: nothing may be pushed", s)
		}
	}
}

// The healthcheck's host is reached without a request: any request to a
// ping URL is a ping. A port that refuses is an error, without the path.
func TestHealthcheckCheckSendsNoPing(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
	}))
	h, err := NewHealthcheck(srv.URL + "/ping/SECRET-UUID")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
	srv.Close()
	mu.Lock()
	if requests != 0 {
		t.Errorf("Check sent %d requests: a ping would count as a run", requests)
	}
	mu.Unlock()
	err = h.Check(context.Background())
	if err == nil || strings.Contains(err.Error(), "SECRET-UUID") {
		t.Errorf("Check of a closed port: %v, want an error without the URL's path", err)
	}
}
