//go:build !unix

package emulator

// LockFile is a no-op where flock is unavailable.
func LockFile(string) (func(), error) { return func() {}, nil }
