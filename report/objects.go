package report

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// openers are the object stores this build can open, by URL scheme. s3://
// is always there; gs:// and azblob:// are added by gcs.go and azure.go,
// built only with the tags gcs and azblob: their SDKs are most of the
// binary and of a cold build's downloads, and most users need neither.
var openers = map[string]func(context.Context, *url.URL) (*blob.Bucket, error){
	"s3": openS3,
}

// buildTags names the build tag that adds each optional store's driver.
var buildTags = map[string]string{"gs": "gcs", "azblob": "azblob"}

// allTags is every optional driver's tag: the full build.
const allTags = "gcs azblob"

// ErrNoDriver matches a report destination whose object store this build
// of clickrecon lacks: a configuration error (exit 2), mended by another
// build, never by a retry.
var ErrNoDriver = errors.New("this build of clickrecon lacks the driver")

// CheckDriver returns an ErrNoDriver, saying which build tag adds it,
// when dirOrURL names an object store this build lacks; nil for anything
// else (Open checks the rest). It opens nothing, so a command can refuse
// such a RECON_REPORT_DIR (exit 2) before its first request.
func CheckDriver(dirOrURL string) error {
	scheme, _, ok := strings.Cut(dirOrURL, "://")
	if _, built := openers[scheme]; !ok || built {
		return nil
	}
	tag, ok := buildTags[scheme]
	if !ok {
		return nil
	}
	return fmt.Errorf("%w for %s:// (the default build has local folders, file:// and s3:// only): "+
		"build clickrecon with `go build -tags %s ./cmd/clickrecon`, or use the full image (docker build --build-arg TAGS=%q)",
		ErrNoDriver, scheme, tag, allTags)
}

// openBucket opens the bucket an object store URL names (its path
// already removed). Every request to it goes through safehttp's redirect
// policy, as every other request clickrecon sends: the store's signature
// or token never reaches another origin, and a redirect there is an error,
// never an answer.
func openBucket(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if open, ok := openers[u.Scheme]; ok {
		return open(ctx, u)
	}
	if err := CheckDriver(u.Scheme + "://"); err != nil {
		return nil, err
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
