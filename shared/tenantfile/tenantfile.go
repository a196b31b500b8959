// Package tenantfile keeps a per-tenant setting of the embedded binary in
// one JSON file of its data dir, {"tenants": {"<tenant>": <value>}}, mode
// 0600, as the GitHub credentials are kept (github.FileCredentials): the
// admin commands change it while the server runs, and the server rereads
// it when it changes, without a restart.
package tenantfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// File holds one value of type T per tenant. Each change rewrites the
// file whole into a temporary file renamed over it, so that a reader sees
// the old file or the new one, never half of one. Reads are cached until
// the file's size or modification time changes. It is safe for
// concurrent use in a process; two processes changing it at the same
// moment may lose one of the changes (an admin command run by hand does
// not race).
type File[T any] struct {
	// Path is the file, in the data dir.
	Path string

	mu     sync.Mutex
	cached map[string]T
	stamp  stamp
}

// stamp tells whether the file changed since it was read.
type stamp struct {
	mod  time.Time
	size int64
	ok   bool
}

type doc[T any] struct {
	Tenants map[string]T `json:"tenants"`
}

// Get returns tenant's value (the zero T when it has none). Callers must
// not modify what it returns: it is shared with the cache.
func (f *File[T]) Get(op, tenant string) (T, error) {
	var zero T
	if !vp.ValidTenant(tenant) {
		return zero, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.load(op)
	if err != nil {
		return zero, err
	}
	return all[tenant], nil
}

// All returns every tenant's value. Callers must not modify the values.
func (f *File[T]) All(op string) (map[string]T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.load(op)
	return maps.Clone(all), err
}

// Change rereads the file (not the cache: another process may have
// changed it within the modification time's resolution), lets edit change
// its own copy, and writes the file back when edit says so.
func (f *File[T]) Change(op string, edit func(all map[string]T) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, _, err := f.read(op)
	if err != nil {
		return err
	}
	if all == nil {
		all = map[string]T{}
	}
	if !edit(all) {
		return nil
	}
	if err := WriteAtomic(f.Path, doc[T]{Tenants: all}); err != nil {
		return vp.Wrap(op, vp.KindInternal, err)
	}
	f.cached, f.stamp = nil, stamp{}
	return nil
}

// load returns the file's entries from the cache while the file is
// unchanged. Callers hold f.mu.
func (f *File[T]) load(op string) (map[string]T, error) {
	if f.Path == "" {
		return nil, vp.E(op, vp.KindInternal, "", "tenantfile.File has no Path")
	}
	fi, err := os.Stat(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		f.cached, f.stamp = nil, stamp{ok: true}
		return nil, nil
	}
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	if st := (stamp{mod: fi.ModTime(), size: fi.Size(), ok: true}); st == f.stamp {
		return f.cached, nil
	}
	all, st, err := f.read(op)
	if err != nil {
		return nil, err
	}
	f.cached, f.stamp = all, st
	return all, nil
}

// read decodes the file into new maps, shared with nothing.
func (f *File[T]) read(op string) (map[string]T, stamp, error) {
	if f.Path == "" {
		return nil, stamp{}, vp.E(op, vp.KindInternal, "", "tenantfile.File has no Path")
	}
	fi, err := os.Stat(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, stamp{ok: true}, nil
	}
	if err != nil {
		return nil, stamp{}, vp.Wrap(op, vp.KindInternal, err)
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, stamp{}, vp.Wrap(op, vp.KindInternal, err)
	}
	var d doc[T]
	if err := json.Unmarshal(b, &d); err != nil {
		// Where, never what: the file may hold secrets.
		var se *json.SyntaxError
		where := ""
		if errors.As(err, &se) {
			where = fmt.Sprintf(" at byte %d", se.Offset)
		}
		return nil, stamp{}, vp.Errorf(op, vp.KindInternal, "", "%s is not a settings file of this version%s; fix or remove it", f.Path, where)
	}
	return d.Tenants, stamp{mod: fi.ModTime(), size: fi.Size(), ok: true}, nil
}

// WriteAtomic writes v as indented JSON to a temporary file in path's
// folder, made 0600 before anything is in it, syncs it, renames it over
// path and syncs the folder: a reader sees the old file or the new one,
// never a part, and no secret is ever readable by another user.
func WriteAtomic(path string, v any) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	// The rename is durable once the folder is synced.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
