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
func openS3(ctx context.Context, u *url.URL) (objectStore, error) {
	st := &s3Store{bucket: u.Host}
	var (
		loadOpts          []func(*config.LoadOptions) error
		s3Opts            []func(*s3.Options)
		endpoint          string
		disableHTTPS      bool
		rateLimitCapacity int64
		checksumSet       bool // request_checksum_calculation given
		anonymous         bool
		roleARN           string
		role              stsRole
	)
	boolean := func(set func(*s3.Options, bool)) func(string) error {
		return func(raw string) error {
			v, err := strconv.ParseBool(raw)
			if err == nil {
				s3Opts = append(s3Opts, func(o *s3.Options) { set(o, v) })
			}
			return err
		}
	}
	pathStyle := boolean(func(o *s3.Options, v bool) { o.UsePathStyle = v })
	err := queryParams(u.Query(), map[string]func(string) error{
		"region":           func(v string) error { loadOpts = append(loadOpts, config.WithRegion(v)); return nil },
		"endpoint":         func(v string) error { endpoint = v; return nil },
		"profile":          func(v string) error { loadOpts = append(loadOpts, config.WithSharedConfigProfile(v)); return nil },
		"use_path_style":   pathStyle,
		"s3ForcePathStyle": pathStyle,
		// The endpoint's host is used as it is: the bucket goes in the
		// path.
		"hostname_immutable": pathStyle,
		"accelerate":         boolean(func(o *s3.Options, v bool) { o.UseAccelerate = v }),
		"disable_https": func(raw string) (err error) {
			disableHTTPS, err = strconv.ParseBool(raw)
			s3Opts = append(s3Opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = disableHTTPS })
			return err
		},
		"dualstack": func(raw string) error {
			v, err := strconv.ParseBool(raw)
			if v {
				loadOpts = append(loadOpts, config.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
			}
			return err
		},
		"fips": func(raw string) error {
			v, err := strconv.ParseBool(raw)
			if v {
				loadOpts = append(loadOpts, config.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
			}
			return err
		},
		"anonymous": func(raw string) (err error) {
			anonymous, err = strconv.ParseBool(raw)
			return err
		},
		"rate_limiter_capacity": func(raw string) (err error) {
			rateLimitCapacity, err = strconv.ParseInt(raw, 10, 32)
			return err
		},
		"role": func(v string) error {
			if !strings.HasPrefix(v, "arn:") {
				return errors.New("must be a role's ARN (arn:…)")
			}
			roleARN = v
			return nil
		},
		"role_session_name":       func(v string) error { role.sessionName = v; return nil },
		"role_external_id":        func(v string) error { role.externalID = v; return nil },
		"web_identity_token_file": func(v string) error { role.tokenFile = v; return nil },
		"role_duration": func(raw string) (err error) {
			role.duration, err = time.ParseDuration(raw)
			return err
		},
		"request_checksum_calculation": func(v string) error {
			checksumSet = true
			required, err := checksumWhenRequired(v)
			loadOpts = append(loadOpts, config.WithRequestChecksumCalculation(
				pick(required, aws.RequestChecksumCalculationWhenRequired, aws.RequestChecksumCalculationWhenSupported)))
			return err
		},
		"response_checksum_validation": func(v string) error {
			required, err := checksumWhenRequired(v)
			loadOpts = append(loadOpts, config.WithResponseChecksumValidation(
				pick(required, aws.ResponseChecksumValidationWhenRequired, aws.ResponseChecksumValidationWhenSupported)))
			return err
		},
		"ssetype": func(v string) error {
			st.sse = types.ServerSideEncryption(v)
			if !slices.Contains(st.sse.Values(), st.sse) {
				return fmt.Errorf("%q is not one of %q", v, st.sse.Values())
			}
			return nil
		},
		"kmskeyid": func(v string) error { st.kmsKey = v; return nil },
		"awssdk":   func(string) error { return nil }, // gocloud.dev's choice of SDK: v2 here
	})
	if err != nil {
		return nil, err
	}
	if anonymous {
		if roleARN != "" {
			return nil, errors.New(`query parameter "role" does not go with anonymous=true`)
		}
		loadOpts = append(loadOpts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	if roleARN == "" && role != (stsRole{}) {
		return nil, errors.New(`query parameters role_session_name, role_external_id, role_duration and web_identity_token_file need "role"`)
	}
	if role.tokenFile != "" && role.externalID != "" {
		return nil, errors.New(`query parameter "role_external_id" does not go with web_identity_token_file`)
	}
	var limiter retry.RateLimiter = ratelimit.None
	if rateLimitCapacity > 0 {
		limiter = ratelimit.NewTokenRateLimit(uint(rateLimitCapacity))
	}
	loadOpts = append(loadOpts, config.WithRetryer(func() aws.Retryer {
		return redirectFinal{retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = limiter })}
	}))
	if !checksumSet && os.Getenv("AWS_REQUEST_CHECKSUM_CALCULATION") == "" {
		// A PUT's checksum goes in Content-MD5 (put), which every S3
		// server checks; the SDK's default would send each file
		// aws-chunked with a trailing checksum over HTTPS, which many S3
		// servers store as it came, framing and all.
		loadOpts = append(loadOpts, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	cfg.HTTPClient = safeAWSClient(cfg.HTTPClient)
	// The SDK's own log lines (a response without a checksum, say) are
	// not the user's business, and would break a JSON log stream on
	// stderr: what fails reaches the user as an error, through the run's
	// logger.
	cfg.Logger, cfg.ClientLogMode = logging.Nop{}, 0
	if roleARN != "" {
		if cfg.Region == "" {
			return nil, errors.New(`query parameter "role" needs a region (region=… or AWS_REGION)`)
		}
		cfg.Credentials = aws.NewCredentialsCache(role.provider(sts.NewFromConfig(cfg), roleARN))
	}
	if endpoint != "" {
		if !strings.Contains(endpoint, "://") {
			endpoint = pick(disableHTTPS, "http://", "https://") + endpoint
		}
		s3Opts = append(s3Opts, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint) })
	}
	s3Opts = append(s3Opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	st.client = s3.NewFromConfig(cfg, s3Opts...)
	return st, nil
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
