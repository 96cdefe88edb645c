//go:build !linux

package tsc

// trusted reports why the counter must not be used: off Linux, its quality is unknown.
func trusted() error { return errUnsupported }
