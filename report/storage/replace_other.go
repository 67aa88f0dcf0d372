//go:build !linux

package storage

// swapIn puts the folder tmp at final, with two renames: see swapRenames.
func swapIn(tmp, final string) (string, error) { return swapRenames(tmp, final) }
