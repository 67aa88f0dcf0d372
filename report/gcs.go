//go:build gcs

package report

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// gs:// is built only with the tag gcs: the Google Cloud libraries are
// the largest of the drivers (about 21 MB of the binary).
func init() { openers["gs"] = openGCS }

// openGCS opens a gs:// bucket as gocloud.dev's gcsblob does, with
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, a
// workload identity), but with an HTTP client under safehttp's policy: the
// bearer token is added to every request the client sends, a redirected
// one included, so a redirect to another origin must never be followed.
// Unlike gcsblob's default, missing credentials are an error here, not a
// warning on stdout.
func openGCS(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	var client *gcp.HTTPClient
	var ts gcp.TokenSource
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		client = gcp.NewAnonymousHTTPClient(gcp.DefaultTransport()) // an emulator takes no credentials
	} else {
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("no Google credentials (set GOOGLE_APPLICATION_CREDENTIALS or give the workload an identity): %w", err)
		}
		ts = gcp.CredentialsTokenSource(creds)
		if client, err = gcp.NewHTTPClient(gcp.DefaultTransport(), ts); err != nil {
			return nil, err
		}
	}
	client.Client = *safehttp.Client(&client.Client, safehttp.SameOriginSameMethod)
	opener := &gcsblob.URLOpener{Client: client, TokenSource: ts}
	return opener.OpenBucketURL(ctx, u)
}
