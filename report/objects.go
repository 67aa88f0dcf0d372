package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcp"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// openBucket opens the bucket an object store URL names (its path
// already removed). Every request to it goes through safehttp's redirect
// policy, as every other request clickrecon sends: the store's signature
// or token never reaches another origin, and a redirect there is an error,
// never an answer. S3 is opened here for that; gs:// and azblob:// go
// through openGCS and openAzure.
func openBucket(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	switch u.Scheme {
	case "s3":
		return openS3(ctx, u)
	case "gs":
		return openGCS(ctx, u)
	case "azblob":
		return openAzure(ctx, u)
	}
	return nil, fmt.Errorf("unknown scheme %q", u.Scheme)
}

// openS3 opens an s3:// bucket as gocloud.dev's s3blob.URLOpener does,
// with the same query parameters (gocloud.dev/aws.V2ConfigFromURLParams
// and s3blob's own), but with an HTTP client under safehttp's policy. The
// SDK's own client follows a 307 to any host with the request's
// Authorization, which net/http keeps for another port of the same host.
func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	q := u.Query()
	var opts s3blob.Options
	var s3opts []func(*s3.Options)
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		var ok bool
		for _, t := range types.ServerSideEncryptionAes256.Values() {
			if string(t) == v {
				opts.EncryptionType, ok = t, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("%q is not a valid value for %q", v, "ssetype")
		}
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		opts.KMSEncryptionID = v
	}
	for _, p := range []struct {
		key string
		set func(*s3.Options, bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
	} {
		raw := q.Get(p.key)
		if raw == "" {
			continue
		}
		q.Del(p.key)
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("invalid value for %q: %w", p.key, err)
		}
		s3opts = append(s3opts, func(o *s3.Options) { p.set(o, v) })
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	cfg.HTTPClient = safeAWSClient(cfg.HTTPClient)
	if next := cfg.Retryer; next != nil {
		cfg.Retryer = func() aws.Retryer { return noRetryOnRedirect(next()) }
	}
	opts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, s3.NewFromConfig(cfg, s3opts...), u.Host, &opts)
}

// safeAWSClient returns an HTTP client for the AWS SDK that keeps c's
// transport (its TLS settings, AWS_CA_BUNDLE's included) under
// safehttp.SameOriginSameMethod: a PUT is never turned into a GET.
func safeAWSClient(c aws.HTTPClient) *http.Client {
	var tr http.RoundTripper
	switch c := c.(type) {
	case *awshttp.BuildableClient:
		tr = c.GetTransport()
	case *http.Client:
		tr = c.Transport
	default:
		tr = awshttp.NewBuildableClient().GetTransport()
	}
	return safehttp.Client(&http.Client{Transport: tr}, safehttp.SameOriginSameMethod)
}

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

// noRetryOnRedirect returns r, except that a refused redirect is never
// retried: the same answer would come again, after the backoff.
func noRetryOnRedirect(r aws.Retryer) aws.Retryer {
	if v2, ok := r.(aws.RetryerV2); ok {
		return redirectFinal{v2}
	}
	return r
}

type redirectFinal struct{ aws.RetryerV2 }

func (r redirectFinal) IsErrorRetryable(err error) bool {
	return !errors.Is(err, safehttp.ErrRedirect) && r.RetryerV2.IsErrorRetryable(err)
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
