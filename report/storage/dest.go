// Package storage keeps clickrecon's reports where RECON_REPORT_DIR says:
// a local folder, whose run folders are replaced as a whole, or a prefix
// in an object store (s3://, and gs:// and azblob:// behind build tags),
// where a reader tells a whole report from a partial one. It writes the
// files report renders, reads a report.json back, lists the runs and
// their repair plans for the viewer, prunes old runs and probes that the
// destination takes writes.
package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

// manifest is the file a reader trusts: on object storage it is written
// after every other file of the run.
const manifest = "report.json"

// Dest is where reports are written: a local folder, or a prefix in an
// object store (s3://, gs://, azblob://), each through its service's own
// client (see objectStore). Each run
// writes the folder <run key>/ under it.
type Dest struct {
	dir    string  // the local folder, when bucket is nil
	bucket *bucket // the object store, already narrowed to the prefix
	base   string  // scheme://bucket/prefix, without query: for messages
	// borrowed is a Sub's: its client is its parent's, closed with it.
	borrowed bool
}

// An Option changes how Open's destination waits.
type Option func(*openOptions)

type openOptions struct {
	sleep func(context.Context, time.Duration) error
}

// WithSleep makes an s3:// store's waits between the retries of a request
// go through sleep, a virtual clock's in a simulation, instead of the wall
// clock. gs:// and azblob:// wait on the wall clock.
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(o *openOptions) { o.sleep = sleep }
}

// objectSchemes are the URL schemes that name an object store.
var objectSchemes = []string{"s3", "gs", "azblob"}

