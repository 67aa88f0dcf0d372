package storage

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// swapIn puts the folder tmp at final. On Linux the two names are
// exchanged in one step (renameat2 RENAME_EXCHANGE), so final always
// exists and is always one run's; tmp then holds the previous folder,
// whose path is returned. A new final is a plain rename, and a file
// system without the exchange falls back to two renames. When another
// write puts its folder at final between the two (two runs of one
// report at once), the exchange is tried again: the last to swap wins,
// and each one's folder is whole.
func swapIn(tmp, final string) (string, error) {
	for range 3 {
		err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, final, unix.RENAME_EXCHANGE)
		switch {
		case err == nil:
			return tmp, nil
		case errors.Is(err, unix.ENOENT):
			err := os.Rename(tmp, final)
			if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
				continue // another write created final first
			}
			return "", err
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			return swapRenames(tmp, final)
		default:
			return "", &os.LinkError{Op: "exchange", Old: tmp, New: final, Err: err}
		}
	}
	return "", &os.LinkError{Op: "exchange", Old: tmp, New: final, Err: unix.EBUSY}
}
