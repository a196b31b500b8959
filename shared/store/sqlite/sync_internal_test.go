package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynchronousMode: the default is FULL; VP_SQLITE_SYNC's values are
// taken in any case; anything else is refused naming the choices.
func TestSynchronousMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int // PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL
		err  string
	}{
		{"", 2, ""}, {"FULL", 2, ""}, {"full", 2, ""}, {"normal", 1, ""}, {"NORMAL", 1, ""}, {"off", 0, ""},
		{"fsync", 0, "want NORMAL, FULL"},
	} {
		t.Run(c.in, func(t *testing.T) {
			s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "s.db"), Synchronous: c.in})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Open(%q): %v, want an error naming %q", c.in, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got int
			if err := s.w.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("synchronous %q: the writer runs with %d, want %d", c.in, got, c.want)
			}
		})
	}
}