// Open returns the destination that dirOrURL names: a folder path, a
// file:// URL (the same folder), or an object store URL such as
// s3://bucket/prefix?region=eu-central-1 (gs://bucket/prefix,
// azblob://container/prefix). The query configures the store (see openS3,
// openGCS, openAzure); the path is the prefix the
// reports go under. Credentials come from the environment (a workload
// identity, AWS_SHARED_CREDENTIALS_FILE, GOOGLE_APPLICATION_CREDENTIALS,
// AZURE_STORAGE_ACCOUNT and its key or identity). gs:// and azblob:// are
// in a build with the tags gcs and azblob only; without them, such a URL
// is an ErrNoDriver naming the tag. Close the Dest after use.
func Open(ctx context.Context, dirOrURL string, opts ...Option) (*Dest, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
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
	// The object stores RECON_REPORT_DIR accepts. file:// is a local
	// folder (written by Dest itself, which replaces a run's folder as a
	// whole), so fileblob is not needed.
	store, err := openBucket(ctx, &bucketURL, o)
	if err != nil {
		return nil, fmt.Errorf("open report destination %s: %w", redactURL(dirOrURL), err)
	}
	b := &bucket{store: store}
	if prefix != "" {
		b.prefix = prefix + "/"
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
	if d.bucket == nil || d.borrowed {
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

// Write writes files as the run runKey's folder, and replaces a report
// there as a whole or not at all. In a local folder the folder is replaced
// in one step: the files go to a new folder beside it, are synced to disk,
// and it takes the old one's place in one rename, so a reader sees the
// previous run's files or this run's, never a mix, and a disk that fills
// mid-write leaves the previous report as it was. In an object store,
// where nothing renames a prefix, see writeObjects. A failure is a
// *NotStoredError.
func (d *Dest) Write(ctx context.Context, runKey string, files []report.File) error {
	if err := checkName(runKey); err != nil {
		return fmt.Errorf("write report: run key: %w", err)
	}
	for _, f := range files {
		if err := checkName(f.Name); err != nil {
			return fmt.Errorf("write report: file name: %w", err)
		}
	}
	var err error
	if d.bucket == nil {
		err = replaceFolder(d.dir, runKey, files)
	} else {
		err = d.writeObjects(ctx, runKey, files)
	}
	if err != nil {
		return d.notStored(err)
	}
	return nil
}

// The objects' metadata key that names the write they belong to: every
// object of one write carries the same random value.
const attemptKey = "clickrecon-write"

// htmlPage is the file a report's link opens.
const htmlPage = "report.html"

// writeObjects writes files under runKey/ in an object store, so that a
// reader can always tell a complete report from a partial one:
//
//  1. report.json and report.html, the file readers trust and the file a
//     link opens, are deleted first: until step 4 the folder holds no
//     report, never half of one;
//  2. the other files are written, then report.html;
//  3. the files of an earlier write that this one does not write are
//     deleted (only clickrecon's: a name it writes, or its metadata);
//  4. report.json is written last, and then every file is checked to be
//     this write's, each carrying the write's id in its metadata.
//
// A write that dies midway leaves no report.json (a reader sees no
// report), and the next write gives a whole one. Two writers at once are
// told apart by the id: the one whose files were overwritten fails, and
// ReadReport refuses a report.json whose folder mixes two writes.
func (d *Dest) writeObjects(ctx context.Context, runKey string, files []report.File) error {
	id, err := newWriteID()
	if err != nil {
		return err
	}
	dir := runKey + "/"
	for _, name := range []string{manifest, htmlPage} {
		if err := d.bucket.Delete(ctx, dir+name); err != nil && !isNotFound(err) {
			return fmt.Errorf("remove %s before writing anew: %w", d.URL(runKey, name), err)
		}
	}
	ordered := slices.Clone(files)
	rank := func(f report.File) int {
		switch f.Name {
		case manifest:
			return 2
		case htmlPage:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(ordered, func(a, b report.File) int { return rank(a) - rank(b) })
	written := map[string]bool{}
	for i, f := range ordered {
		if f.Name == manifest {
			if err := d.removeStale(ctx, runKey, written); err != nil {
				return err
			}
		}
		if err := d.bucket.WriteAll(ctx, dir+f.Name, f.Data, contentType(f.Name), map[string]string{attemptKey: id}); err != nil {
			return fmt.Errorf("write %s (%d of %d files written): %w", d.URL(runKey, f.Name), i, len(ordered), err)
		}
		written[f.Name] = true
	}
	if !written[manifest] {
		return nil
	}
	return d.checkWrite(ctx, runKey, id)
}

// newWriteID returns a random id for one write.
func newWriteID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// objects lists the objects directly under dir (runKey/) that clickrecon wrote
// (a name it writes, or its write id in their metadata), with their
// attributes: the write id is their Metadata[attemptKey] ("" when they
// have none). An object that is not clickrecon's is not listed, so it is
// never removed nor taken for part of a report.
func (d *Dest) objects(ctx context.Context, dir string) (map[string]*objectAttributes, error) {
	out := map[string]*objectAttributes{}
	it := d.bucket.List(dir, "/")
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s/%s: %w", d.base, dir, err)
		}
		name := strings.TrimPrefix(obj.Key, dir)
		if obj.IsDir || name == "" || strings.Contains(name, "/") {
			continue
		}
		a, err := d.bucket.Attributes(ctx, obj.Key)
		if isNotFound(err) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("read the attributes of %s/%s: %w", d.base, obj.Key, err)
		}
		if _, ours := a.Metadata[attemptKey]; ours || slices.Contains(report.Files, name) {
			out[name] = a
		}
	}
}

// removeStale deletes clickrecon's objects under runKey/ that this write
// did not write.
func (d *Dest) removeStale(ctx context.Context, runKey string, written map[string]bool) error {
	objs, err := d.objects(ctx, runKey+"/")
	if err != nil {
		return err
	}
	for name := range objs {
		if written[name] || name == manifest {
			continue
		}
		if err := d.bucket.Delete(ctx, runKey+"/"+name); err != nil && !isNotFound(err) {
			return fmt.Errorf("remove %s, left by an earlier write: %w", d.URL(runKey, name), err)
		}
	}
	return nil
}

// ErrConcurrentWrite matches a report folder in an object store that two
// writes wrote at once: it holds files of both.
var ErrConcurrentWrite = errors.New("another write of the same report ran at the same time")

// checkWrite reports whether every file of clickrecon's under runKey/ is
// the write id's.
func (d *Dest) checkWrite(ctx context.Context, runKey, id string) error {
	return d.checkWhole(ctx, runKey+"/", id)
}

// checkWhole reports whether every file of clickrecon's under dir is of
// the write id, the one that wrote report.json.
func (d *Dest) checkWhole(ctx context.Context, dir, id string) error {
	objs, err := d.objects(ctx, dir)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(objs)) {
		if objs[name].Metadata[attemptKey] != id {
			return fmt.Errorf("%s/%s%s is of another write than %s: %w (run the report again once it has finished)",
				d.base, dir, name, manifest, ErrConcurrentWrite)
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
func (d *Dest) WriteReport(ctx context.Context, r report.Report) (string, error) {
	files, err := report.Render(r)
	if err != nil {
		return "", err
	}
	if err := d.Write(ctx, r.RunKey, files); err != nil {
		return "", err
	}
	return d.Location(r.RunKey), nil
}

// Write writes every report file as dir/<run key>/ and returns where that
// folder is. dir is a folder or an object store URL (see Open). A local
// folder is replaced as a whole, never left a mix of two runs; in an
// object store report.json is written last (see Dest.Write).
func Write(dir string, r report.Report) (string, error) {
	ctx := context.Background()
	d, err := Open(ctx, dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return d.WriteReport(ctx, r)
}

// Prune removes the local report folders of clickrecon's runs last
// written more than keep before now, except the folder of the run current,
// and the temporary folders of writes that never finished (after an
// hour). A RECON_REPORT_DIR may be shared with other files, so a folder is
// removed only when clickrecon's mark is on it: its name is a run key and
// it holds a report.json of clickrecon's (see isOwnReport); a temporary
// folder only under the exact name replaceFolder gives it (isLeftover).
// Nothing else is ever removed, nor followed: a symbolic link is left
// alone. An object store is left alone: give its bucket a lifecycle rule
// instead. It returns the folders it removed.
func (d *Dest) Prune(now time.Time, keep time.Duration, current string) ([]string, error) {
	if d.bucket != nil || keep <= 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("prune reports in %s: %w", d.dir, err)
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
		switch {
		case isLeftover(e.Name()):
			// A write takes seconds: an hour-old temporary folder is
			// one a killed run left.
			if !fi.ModTime().Before(now.Add(-time.Hour)) {
				continue
			}
		case isRunKey(e.Name()):
			if !fi.ModTime().Before(cutoff) || !isOwnReport(p, e.Name()) {
				continue
			}
		default:
			continue
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

// isOwnReport reports whether the folder dir, named runKey, holds a
// report.json that clickrecon wrote for that run: a regular file whose
// "tool" is Tool, whose schema version is one of clickrecon's and whose
// run key is the folder's name. Another tool's report.json, or a report
// copied into another folder, is not.
func isOwnReport(dir, runKey string) bool {
	p := filepath.Join(dir, manifest)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxReportJSON {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var mark struct {
		SchemaVersion int    `json:"schema_version"`
		Tool          string `json:"tool"`
		RunKey        string `json:"run_key"`
	}
	if json.Unmarshal(b, &mark) != nil {
		return false
	}
	return mark.Tool == report.Tool && mark.SchemaVersion >= 1 && mark.SchemaVersion <= report.SchemaVersion && mark.RunKey == runKey
}

// maxReportJSON bounds the report.json Prune reads to recognise a folder:
// a year's report is well under it.
const maxReportJSON = 256 << 20

// runKeyLen is the length of every run key: yyyymmdd_yyyymmdd_ and 12 hex
// digits.
const runKeyLen = 8 + 1 + 8 + 1 + 12

// isRunKey reports whether name has the shape RunKey gives every key.
func isRunKey(name string) bool {
	if len(name) != runKeyLen || name[8] != '_' || name[17] != '_' {
		return false
	}
	for i := range len(name) {
		c := name[i]
		switch {
		case i == 8 || i == 17:
		case i < 17 && '0' <= c && c <= '9':
		case i > 17 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// ReadReport reads a report.json: a file, the folder holding one, or
// their object store URL (s3://bucket/prefix/<run key> or
// …/<run key>/report.json).
func ReadReport(ctx context.Context, pathOrURL string) (report.Report, error) {
	scheme, _, hasScheme := strings.Cut(pathOrURL, "://")
	var b []byte
	where := pathOrURL
	switch {
	case hasScheme && scheme != "file":
		u, err := url.Parse(pathOrURL)
		if err != nil {
			return report.Report{}, fmt.Errorf("read report %s: %w", redactURL(pathOrURL), err)
		}
		key := strings.Trim(u.Path, "/")
		if path.Base(key) != manifest {
			key = path.Join(key, manifest)
		}
		dir, name := path.Split(key)
		u.Path = dir
		d, err := Open(ctx, u.String())
		if err != nil {
			return report.Report{}, err
		}
		defer d.Close()
		where = d.base + "/" + name
		if b, err = d.readWhole(ctx, name); err != nil {
			return report.Report{}, fmt.Errorf("read report %s: %w", where, err)
		}
	default:
		p := pathOrURL
		if hasScheme {
			d, err := Open(ctx, pathOrURL)
			if err != nil {
				return report.Report{}, err
			}
			p = d.dir
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, manifest)
		}
		where = p
		var err error
		if b, err = os.ReadFile(p); err != nil {
			return report.Report{}, fmt.Errorf("read report: %w", err)
		}
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return report.Report{}, fmt.Errorf("%s is not a clickrecon report.json: %w", where, err)
	}
	return r, nil
}

// readWhole reads the report.json name of an object store's folder, and
// checks that the folder is whole: every other file of clickrecon's there
// is of the write that wrote report.json. A report.json written before
// writes were marked is read as it is.
func (d *Dest) readWhole(ctx context.Context, name string) ([]byte, error) {
	a, err := d.bucket.Attributes(ctx, name)
	if err != nil {
		return nil, err
	}
	f, err := d.streamObject(ctx, name, a)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	if id, ok := a.Metadata[attemptKey]; ok {
		if err := d.checkWhole(ctx, "", id); err != nil {
			return nil, err
		}
	}
	return b, nil
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
