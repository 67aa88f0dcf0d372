//go:build !linux

package main

// dropPageCache does nothing here: the peak RSS comes from GNU time, on
// Linux.
func dropPageCache(string) error { return nil }
