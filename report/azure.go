//go:build azblob

package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// azblob:// is built only with the tag azblob (about 8 MB of the binary).
func init() { openers["azblob"] = openAzure }

// openAzure opens an azblob:// container as gocloud.dev's azureblob does,
// with the credentials its environment variables name (AZURE_STORAGE_KEY,
// AZURE_STORAGE_SAS_TOKEN, a connection string, or a managed identity),
// but with an HTTP client under safehttp's policy.
func openAzure(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	opener := &azureblob.URLOpener{MakeClient: azureClient, ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions()}
	return opener.OpenBucketURL(ctx, u)
}

// azureClient is azureblob's default MakeClient with safehttp's client as
// its transport.
func azureClient(svcURL azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
	opts := &container.ClientOptions{}
	opts.Transport = safehttp.Client(nil, safehttp.SameOriginSameMethod)
	opts.Retry.ShouldRetry = azureShouldRetry
	containerURL, err := url.JoinPath(string(svcURL), string(name))
	if err != nil {
		return nil, err
	}
	account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
	conn := cmp.Or(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING"))
	switch {
	case account != "" && key != "":
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("AZURE_STORAGE_KEY: %w", err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return container.NewClientWithNoCredential(containerURL, opts) // the token is in svcURL
	case conn != "":
		return container.NewClientFromConnectionString(conn, string(name), opts)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("no Azure credentials: %w", err)
	}
	return container.NewClient(containerURL, cred, opts)
}

// azureShouldRetry is azcore's default retry decision (a transport error,
// or 408, 429, 500, 502, 503, 504), except that a refused redirect is
// never retried: the same answer would come again, after the backoff.
func azureShouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, safehttp.ErrRedirect)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
