package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// ErrUnwritable marks a destination that refuses clickrecon's writes in a
// way only the configuration can mend: a folder that cannot be made or
// written (a read-only or missing volume, its owner), a bucket that does
// not exist, that the credentials may not write, or whose endpoint
// redirects elsewhere.
var ErrUnwritable = errors.New("the report destination cannot be written")

// markerPrefix names Probe's marker: a name of clickrecon's own, which no
// report, run folder or other file has.
const markerPrefix = ".clickrecon-check-"

// Probe writes a marker of its own at the destination and removes it, so
// that a report folder or bucket that refuses writes is found before a
// run asks anything of its sources. It removes only what it made: the
// marker (a name of its own, with a random part), and in a folder the
// folders it had to create for it (a run would create them too). Nothing
// else is read, listed or deleted. An error that only the configuration
// can mend matches ErrUnwritable; any other (the object store
// unreachable, say) may pass with a retry.
func (d *Dest) Probe(ctx context.Context) error {
	id, err := newWriteID()
	if err != nil {
		return err
	}
	name := markerPrefix + id
	data := []byte("written and removed by clickrecon check\n")
	if d.bucket == nil {
		return probeFolder(d.dir, name, data)
	}
	// A HEAD of the marker's name first: it has no body, so a redirect
	// is met (and refused) here, where a PUT's would only fail.
	if _, err := d.bucket.Attributes(ctx, name); err != nil && !isNotFound(err) {
		return fmt.Errorf("read %s/%s: %w", d.base, name, bucketRefusal(err))
	}
	if err := d.bucket.WriteAll(ctx, name, data, "", nil); err != nil {
		return fmt.Errorf("write %s/%s: %w", d.base, name, bucketRefusal(err))
	}
	if err := d.bucket.Delete(ctx, name); err != nil {
		return fmt.Errorf("delete %s/%s, the marker just written (delete it by hand): %w", d.base, name, bucketRefusal(err))
	}
	return nil
}

// bucketRefusal marks err ErrUnwritable when the store said no, not that
// it could not be reached.
func bucketRefusal(err error) error {
	if errors.Is(err, safehttp.ErrRedirect) {
		return unwritable{err} // the endpoint is not the store's
	}
	switch codeOf(err) {
	case codePermissionDenied, codeNotFound, codeInvalidArgument:
		return unwritable{err}
	}
	return err
}

// folderProbes makes the probes of local folders in one process one at a
// time: two at once under a parent folder that neither found (the
// workspaces of a fleet, each under RECON_REPORT_DIR/<name>) would each
// make it, and remove it under the other.
var folderProbes sync.Mutex

// probeFolder is Probe in the folder dir.
func probeFolder(dir, name string, data []byte) error {
	folderProbes.Lock()
	defer folderProbes.Unlock()
	made, err := mkdirs(dir)
	defer func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // only if still empty: a run may have written since
		}
	}()
	if err != nil {
		return unwritable{err}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return unwritable{err}
	}
	if err := os.Remove(path); err != nil {
		return unwritable{fmt.Errorf("remove %s, the marker just written: %w", path, err)}
	}
	return nil
}

// mkdirs makes dir and the folders above it that do not exist, and
// returns those it made, outermost first. Another process may make or
// remove the same folders meanwhile (the pods of a fleet, probing their
// folders under one new parent): a folder it made is taken as there, and
// a parent it removed is made again, up to 20 times.
func mkdirs(dir string) ([]string, error) {
	var made []string
	var err error
	for range 20 {
		var missing []string
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
				break
			}
			missing = append(missing, d)
			if filepath.Dir(d) == d {
				break
			}
		}
		err = nil
		for i := len(missing) - 1; i >= 0 && err == nil; i-- {
			switch err = os.Mkdir(missing[i], 0o755); {
			case err == nil:
				made = append(made, missing[i])
			case errors.Is(err, os.ErrExist):
				err = nil // made by another meanwhile
			}
		}
		if !errors.Is(err, os.ErrNotExist) {
			return made, err
		}
	}
	return made, err
}

// unwritable is an error that matches ErrUnwritable and says only its own
// words.
type unwritable struct{ err error }

func (e unwritable) Error() string        { return e.err.Error() }
func (e unwritable) Unwrap() error        { return e.err }
func (e unwritable) Is(target error) bool { return target == ErrUnwritable }
