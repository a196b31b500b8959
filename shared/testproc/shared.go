package testproc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// Shared hands out a running stand-in: under Main, one per test binary,
// started on first use and stopped when the tests end; otherwise one per
// test, stopped at its cleanup.
type Shared[S interface{ Stop() }] struct {
	Launch func(context.Context) (S, error)
	// Ready describes a started stand-in for the log ("fauxqs at ... in 2s").
	Ready func(S) string

	managed bool // Main is running the tests
	once    sync.Once
	srv     S
	err     error
	started bool
}

// Main runs the package's tests; call it from TestMain.
func (s *Shared[S]) Main(m *testing.M) {
	s.managed = true
	code := m.Run()
	if s.started {
		s.srv.Stop()
	}
	os.Exit(code)
}

// Get returns a running stand-in, or why none could start.
func (s *Shared[S]) Get(t testing.TB) (S, error) {
	t.Helper()
	if s.managed {
		s.once.Do(func() {
			s.srv, s.err = s.launch()
			s.started = s.err == nil
			if s.started && s.Ready != nil {
				fmt.Fprintln(os.Stderr, s.Ready(s.srv))
			}
		})
		return s.srv, s.err
	}
	srv, err := s.launch()
	if err == nil {
		t.Cleanup(srv.Stop)
	}
	return srv, err
}

func (s *Shared[S]) launch() (S, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return s.Launch(ctx)
}
