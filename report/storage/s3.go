package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// s3Store is an S3 bucket, on AWS or any S3 server (MinIO, Ceph, R2…),
// through the AWS SDK's own S3 client.
type s3Store struct {
	client *s3.Client
	bucket string
	sse    types.ServerSideEncryption // "" for the bucket's default
	kmsKey string
}

// openS3 opens an s3:// bucket. Credentials come from the AWS SDK's
// default chain (AWS_* variables, a web identity token file as EKS IRSA
// sets it, the shared config and credentials files, ECS or EKS Pod
// Identity, the instance metadata service), or an assumed role. The
// query takes the parameters the URL took when it was opened through
// gocloud.dev/blob, with the same meaning:
//
//	region, endpoint, profile, use_path_style (or s3ForcePathStyle),
//	disable_https, hostname_immutable, accelerate, dualstack, fips,
//	anonymous, role, role_session_name, role_external_id, role_duration,
//	web_identity_token_file, rate_limiter_capacity,
//	request_checksum_calculation, response_checksum_validation,
//	ssetype, kmskeyid (and awssdk, ignored).
//
// Every request goes through an HTTP client under safehttp's policy: the
// SDK's own client follows a 307 to any host with the request's
// Authorization, which net/http keeps for another port of the same host.
func openS3(ctx context.Context, u *url.URL, o openOptions) (objectStore, error) {
	s, err := s3Query(u.Query())
	if err != nil {
		return nil, err
	}
	s.sleep = o.sleep
	cfg, err := s.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return &s3Store{client: s3.NewFromConfig(cfg, s.clientOptions()...), bucket: u.Host, sse: s.sse, kmsKey: s.kmsKey}, nil
}

// s3Settings are what an s3:// URL's query says (s3Query). A parameter
// not given leaves its pointer nil, or its field zero, and the SDK's
// default (or the environment's) stands.
type s3Settings struct {
	// sleep waits a retry's backoff (WithSleep); nil: the SDK waits on
	// the wall clock.
	sleep             func(context.Context, time.Duration) error
	region, profile   *string
	endpoint          string
	pathStyle         *bool // use_path_style, s3ForcePathStyle or hostname_immutable: the last in name order
	accelerate        *bool
	disableHTTPS      *bool
	dualstack, fips   bool
	anonymous         bool
	rateLimitCapacity int64
	// requestChecksum and responseChecksum are request_checksum_calculation
	// and response_checksum_validation: true for when_required.
	requestChecksum, responseChecksum *bool
	roleARN                           string
	role                              stsRole
	sse                               types.ServerSideEncryption
	kmsKey                            string
}

// s3Query reads an s3:// URL's query q (see openS3): each parameter
// once, then whether they go together (check).
func s3Query(q url.Values) (s3Settings, error) {
	var s s3Settings
	// boolean reads a setting that, given, overrides the SDK's; flag one
	// that is off unless given true.
	boolean := func(set **bool) func(string) error {
		return func(raw string) error {
			v, err := strconv.ParseBool(raw)
			if err == nil {
				*set = &v
			}
			return err
		}
	}
	flag := func(set *bool) func(string) error {
		return func(raw string) (err error) {
			*set, err = strconv.ParseBool(raw)
			return err
		}
	}
	pathStyle := boolean(&s.pathStyle)
	err := queryParams(q, map[string]func(string) error{
		"region":           func(v string) error { s.region = &v; return nil },
		"endpoint":         func(v string) error { s.endpoint = v; return nil },
		"profile":          func(v string) error { s.profile = &v; return nil },
		"use_path_style":   pathStyle,
		"s3ForcePathStyle": pathStyle,
		// The endpoint's host is used as it is: the bucket goes in the
		// path.
		"hostname_immutable": pathStyle,
		"accelerate":         boolean(&s.accelerate),
		"disable_https":      boolean(&s.disableHTTPS),
		"dualstack":          flag(&s.dualstack),
		"fips":               flag(&s.fips),
		"anonymous":          flag(&s.anonymous),
		"rate_limiter_capacity": func(raw string) (err error) {
			s.rateLimitCapacity, err = strconv.ParseInt(raw, 10, 32)
			return err
		},
		"role": func(v string) error {
			if !strings.HasPrefix(v, "arn:") {
				return errors.New("must be a role's ARN (arn:…)")
			}
			s.roleARN = v
			return nil
		},
		"role_session_name":       func(v string) error { s.role.sessionName = v; return nil },
		"role_external_id":        func(v string) error { s.role.externalID = v; return nil },
		"web_identity_token_file": func(v string) error { s.role.tokenFile = v; return nil },
		"role_duration": func(raw string) (err error) {
			s.role.duration, err = time.ParseDuration(raw)
			return err
		},
		"request_checksum_calculation": func(v string) error {
			required, err := checksumWhenRequired(v)
			s.requestChecksum = &required
			return err
		},
		"response_checksum_validation": func(v string) error {
			required, err := checksumWhenRequired(v)
			s.responseChecksum = &required
			return err
		},
		"ssetype": func(v string) error {
			s.sse = types.ServerSideEncryption(v)
			if !slices.Contains(s.sse.Values(), s.sse) {
				return fmt.Errorf("%q is not one of %q", v, s.sse.Values())
			}
			return nil
		},
		"kmskeyid": func(v string) error { s.kmsKey = v; return nil },
		"awssdk":   func(string) error { return nil }, // gocloud.dev's choice of SDK: v2 here
	})
	if err == nil {
		err = s.check()
	}
	if err != nil {
		return s3Settings{}, err
	}
	return s, nil
}

