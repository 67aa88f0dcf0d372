//go:build azblob

package storage

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// An Azure endpoint (here an emulator's address) redirecting to another
// origin never gets the SharedKey signature forwarded, and the read fails
// at once, without retries.
func TestAzureRedirectToAnotherOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	var first []string
	azure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first = append(first, r.Method)
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(azure.Close)
	u, _ := url.Parse(azure.URL)
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": "devstoreaccount1", "AZURE_STORAGE_KEY": "a2V5LWtleS1rZXkta2V5LWtleS1rZXkta2V5LWtleQ==",
		"AZURE_STORAGE_DOMAIN": u.Host, "AZURE_STORAGE_PROTOCOL": "http", "AZURE_STORAGE_IS_LOCAL_EMULATOR": "true",
		"AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": "", "AZURE_STORAGEBLOB_CONNECTIONSTRING": "",
	} {
		t.Setenv(k, v)
	}
	_, err := ReadReport(context.Background(), "azblob://reports/r/key")
	if !errors.Is(err, safehttp.ErrRedirect) {
		t.Errorf("ReadReport: error %v, want ErrRedirect", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the other origin got %d requests, the first with Authorization %q", len(seen), seen[0])
	}
	if len(first) != 1 {
		t.Errorf("the endpoint got %d requests (%q), want 1: a refused redirect is not retried", len(first), first)
	}
}

// The write id's metadata name is escaped as gocloud.dev/blob escaped it
// (Azure takes C# identifiers only), so that a report it wrote is read as
// one write.
func TestAzureMetadataName(t *testing.T) {
	if got := azureMetadataName(attemptKey); got != "clickrecon__0x2d__write" {
		t.Errorf("azureMetadataName(%q) = %q", attemptKey, got)
	}
	for _, k := range []string{attemptKey, "a_b", "9lives", "x.y-z"} {
		if back := azureMetadataNameBack(azureMetadataName(k)); back != k {
			t.Errorf("%q escaped as %q comes back as %q", k, azureMetadataName(k), back)
		}
	}
}
