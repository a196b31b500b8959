//go:build !unix

package sqstest

func lockFile(string) (func(), error) { return func() {}, nil }
