//go:build !linux

package benchkit

// DropPageCache does nothing here: the peak RSS comes from GNU time, on
// Linux.
func DropPageCache(string) error { return nil }
