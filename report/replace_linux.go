package report

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// swapIn puts the folder tmp at final. On Linux the two names are
// exchanged in one step (renameat2 RENAME_EXCHANGE), so final always
// exists and is always one run's; tmp then holds the previous folder,
// whose path is returned. A new final is a plain rename, and a file
// system without the exchange falls back to two renames.
func swapIn(tmp, final string) (string, error) {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, final, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return tmp, nil
	case errors.Is(err, unix.ENOENT):
		return "", os.Rename(tmp, final)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return swapRenames(tmp, final)
	}
	return "", &os.LinkError{Op: "exchange", Old: tmp, New: final, Err: err}
}
