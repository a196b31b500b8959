package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OpenCopy opens a private copy of the database at path (and its WAL):
// a reader that may write scratch state, such as a command run beside a
// live server, without touching the server's file or waiting on its locks.
// Close removes the copy.
func OpenCopy(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "vp-sqlite-copy-")
	if err != nil {
		return nil, err
	}
	dst := filepath.Join(tmp, filepath.Base(path))
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(path+suffix, dst+suffix); err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("copying the database: %w", err)
		}
	}
	st, err := Open(ctx, Options{Path: dst, Synchronous: "OFF"})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	st.removeOnClose = tmp
	return st, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Path is the database file the store opened.
func (s *Store) Path() string { return s.path }
