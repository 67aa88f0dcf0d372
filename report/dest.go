package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	// The object stores RECON_REPORT_DIR accepts. file:// is a local folder
	// (written by Dest itself, which replaces a run's folder as a whole), so
	// fileblob is not needed.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// File is one rendered report file.
type File struct {
	Name string // a plain file name: report.json
	Data []byte
}

// manifest is the file a reader trusts: on object storage it is written
// after every other file of the run.
const manifest = "report.json"

// Dest is where reports are written: a local folder, or a prefix in an
// object store (s3://, gs://, azblob://) through gocloud.dev/blob. Each run
// writes the folder <run key>/ under it.
type Dest struct {
	dir    string       // the local folder, when bucket is nil
	bucket *blob.Bucket // the object store, already narrowed to the prefix
	base   string       // scheme://bucket/prefix, without query: for messages
}

// objectSchemes are the URL schemes that name an object store.
var objectSchemes = []string{"s3", "gs", "azblob"}

// Open returns the destination that dirOrURL names: a folder path, a
// file:// URL (the same folder), or an object store URL such as
// s3://bucket/prefix?region=eu-central-1 (gs://bucket/prefix,
// azblob://container/prefix). The query configures the store as
// gocloud.dev documents for each scheme; the path is the prefix the
// reports go under. Credentials come from the environment (a workload
// identity, AWS_SHARED_CREDENTIALS_FILE, GOOGLE_APPLICATION_CREDENTIALS,
// AZURE_STORAGE_ACCOUNT and its key or identity). Close the Dest after
// use.
func Open(ctx context.Context, dirOrURL string) (*Dest, error) {
	if dirOrURL == "" {
		return nil, errors.New("report destination is empty: give a folder or an s3://, gs://, azblob:// or file:// URL")
	}
	scheme, _, hasScheme := strings.Cut(dirOrURL, "://")
	if !hasScheme {
		return &Dest{dir: dirOrURL}, nil
	}
	u, err := url.Parse(dirOrURL)
	if err != nil {
		return nil, fmt.Errorf("report destination %q is not a URL: %w", redactURL(dirOrURL), err)
	}
	switch {
	case scheme == "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("report destination %s: a file:// URL names a local folder, as file:///path", u.Redacted())
		}
		if u.RawQuery != "" {
			return nil, fmt.Errorf("report destination %s: a file:// URL takes no query", u.Redacted())
		}
		if u.Path == "" {
			return nil, fmt.Errorf("report destination %s names no folder", u.Redacted())
		}
		return &Dest{dir: filepath.FromSlash(u.Path)}, nil
	case slices.Contains(objectSchemes, scheme):
	default:
		return nil, fmt.Errorf("report destination %s: unknown scheme %q, want a folder or an s3://, gs://, azblob:// or file:// URL", redactURL(dirOrURL), scheme)
	}
	q := u.Query()
	if q.Has("prefix") || q.Has("key") {
		return nil, fmt.Errorf("report destination %s: put the prefix in the URL's path (s3://bucket/prefix), not in a query parameter", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("report destination %s names no bucket", u.Redacted())
	}
	prefix := strings.Trim(u.Path, "/")
	bucketURL := *u
	bucketURL.Path, bucketURL.RawPath = "", ""
	b, err := blob.OpenBucket(ctx, bucketURL.String())
	if err != nil {
		return nil, fmt.Errorf("open report destination %s: %w", redactURL(dirOrURL), err)
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix+"/")
	}
	base := scheme + "://" + u.Host
	if prefix != "" {
		base += "/" + prefix
	}
	return &Dest{bucket: b, base: base}, nil
}

// redactURL returns raw without its query, which may configure
// credentials, and without a user:password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		before, _, _ := strings.Cut(raw, "?")
		if i := strings.LastIndex(before, "@"); i >= 0 {
			return "…" + before[i:]
		}
		return before
	}
	u.RawQuery, u.Fragment = "", ""
	return u.Redacted()
}

// Close releases the object store's client; for a folder it does nothing.
func (d *Dest) Close() error {
	if d.bucket == nil {
		return nil
	}
	return d.bucket.Close()
}

// Location is where the run's folder is, for a log line or a summary: a
// path, or scheme://bucket/prefix/<run key> (no query).
func (d *Dest) Location(runKey string) string {
	if d.bucket == nil {
		return filepath.Join(d.dir, runKey)
	}
	return d.base + "/" + runKey
}

// URL is where one file of the run is: a path, or its object's URL
// (scheme://bucket/prefix/<run key>/<name>, no query).
func (d *Dest) URL(runKey, name string) string {
	if d.bucket == nil {
		return filepath.Join(d.dir, runKey, name)
	}
	return d.base + "/" + runKey + "/" + name
}