// check returns an error for the query parameters s was read from that do
// not go together.
func (s s3Settings) check() error {
	if s.anonymous && s.roleARN != "" {
		return errors.New(`query parameter "role" does not go with anonymous=true`)
	}
	if s.roleARN == "" && s.role != (stsRole{}) {
		return errors.New(`query parameters role_session_name, role_external_id, role_duration and web_identity_token_file need "role"`)
	}
	if s.role.tokenFile != "" && s.role.externalID != "" {
		return errors.New(`query parameter "role_external_id" does not go with web_identity_token_file`)
	}
	return nil
}

// awsConfig loads the AWS configuration s leaves to the SDK's default
// chain, with the HTTP client under safehttp's policy, the SDK's own log
// off, and the credentials of the role s assumes.
func (s s3Settings) awsConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, s.loadOptions()...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load the AWS configuration: %w", err)
	}
	cfg.HTTPClient = safeAWSClient(cfg.HTTPClient)
	// The SDK's own log lines (a response without a checksum, say) are
	// not the user's business, and would break a JSON log stream on
	// stderr: what fails reaches the user as an error, through the run's
	// logger.
	cfg.Logger, cfg.ClientLogMode = logging.Nop{}, 0
	if s.roleARN != "" {
		if cfg.Region == "" {
			return aws.Config{}, errors.New(`query parameter "role" needs a region (region=… or AWS_REGION)`)
		}
		cfg.Credentials = aws.NewCredentialsCache(s.role.provider(sts.NewFromConfig(cfg), s.roleARN))
	}
	return cfg, nil
}

// loadOptions are s's options for loading the AWS configuration, with the
// retryer every client gets (redirectFinal, under s's rate limit).
func (s s3Settings) loadOptions() []func(*config.LoadOptions) error {
	var opts []func(*config.LoadOptions) error
	if s.region != nil {
		opts = append(opts, config.WithRegion(*s.region))
	}
	if s.profile != nil {
		opts = append(opts, config.WithSharedConfigProfile(*s.profile))
	}
	if s.dualstack {
		opts = append(opts, config.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
	}
	if s.fips {
		opts = append(opts, config.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
	}
	if s.requestChecksum != nil {
		opts = append(opts, config.WithRequestChecksumCalculation(
			pick(*s.requestChecksum, aws.RequestChecksumCalculationWhenRequired, aws.RequestChecksumCalculationWhenSupported)))
	}
	if s.responseChecksum != nil {
		opts = append(opts, config.WithResponseChecksumValidation(
			pick(*s.responseChecksum, aws.ResponseChecksumValidationWhenRequired, aws.ResponseChecksumValidationWhenSupported)))
	}
	if s.anonymous {
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	var limiter retry.RateLimiter = ratelimit.None
	if s.rateLimitCapacity > 0 {
		limiter = ratelimit.NewTokenRateLimit(uint(s.rateLimitCapacity))
	}
	opts = append(opts, config.WithRetryer(func() aws.Retryer {
		return redirectFinal{retry.NewStandard(func(o *retry.StandardOptions) {
			o.RateLimiter = limiter
			if s.sleep != nil {
				o.Backoff = sleptBackoff{retry.NewExponentialJitterBackoff(o.MaxBackoff), s.sleep}
			}
		})}
	}))
	if s.requestChecksum == nil && os.Getenv("AWS_REQUEST_CHECKSUM_CALCULATION") == "" {
		// A PUT's checksum goes in Content-MD5 (put), which every S3
		// server checks; the SDK's default would send each file
		// aws-chunked with a trailing checksum over HTTPS, which many S3
		// servers store as it came, framing and all.
		opts = append(opts, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired))
	}
	return opts
}

// clientOptions are s's options for the S3 client: its addressing, its
// endpoint (https:// unless disable_https, when it names no scheme), and
// no log of a checksum the SDK skips.
func (s s3Settings) clientOptions() []func(*s3.Options) {
	var opts []func(*s3.Options)
	if s.pathStyle != nil {
		v := *s.pathStyle
		opts = append(opts, func(o *s3.Options) { o.UsePathStyle = v })
	}
	if s.accelerate != nil {
		v := *s.accelerate
		opts = append(opts, func(o *s3.Options) { o.UseAccelerate = v })
	}
	disableHTTPS := s.disableHTTPS != nil && *s.disableHTTPS
	if s.disableHTTPS != nil {
		opts = append(opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = disableHTTPS })
	}
	if endpoint := s.endpoint; endpoint != "" {
		if !strings.Contains(endpoint, "://") {
			endpoint = pick(disableHTTPS, "http://", "https://") + endpoint
		}
		opts = append(opts, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint) })
	}
	return append(opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
}

