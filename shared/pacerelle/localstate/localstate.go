// Package localstate keeps one owner's secret state on disk: one file
// encrypted with AES-256-GCM under a separate random key file, written
// atomically, in a 0700 folder, owned by one process at a time.
//
//   - The key file (<name>.key, 32 random bytes) is made once, next to the
//     state; both must be backed up together. A missing key next to an
//     existing state file, a state file that does not open with the key, or
//     one that is not a state file at all is an error: it is never replaced
//     silently.
//   - Every write seals the whole state with a fresh random 96-bit nonce;
//     the associated data binds the owner id, the format version and a
//     generation counter, so a file cannot be swapped for another owner's.
//   - A write is atomic: a temporary file (0600) in the same folder,
//     written, fsynced, renamed over the state, then the folder fsynced.
//   - One process owns the state: an exclusive, non-blocking flock on
//     <name>.lock. The kernel releases it when the process dies, so a crash
//     leaves no stale lock. flock may not exclude across machines on NFS:
//     keep the folder on a local disk.
package localstate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FormatVersion is the state file's format.
const FormatVersion = 1

var magic = []byte("PCRS")

// ErrLocked: another process owns the state.
var ErrLocked = errors.New("localstate: another process owns this state")

// ErrCorrupt: the state file does not open with the key file.
var ErrCorrupt = errors.New("localstate: the state file does not decrypt with its key file")

// File is an owned, open state.
type File struct {
	owner      string
	path, key  string
	lock       *os.File
	aead       cipher.AEAD
	generation uint64
}

// FileName makes a file-name stem from an owner id: its safe characters
// and a short hash, so that distinct ids never share a file.
func FileName(owner string) string {
	var b strings.Builder
	for _, r := range owner {
		if r < 128 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	sum := sha256.Sum256([]byte(owner))
	return b.String() + "-" + hex.EncodeToString(sum[:4])
}

// Open takes the lock on owner's state in dir (made 0700) and reads it;
// data is nil when there is no state yet.
func Open(dir, owner string) (*File, []byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("state folder %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("state folder %s: %w", dir, err)
	}
	stem := filepath.Join(dir, FileName(owner))
	lock, err := os.OpenFile(stem+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("state lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(stem + ".lock")
		_ = lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil, fmt.Errorf("%w (%s, held by pid %s): stop the other process first", ErrLocked, stem+".lock", strings.TrimSpace(string(holder)))
		}
		return nil, nil, fmt.Errorf("state lock: %w", err)
	}
	_ = lock.Truncate(0)
	_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	f := &File{owner: owner, path: stem + ".state", key: stem + ".key", lock: lock}
	data, err := f.load()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, data, nil
}

func (f *File) load() ([]byte, error) {
	blob, err := os.ReadFile(f.path)
	stateMissing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !stateMissing {
		return nil, err
	}
	key, kerr := os.ReadFile(f.key)
	switch {
	case errors.Is(kerr, fs.ErrNotExist) && stateMissing:
		key = make([]byte, 32)
		rand.Read(key)
		if err := writeAtomic(f.key, key); err != nil {
			return nil, fmt.Errorf("key file: %w", err)
		}
	case errors.Is(kerr, fs.ErrNotExist):
		return nil, fmt.Errorf("%s exists but its key file %s is missing: restore both from the same backup (the state is left untouched)", f.path, f.key)
	case kerr != nil:
		return nil, kerr
	case len(key) != 32:
		return nil, fmt.Errorf("key file %s is %d bytes, not 32: restore it from the backup of its state", f.key, len(key))
	}
	b, _ := aes.NewCipher(key)
	f.aead, _ = cipher.NewGCM(b)
	if stateMissing {
		return nil, nil
	}
	n := len(magic) + 4 + 8 + 12
	if len(blob) < n+16 || !bytes.Equal(blob[:len(magic)], magic) {
		return nil, fmt.Errorf("%w: %s is not a pacerelle state file (left untouched)", ErrCorrupt, f.path)
	}
	version := binary.BigEndian.Uint32(blob[4:8])
	gen := binary.BigEndian.Uint64(blob[8:16])
	if version != FormatVersion {
		return nil, fmt.Errorf("%s has format %d; this build reads %d", f.path, version, FormatVersion)
	}
	data, err := f.aead.Open(nil, blob[16:28], blob[n:], f.aad(version, gen))
	if err != nil {
		return nil, fmt.Errorf("%w: %s with %s (wrong key, another owner's file, or damage; left untouched)", ErrCorrupt, f.path, f.key)
	}
	f.generation = gen
	return data, nil
}

func (f *File) aad(version uint32, gen uint64) []byte {
	a := []byte("pacerelle-state\x00" + f.owner + "\x00")
	a = binary.BigEndian.AppendUint32(a, version)
	return binary.BigEndian.AppendUint64(a, gen)
}

// Save replaces the state with data, atomically.
func (f *File) Save(data []byte) error {
	gen := f.generation + 1
	nonce := make([]byte, 12)
	rand.Read(nonce)
	blob := append([]byte{}, magic...)
	blob = binary.BigEndian.AppendUint32(blob, FormatVersion)
	blob = binary.BigEndian.AppendUint64(blob, gen)
	blob = append(blob, nonce...)
	blob = f.aead.Seal(blob, nonce, data, f.aad(FormatVersion, gen))
	if err := writeAtomic(f.path, blob); err != nil {
		return err
	}
	f.generation = gen
	return nil
}

// Path is the state file's path.
func (f *File) Path() string { return f.path }

// Close releases the lock.
func (f *File) Close() error {
	if f.lock == nil {
		return nil
	}
	err := f.lock.Close()
	f.lock = nil
	return err
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // created 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