// Write writes files as the run runKey's folder. In a local folder the
// folder is replaced as a whole: the files go to a new folder beside it,
// are synced to disk, and it takes the old one's place in one rename, so
// a reader sees the previous run's files or this run's, never a mix, and
// a disk that fills mid-write leaves the previous report as it was. In an
// object store, where nothing renames a prefix, every file is written
// before report.json: report.json is the one to trust, and a file newer
// than it belongs to a run that did not finish writing.
func (d *Dest) Write(ctx context.Context, runKey string, files []File) error {
	if err := checkName(runKey); err != nil {
		return fmt.Errorf("write report: run key: %w", err)
	}
	for _, f := range files {
		if err := checkName(f.Name); err != nil {
			return fmt.Errorf("write report: file name: %w", err)
		}
	}
	if d.bucket == nil {
		return replaceFolder(d.dir, runKey, files)
	}
	ordered := slices.Clone(files)
	slices.SortStableFunc(ordered, func(a, b File) int {
		switch {
		case a.Name == manifest && b.Name != manifest:
			return 1
		case b.Name == manifest && a.Name != manifest:
			return -1
		}
		return 0
	})
	for _, f := range ordered {
		opts := &blob.WriterOptions{ContentType: contentType(f.Name)}
		if err := d.bucket.WriteAll(ctx, runKey+"/"+f.Name, f.Data, opts); err != nil {
			return fmt.Errorf("write report %s: %w", d.URL(runKey, f.Name), err)
		}
	}
	return nil
}

// checkName refuses a name that is not one plain path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%q is not a plain file name", name)
	}
	return nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".json":
		return "application/json"
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".md":
		return "text/markdown; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}

// WriteReport renders r and writes it as the run r.RunKey's folder; it
// returns the folder's Location.
func (d *Dest) WriteReport(ctx context.Context, r Report) (string, error) {
	files, err := Render(r)
	if err != nil {
		return "", err
	}
	if err := d.Write(ctx, r.RunKey, files); err != nil {
		return "", err
	}
	return d.Location(r.RunKey), nil
}

// Prune removes the local report folders last written more than keep
// before now, except the folder of the run current, and the temporary
// folders of writes that never finished (after an hour). It removes only folders that hold a
// report.json, so a RECON_REPORT_DIR shared with other files loses
// nothing else. An object store is left alone: give its bucket a
// lifecycle rule instead. It returns the folders it removed.
func (d *Dest) Prune(now time.Time, keep time.Duration, current string) ([]string, error) {
	if d.bucket != nil || keep <= 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("prune reports: %w", err)
	}
	cutoff := now.Add(-keep)
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || e.Name() == current {
			continue
		}
		p := filepath.Join(d.dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if isLeftover(e.Name()) {
			// A write takes seconds: an hour-old temporary folder is
			// one a killed run left.
			if !fi.ModTime().Before(now.Add(-time.Hour)) {
				continue
			}
		} else {
			if !fi.ModTime().Before(cutoff) {
				continue
			}
			if _, err := os.Stat(filepath.Join(p, manifest)); err != nil {
				continue // not a report folder
			}
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune reports: %w", err)
	}
	return removed, nil
}

// ReadReport reads a report.json: a file, the folder holding one, or
// their object store URL (s3://bucket/prefix/<run key> or
// …/<run key>/report.json).
func ReadReport(ctx context.Context, pathOrURL string) (Report, error) {
	scheme, _, hasScheme := strings.Cut(pathOrURL, "://")
	var b []byte
	where := pathOrURL
	switch {
	case hasScheme && scheme != "file":
		u, err := url.Parse(pathOrURL)
		if err != nil {
			return Report{}, fmt.Errorf("read report %s: %w", redactURL(pathOrURL), err)
		}
		key := strings.Trim(u.Path, "/")
		if path.Base(key) != manifest {
			key = path.Join(key, manifest)
		}
		dir, name := path.Split(key)
		u.Path = dir
		d, err := Open(ctx, u.String())
		if err != nil {
			return Report{}, err
		}
		defer d.Close()
		where = d.base + "/" + name
		r, err := d.bucket.NewReader(ctx, name, nil)
		if err != nil {
			return Report{}, fmt.Errorf("read report %s: %w", where, err)
		}
		defer r.Close()
		if b, err = io.ReadAll(r); err != nil {
			return Report{}, fmt.Errorf("read report %s: %w", where, err)
		}
	default:
		p := pathOrURL
		if hasScheme {
			d, err := Open(ctx, pathOrURL)
			if err != nil {
				return Report{}, err
			}
			p = d.dir
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, manifest)
		}
		where = p
		var err error
		if b, err = os.ReadFile(p); err != nil {
			return Report{}, fmt.Errorf("read report: %w", err)
		}
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("%s is not a clickrecon report.json: %w", where, err)
	}
	return r, nil
}

// HTMLURL returns the link to a run's report.html where the reports are
// served (RECON_REPORT_URL, e.g. a bucket website or a proxy in front of
// the folder): base/<run key>/report.html, with the run key escaped as
// one path segment.
func HTMLURL(base, runKey string) (string, error) {
	if err := checkName(runKey); err != nil {
		return "", fmt.Errorf("report link: run key: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("RECON_REPORT_URL %q is not an http(s):// URL", redactURL(base))
	}
	if u.User != nil {
		return "", errors.New("RECON_REPORT_URL must not carry a user or password: it is shown in Slack")
	}
	return u.JoinPath(runKey, "report.html").String(), nil
}
