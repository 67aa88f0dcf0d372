// Package durable writes files that are on disk when the write returns:
// the report's files and the repair's plan and journal, which a crash
// right after must not lose.
package durable

import "os"

// WriteFile opens path for writing with flag added to os.O_WRONLY|
// os.O_CREATE (os.O_EXCL, os.O_TRUNC or os.O_APPEND), creating it with
// perm, writes data and syncs it before it returns.
func WriteFile(path string, data []byte, flag int, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncDir syncs a folder, so that the names created or renamed in it are
// on disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
