//go:build !unix

package testproc

// LockFile is a no-op where flock is unavailable.
func LockFile(string) (func(), error) { return func() {}, nil }