// checksumWhenRequired reads when_supported or when_required, the values
// of the two checksum settings.
func checksumWhenRequired(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "when_supported":
		return false, nil
	case "when_required":
		return true, nil
	}
	return false, fmt.Errorf("%q, want when_supported or when_required", v)
}

// pick returns ifTrue when b is, else ifFalse.
func pick[T any](b bool, ifTrue, ifFalse T) T {
	if b {
		return ifTrue
	}
	return ifFalse
}

// stsRole is the role an s3:// URL's query says to assume.
type stsRole struct {
	sessionName, externalID, tokenFile string
	duration                           time.Duration
}

func (r stsRole) provider(client *sts.Client, arn string) aws.CredentialsProvider {
	if r.tokenFile != "" {
		return stscreds.NewWebIdentityRoleProvider(client, arn, stscreds.IdentityTokenFile(r.tokenFile), func(o *stscreds.WebIdentityRoleOptions) {
			if r.sessionName != "" {
				o.RoleSessionName = r.sessionName
			}
			o.Duration = r.duration
		})
	}
	return stscreds.NewAssumeRoleProvider(client, arn, func(o *stscreds.AssumeRoleOptions) {
		if r.sessionName != "" {
			o.RoleSessionName = r.sessionName
		}
		if r.externalID != "" {
			o.ExternalID = aws.String(r.externalID)
		}
		if r.duration != 0 {
			o.Duration = r.duration
		}
	})
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

// redirectFinal is a retryer that never retries a refused redirect: the
// same answer would come again, after the backoff.
type redirectFinal struct{ aws.RetryerV2 }

func (r redirectFinal) IsErrorRetryable(err error) bool {
	return !errors.Is(err, safehttp.ErrRedirect) && r.RetryerV2.IsErrorRetryable(err)
}

// sleptBackoff waits each retry's backoff through sleep and leaves the
// SDK nothing to wait (WithSleep).
type sleptBackoff struct {
	retry.BackoffDelayer
	sleep func(context.Context, time.Duration) error
}

func (b sleptBackoff) BackoffDelay(attempt int, err error) (time.Duration, error) {
	d, err := b.BackoffDelayer.BackoffDelay(attempt, err)
	if err != nil {
		return 0, err
	}
	// The SDK gives the delay no context: the request's own ends the
	// attempt that follows.
	return 0, b.sleep(context.Background(), d)
}

// s3Code classifies an S3 error: by the error code in S3's answer, or
// else its HTTP status (a HEAD's answer has no body).
func s3Code(err error) errCode {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucket", "NoSuchKey", "NotFound":
			return codeNotFound
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled":
			return codePermissionDenied
		case "InvalidArgument", "InvalidRequest", "InvalidBucketName", "AuthorizationHeaderMalformed", "PermanentRedirect":
			return codeInvalidArgument
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return statusCode(re.HTTPStatusCode())
	}
	return codeUnknown
}

func (s *s3Store) list(ctx context.Context, prefix, delimiter, token string) ([]listObject, string, error) {
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(prefix)}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	if token != "" {
		in.ContinuationToken = aws.String(token)
	}
	out, err := s.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, "", withCode(err, s3Code)
	}
	page := make([]listObject, 0, len(out.Contents)+len(out.CommonPrefixes))
	for _, o := range out.Contents {
		page = append(page, listObject{Key: aws.ToString(o.Key)})
	}
	for _, p := range out.CommonPrefixes {
		page = append(page, listObject{Key: aws.ToString(p.Prefix), IsDir: true})
	}
	slices.SortFunc(page, func(a, b listObject) int { return strings.Compare(a.Key, b.Key) })
	var next string
	if aws.ToBool(out.IsTruncated) {
		next = aws.ToString(out.NextContinuationToken)
	}
	return page, next, nil
}

func (s *s3Store) attributes(ctx context.Context, key string) (objectAttributes, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return objectAttributes{}, withCode(err, s3Code)
	}
	return objectAttributes{
		Size:     aws.ToInt64(out.ContentLength),
		ETag:     aws.ToString(out.ETag),
		ModTime:  aws.ToTime(out.LastModified),
		Metadata: out.Metadata,
	}, nil
}

func (s *s3Store) get(ctx context.Context, key string) (objectBody, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return objectBody{}, withCode(err, s3Code)
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	return objectBody{ReadCloser: out.Body, Size: size, ETag: aws.ToString(out.ETag)}, nil
}

func (s *s3Store) put(ctx context.Context, key string, data []byte, contentType string, metadata map[string]string) error {
	sum := md5.Sum(data)
	in := &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentMD5:    aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		ContentType:   aws.String(contentType),
		Metadata:      metadata,
	}
	if s.sse != "" {
		in.ServerSideEncryption = s.sse
	}
	if s.kmsKey != "" {
		in.SSEKMSKeyId = aws.String(s.kmsKey)
	}
	_, err := s.client.PutObject(ctx, in)
	return withCode(err, s3Code)
}

func (s *s3Store) delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	return withCode(err, s3Code)
}

func (s *s3Store) close() error { return nil }
