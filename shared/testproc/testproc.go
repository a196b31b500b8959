// Package testproc holds what the test harnesses that run child processes
// have in common — those of the local stand-ins (DynamoDB Local, fauxqs) and
// the end-to-end ones that run the product (tests/): finding the
// repository, picking a port, capturing the child's output, serialising
// installs and making sure the child dies with the test binary.
package testproc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// RepoRoot walks up from the working directory to the folder holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testproc: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testproc: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Output collects a child process's output, safe to read while it writes.
type Output struct {
	// Limit, when positive, keeps only about the first Limit bytes (a
	// stand-in is chatty only when something is wrong).
	Limit int
	mu    sync.Mutex
	b     bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Limit > 0 && o.b.Len() > o.Limit {
		return len(p), nil
	}
	return o.b.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
