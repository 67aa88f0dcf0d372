package storage

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"syscall"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// ErrNotStored matches (with errors.Is) every error of a report that was
// rendered but could not be written where RECON_REPORT_DIR says: the run's
// verdict is known, but no report holds it. The error is a
// *NotStoredError.
var ErrNotStored = errors.New("report not stored")

// NotStoredError is a report that could not be written to its
// destination. Its message names RECON_REPORT_DIR (without a query or a
// password) and what to check; it never quotes a URL's query, which may
// hold a token.
type NotStoredError struct {
	Where string // the folder, or scheme://bucket/prefix
	Check string // what the operator should check
	Err   error
}

func (e *NotStoredError) Error() string {
	return fmt.Sprintf("report not stored in RECON_REPORT_DIR %s: %s; check %s", e.Where, redactQueries(e.Err.Error()), e.Check)
}

func (e *NotStoredError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotStored) true.
func (e *NotStoredError) Is(target error) bool { return target == ErrNotStored }

// notStored wraps err, a failed write to d, as a *NotStoredError with
// what to check.
func (d *Dest) notStored(err error) error {
	where := d.dir
	if d.bucket != nil {
		where = d.base
	}
	return &NotStoredError{Where: where, Check: d.whatToCheck(err), Err: err}
}

func (d *Dest) whatToCheck(err error) string {
	switch {
	case errors.Is(err, safehttp.ErrRedirect):
		return "the store's endpoint: it redirects elsewhere, and credentials never follow a redirect"
	case errors.Is(err, ErrConcurrentWrite):
		return "that one run at a time writes this report"
	case d.bucket == nil && errors.Is(err, os.ErrPermission):
		return "that this user may create and write the folder"
	case d.bucket == nil && errors.Is(err, syscall.ENOSPC):
		return "the free space on the folder's disk"
	case d.bucket == nil:
		return "that the folder's path exists or can be created, and is a folder"
	}
	switch codeOf(err) {
	case codeNotFound:
		return "that the bucket exists, and its name and region"
	case codePermissionDenied:
		return "that the credentials may list, read, write and delete objects under the prefix"
	case codeInvalidArgument:
		return "the bucket's settings in the URL's query (region, endpoint, encryption)"
	}
	return "that the store is reachable and answering; a retry may help"
}

// urlQuery is a URL's query, up to a space or a quote.
var urlQuery = regexp.MustCompile(`(https?://[^\s"'?]*)\?[^\s"']*`)

// redactQueries removes the queries of the URLs in msg: an SDK's error
// quotes the URL it sent, and an Azure SAS token is in its query.
func redactQueries(msg string) string { return urlQuery.ReplaceAllString(msg, "$1?…") }
