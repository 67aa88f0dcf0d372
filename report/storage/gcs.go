//go:build gcs

package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"cloud.google.com/go/storage"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// gs:// is built only with the tag gcs: the Google Cloud libraries are
// the largest of the drivers, in the binary and in a first build's
// downloads.
func init() { openers["gs"] = openGCS }

// gcsStore is a Google Cloud Storage bucket, through Google's own client.
type gcsStore struct {
	client *storage.Client
	bucket *storage.BucketHandle
}

// openGCS opens a gs:// bucket with Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, GKE Workload Identity, the metadata
// server), or none with anonymous=true or STORAGE_EMULATOR_HOST set. The
// bearer token is added to every request the HTTP client sends, a
// redirected one included, so the client is under safehttp's policy: a
// redirect to another origin is never followed. Missing credentials are
// an error. The query takes anonymous, and access_id and
// private_key_path (which only sign URLs, which clickrecon never does).
func openGCS(ctx context.Context, u *url.URL, _ openOptions) (objectStore, error) {
	var anonymous bool
	ignore := func(string) error { return nil }
	err := queryParams(u.Query(), map[string]func(string) error{
		"anonymous": func(raw string) (err error) {
			anonymous, err = strconv.ParseBool(raw)
			return err
		},
		"access_id":        ignore,
		"private_key_path": ignore,
	})
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport
	if os.Getenv("STORAGE_EMULATOR_HOST") == "" && !anonymous {
		creds, err := google.FindDefaultCredentials(ctx, storage.ScopeFullControl)
		if err != nil {
			return nil, fmt.Errorf("no Google credentials (set GOOGLE_APPLICATION_CREDENTIALS or give the workload an identity): %w", err)
		}
		tr = &oauth2.Transport{Source: creds.TokenSource, Base: tr}
	}
	hc := safehttp.Client(&http.Client{Transport: tr}, safehttp.SameOriginSameMethod)
	client, err := storage.NewClient(ctx, option.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	return &gcsStore{client: client, bucket: client.Bucket(u.Host)}, nil
}

// gcsCode classifies a Cloud Storage error.
func gcsCode(err error) errCode {
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return codeNotFound
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return statusCode(ge.Code)
	}
	return codeUnknown
}

func (s *gcsStore) list(ctx context.Context, prefix, delimiter, token string) ([]listObject, string, error) {
	q := &storage.Query{Prefix: prefix, Delimiter: delimiter}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return nil, "", err
	}
	var attrs []*storage.ObjectAttrs
	next, err := iterator.NewPager(s.bucket.Objects(ctx, q), 1000, token).NextPage(&attrs)
	if err != nil {
		return nil, "", withCode(err, gcsCode)
	}
	page := make([]listObject, 0, len(attrs))
	for _, a := range attrs {
		if a.Prefix != "" {
			page = append(page, listObject{Key: a.Prefix, IsDir: true})
		} else {
			page = append(page, listObject{Key: a.Name})
		}
	}
	return page, next, nil
}

func (s *gcsStore) attributes(ctx context.Context, key string) (objectAttributes, error) {
	a, err := s.bucket.Object(key).Attrs(ctx)
	if err != nil {
		return objectAttributes{}, withCode(err, gcsCode)
	}
	return objectAttributes{Size: a.Size, ETag: a.Etag, ModTime: a.Updated, Metadata: a.Metadata}, nil
}

func (s *gcsStore) get(ctx context.Context, key string) (objectBody, error) {
	r, err := s.bucket.Object(key).NewReader(ctx)
	if err != nil {
		return objectBody{}, withCode(err, gcsCode)
	}
	// The reader names its generation, not its ETag: only its length.
	return objectBody{ReadCloser: r, Size: r.Attrs.Size}, nil
}

func (s *gcsStore) put(ctx context.Context, key string, data []byte, contentType string, metadata map[string]string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // an unclosed writer's upload is abandoned
	w := s.bucket.Object(key).NewWriter(ctx)
	w.ContentType, w.Metadata = contentType, metadata
	w.ChunkSize = 0 // one request: the files are small
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		return withCode(err, gcsCode)
	}
	return withCode(w.Close(), gcsCode)
}

func (s *gcsStore) delete(ctx context.Context, key string) error {
	return withCode(s.bucket.Object(key).Delete(ctx), gcsCode)
}

func (s *gcsStore) close() error { return s.client.Close() }
