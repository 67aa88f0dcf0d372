package runlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// takeFile takes an exclusive flock(2) on the workspace's lock file beside
// the SQLite file of t: PATH.lock-KEY, KEY the workspace's Key in hex,
// so that the runs of two workspaces sharing a history do not exclude each
// other. The lock file is created when missing and never removed (removing
// it would let a run lock a new file while another holds the old one).
//
// When the file's folder cannot take the lock file (a store on a read-only
// volume), it goes in the system's temporary folder, named after the
// file's resolved path: it then keeps apart only the runs of one machine,
// which are the only ones that share a local file anyway.
func takeFile(t dsn.Target, workspaceID string) (*Lock, error) {
	u, err := url.Parse(t.Conn)
	if err != nil {
		return nil, fmt.Errorf("sqlite path of %s: %w", t.Redacted, err)
	}
	db := resolve(u.Path)
	key := fmt.Sprintf("%016x", uint64(Key(workspaceID)))
	path := db + ".lock-" + key
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		sum := sha256.Sum256([]byte(db))
		fallback := filepath.Join(os.TempDir(), "clickrecon-"+hex.EncodeToString(sum[:8])+".lock-"+key)
		var ferr error
		if f, ferr = os.OpenFile(fallback, os.O_RDWR|os.O_CREATE, 0o644); ferr != nil {
			return nil, fmt.Errorf("create lock file beside %s: %w (nor in the temporary folder: %v)", db, err, ferr)
		}
		path = fallback
	}
	l, err := flock(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return l, nil
}

// resolve returns the absolute path p with its symbolic links resolved, so
// that two spellings of one file share a lock file. A missing file (a
// history still to be created) is resolved through its folder.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// flock takes an exclusive, non-blocking flock on f, whose path is path.
// The lock belongs to the open file description, so it is released when f
// is closed, by Release or by the kernel when the process dies.
func flock(f *os.File, path string) (*Lock, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	held := func(context.Context) error {
		// The lock is on this file: if the path now names another file
		// (removed, replaced), a second run can lock that one.
		mine, err := f.Stat()
		if err != nil {
			return fmt.Errorf("%w (its file is closed: %v)", ErrLost, err)
		}
		now, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w (its file is gone: %v)", ErrLost, err)
		}
		if !os.SameFile(mine, now) {
			return fmt.Errorf("%w (its file was replaced)", ErrLost)
		}
		return nil
	}
	release := func() error {
		uerr := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		cerr := f.Close()
		return errors.Join(uerr, cerr)
	}
	return &Lock{where: "lock file " + path, held: held, release: release}, nil
}
