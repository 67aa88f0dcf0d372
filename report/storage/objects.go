package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// objectStore is one bucket (or container) of an object store service,
// as a report destination uses it. Each service has one implementation:
// s3Store (s3.go), gcsStore (gcs.go, tag gcs), azureStore (azure.go, tag
// azblob). Keys are whole object names; bucket narrows them to a prefix.
// An error for an object or bucket that does not exist, or that the
// credentials may not touch, is an *objectError with its code (see
// codeOf), so that callers tell them apart whatever the service.
type objectStore interface {
	// list returns one page of what is under prefix: the objects, and
	// with a delimiter the "folders" (common prefixes, IsDir, their key
	// ending in the delimiter). token is "" for the first page and the
	// next page's token otherwise; next is "" after the last page.
	list(ctx context.Context, prefix, delimiter, token string) (page []listObject, next string, err error)
	// attributes returns an object's size, ETag, modification time and
	// metadata.
	attributes(ctx context.Context, key string) (objectAttributes, error)
	// get returns an object's content, streamed, with the length and
	// ETag of the answer that carries it.
	get(ctx context.Context, key string) (objectBody, error)
	// put writes the object key whole, with its content type and metadata.
	put(ctx context.Context, key string, data []byte, contentType string, metadata map[string]string) error
	// delete removes the object key (a missing one may or may not be
	// codeNotFound, depending on the service).
	delete(ctx context.Context, key string) error
	close() error
}

// listObject is an object, or a "folder" (IsDir), in a listing.
type listObject struct {
	Key   string
	IsDir bool
}

// objectAttributes is what a report destination reads of an object
// without its content.
type objectAttributes struct {
	Size     int64
	ETag     string
	ModTime  time.Time
	Metadata map[string]string
}

// objectBody is an object's content as one GET answered it: its
// length and ETag are that answer's own (Size -1 and ETag "" where the
// answer did not say), which are the bytes that follow, even when the
// object was rewritten since its attributes were read.
type objectBody struct {
	io.ReadCloser
	Size int64
	ETag string
}

// errCode is the kind of a failed request to an object store, whatever
// the service.
type errCode int

const (
	codeUnknown          errCode = iota
	codeNotFound                 // no such object or bucket
	codePermissionDenied         // the credentials may not
	codeInvalidArgument          // a bad request: the URL's settings
)

// objectError is a failed request to an object store, with its code.
type objectError struct {
	code errCode
	err  error
}

func (e *objectError) Error() string { return e.err.Error() }
func (e *objectError) Unwrap() error { return e.err }

// codeOf returns the code of an object store's error (codeUnknown for
// nil or any other error).
func codeOf(err error) errCode {
	var oe *objectError
	if errors.As(err, &oe) {
		return oe.code
	}
	return codeUnknown
}

// isNotFound reports whether err is an object store's "no such object or
// bucket".
func isNotFound(err error) bool { return codeOf(err) == codeNotFound }

// statusCode classifies an object store's HTTP answer by its status: a
// 301 is a bucket in another region than the URL says.
func statusCode(status int) errCode {
	switch status {
	case http.StatusNotFound, http.StatusMovedPermanently:
		return codeNotFound
	case http.StatusForbidden, http.StatusUnauthorized:
		return codePermissionDenied
	case http.StatusBadRequest, http.StatusPreconditionFailed:
		return codeInvalidArgument
	}
	return codeUnknown
}

// withCode wraps err, when it is not nil, as an *objectError of the code
// classify gives it.
func withCode(err error, classify func(error) errCode) error {
	if err == nil {
		return nil
	}
	return &objectError{code: classify(err), err: err}
}

// bucket is an object store narrowed to a prefix: the keys it takes and
// gives are below the prefix.
type bucket struct {
	store  objectStore
	prefix string // "" or ending in "/"
}

// listIterator walks a listing page by page.
type listIterator struct {
	b         *bucket
	prefix    string
	delimiter string
	page      []listObject
	token     string
	done      bool
}

// List lists the objects under prefix, and with a delimiter the "folders"
// below it as one entry each; call Next until io.EOF.
func (b *bucket) List(prefix, delimiter string) *listIterator {
	return &listIterator{b: b, prefix: prefix, delimiter: delimiter}
}

// Next returns the next object of the listing, or io.EOF after the last.
func (it *listIterator) Next(ctx context.Context) (*listObject, error) {
	for len(it.page) == 0 {
		if it.done {
			return nil, io.EOF
		}
		page, next, err := it.b.store.list(ctx, it.b.prefix+it.prefix, it.delimiter, it.token)
		if err != nil {
			return nil, err
		}
		it.page, it.token, it.done = page, next, next == ""
	}
	obj := it.page[0]
	it.page = it.page[1:]
	obj.Key = strings.TrimPrefix(obj.Key, it.b.prefix)
	return &obj, nil
}

// Attributes returns the attributes of the object key.
func (b *bucket) Attributes(ctx context.Context, key string) (*objectAttributes, error) {
	a, err := b.store.attributes(ctx, b.prefix+key)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// NewReader streams the object key; close it after use.
func (b *bucket) NewReader(ctx context.Context, key string) (objectBody, error) {
	return b.store.get(ctx, b.prefix+key)
}

// WriteAll writes the object key whole, with its content type
// (application/octet-stream when it is "") and metadata.
func (b *bucket) WriteAll(ctx context.Context, key string, data []byte, contentType string, metadata map[string]string) error {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	return b.store.put(ctx, b.prefix+key, data, contentType, metadata)
}

// Delete removes the object key.
func (b *bucket) Delete(ctx context.Context, key string) error {
	return b.store.delete(ctx, b.prefix+key)
}

// Close releases the store's client.
func (b *bucket) Close() error { return b.store.close() }

// openers are the object stores this build can open, by URL scheme. s3://
// is always there; gs:// and azblob:// are added by gcs.go and azure.go,
// built only with the tags gcs and azblob: their SDKs are most of the
// binary and of a cold build's downloads, and most users need neither.
var openers = map[string]func(context.Context, *url.URL, openOptions) (objectStore, error){
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
func openBucket(ctx context.Context, u *url.URL, o openOptions) (objectStore, error) {
	if open, ok := openers[u.Scheme]; ok {
		return open(ctx, u, o)
	}
	if err := CheckDriver(u.Scheme + "://"); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("unknown scheme %q", u.Scheme)
}

// queryParams reads a store URL's query: each parameter once, and only
// those known. known maps each name to what it sets.
func queryParams(q url.Values, known map[string]func(string) error) error {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		set, ok := known[name]
		if !ok {
			return fmt.Errorf("unknown query parameter %q", name)
		}
		if len(q[name]) > 1 {
			return fmt.Errorf("query parameter %q is given %d times", name, len(q[name]))
		}
		if err := set(q.Get(name)); err != nil {
			return fmt.Errorf("invalid value for %q: %w", name, err)
		}
	}
	return nil
}
