package safehttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// recorder is a server that records the headers of every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newRecorder(t *testing.T, tls bool, h http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Clone())
		r.mu.Unlock()
		h(w, req)
	})
	if tls {
		r.Server = httptest.NewTLSServer(handler)
	} else {
		r.Server = httptest.NewServer(handler)
	}
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.seen...)
}

func ok(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }

func redirectTo(target string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, status)
	}
}

const key = "Bearer k3y-0123456789abcdef"

func TestCrossOriginRedirectIsNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			other := newRecorder(t, false, ok)
			first := newRecorder(t, false, redirectTo(other.URL+"/leak?token=x", status))
			req, _ := http.NewRequest(http.MethodPost, first.URL+"/secret-path", strings.NewReader("body"))
			req.Header.Set("Authorization", key)
			resp, err := Client(nil, SameOrigin).Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("redirect to another port: no error (status %d)", resp.StatusCode)
			}
			if !errors.Is(err, ErrRedirect) {
				t.Errorf("error %v does not match ErrRedirect", err)
			}
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != status || re.SameOrigin {
				t.Errorf("error %#v, want a cross-origin RedirectError with status %d", re, status)
			}
			if msg := re.Error(); !strings.Contains(msg, strings.TrimPrefix(other.URL, "http://")) || strings.Contains(msg, "token") || strings.Contains(msg, "leak") {
				t.Errorf("error %q: want the other origin named, without its path or query", msg)
			}
			if got := other.requests(); len(got) != 0 {
				t.Errorf("the other origin got %d requests (headers %v), want none", len(got), got)
			}
		})
	}
}

func TestHTTPSToHTTPRedirectIsNotFollowed(t *testing.T) {
	plain := newRecorder(t, false, ok)
	secure := newRecorder(t, true, redirectTo(plain.URL+"/x", http.StatusTemporaryRedirect))
	req, _ := http.NewRequest(http.MethodGet, secure.URL+"/x", nil)
	req.Header.Set("Authorization", key)
	_, err := Client(secure.Client(), SameOrigin).Do(req)
	if !errors.Is(err, ErrRedirect) {
		t.Fatalf("https→http redirect: error %v, want ErrRedirect", err)
	}
	if got := plain.requests(); len(got) != 0 {
		t.Errorf("the http server got %d requests, want none", len(got))
	}
}

func TestSameOriginRedirectKeepsCredentialsWithoutReferer(t *testing.T) {
	srv := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		ok(w, r)
	})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/old", nil)
	req.Header.Set("Authorization", key)
	resp, err := Client(nil, SameOrigin).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := srv.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if a := got[1].Get("Authorization"); a != key {
		t.Errorf("the redirected request has Authorization %q, want the key: the origin is the same", a)
	}
	for i, h := range got {
		if r, has := h["Referer"]; has {
			t.Errorf("request %d carries Referer %q", i, r)
		}
	}
}

func TestNoRedirectsRefusesSameOrigin(t *testing.T) {
	srv := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hook" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		ok(w, r)
	})
	_, err := Client(nil, NoRedirects).Post(srv.URL+"/hook", "application/json", strings.NewReader("{}"))
	var re *RedirectError
	if !errors.As(err, &re) || !re.SameOrigin || re.Status != http.StatusFound {
		t.Fatalf("error %v, want a same-origin RedirectError with status 302", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want only the first", n)
	}
}

func TestRedirectLoopStops(t *testing.T) {
	srv := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	})
	_, err := Client(nil, SameOrigin).Get(srv.URL + "/")
	if !errors.Is(err, ErrRedirect) {
		t.Fatalf("error %v, want ErrRedirect", err)
	}
	if n := len(srv.requests()); n != maxRedirects+1 {
		t.Errorf("%d requests, want %d", n, maxRedirects+1)
	}
}

func TestRefererIsNeverSent(t *testing.T) {
	srv := newRecorder(t, false, ok)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Referer", "https://hooks.example/secret")
	resp, err := Client(nil, SameOrigin).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := srv.requests()[0].Get("Referer"); r != "" {
		t.Errorf("Referer %q sent", r)
	}
	if req.Header.Get("Referer") == "" {
		t.Error("the caller's request was changed")
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.example.com/v1":        "https://api.example.com:443",
		"https://api.example.com:443/v1":    "https://api.example.com:443",
		"http://u:p@127.0.0.1:8080/x?y=1":   "http://127.0.0.1:8080",
		"http://[::1]:9091/metrics":         "http://[::1]:9091",
		"http://hooks.example/services/T/B": "http://hooks.example:80",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", raw, got, want)
		}
	}
}

// SameOriginSameMethod follows a 307 within the origin with the PUT and
// its body, and hands a 301, 302 or 303 back as the answer instead of
// turning the PUT into a GET; another origin is refused as by SameOrigin.
func TestSameOriginSameMethod(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	srv := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/307":
			http.Redirect(w, r, "/put", http.StatusTemporaryRedirect)
		case "/302":
			http.Redirect(w, r, "/put", http.StatusFound)
		default:
			ok(w, r)
		}
	})
	other := newRecorder(t, false, ok)
	put := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+path, strings.NewReader("body"))
		req.Header.Set("Authorization", key)
		return Client(nil, SameOriginSameMethod).Do(req)
	}
	resp, err := put("/307")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("307 within the origin: %v", err)
	}
	resp.Body.Close()
	resp, err = put("/302")
	if err != nil {
		t.Fatalf("302 within the origin: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("302 within the origin answered %d, want the 302 itself", resp.StatusCode)
	}
	want := []string{"PUT /307", "PUT /put", "PUT /302"}
	mu.Lock()
	if strings.Join(methods, ",") != strings.Join(want, ",") {
		t.Errorf("requests %q, want %q", methods, want)
	}
	mu.Unlock()

	far := newRecorder(t, false, redirectTo(other.URL+"/put", http.StatusTemporaryRedirect))
	req, _ := http.NewRequest(http.MethodPut, far.URL+"/x", strings.NewReader("body"))
	req.Header.Set("Authorization", key)
	if _, err := Client(nil, SameOriginSameMethod).Do(req); !errors.Is(err, ErrRedirect) {
		t.Errorf("307 to another origin: error %v, want ErrRedirect", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}
