package localstate_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
)

// TestRoundTripAndModes: saved state reads back after reopening; the
// folder is 0700, the files 0600; the file holds no plaintext and each
// write uses a fresh nonce.
func TestRoundTripAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp")
	f, data, err := localstate.Open(dir, "agent/bot")
	if err != nil || data != nil {
		t.Fatalf("first open: %v %q", err, data)
	}
	secret := []byte(`{"inbox":"PLAINTEXT-CANARY"}`)
	if err := f.Save(secret); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(f.Path())
	if err := f.Save(secret); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(f.Path())
	if bytes.Contains(second, []byte("CANARY")) || bytes.Equal(first[16:28], second[16:28]) {
		t.Fatal("plaintext in the file, or a nonce reused")
	}
	_ = f.Close()
	f, data, err = localstate.Open(dir, "agent/bot")
	if err != nil || !bytes.Equal(data, secret) {
		t.Fatalf("reopen: %v %q", err, data)
	}
	_ = f.Close()
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		st, _ := os.Stat(filepath.Join(dir, e.Name()))
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", e.Name(), st.Mode().Perm())
		}
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestRefusals: a damaged file, a wrong key, a missing key and another
// owner's file are errors, and the state file is left as it was.
func TestRefusals(t *testing.T) {
	cases := map[string]func(t *testing.T, dir, state, key string){
		"damaged": func(t *testing.T, dir, state, key string) {
			b, _ := os.ReadFile(state)
			b[len(b)-3] ^= 1
			_ = os.WriteFile(state, b, 0o600)
		},
		"wrong key": func(t *testing.T, dir, state, key string) {
			_ = os.WriteFile(key, bytes.Repeat([]byte{7}, 32), 0o600)
		},
		"missing key": func(t *testing.T, dir, state, key string) { _ = os.Remove(key) },
		"not a state file": func(t *testing.T, dir, state, key string) {
			_ = os.WriteFile(state, []byte("hello"), 0o600)
		},
		"another owner's file": func(t *testing.T, dir, state, key string) {
			stem := filepath.Join(dir, localstate.FileName("agent/eve"))
			f, _, err := localstate.Open(dir, "agent/eve")
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Save([]byte("eve"))
			_ = f.Close()
			b, _ := os.ReadFile(stem + ".state")
			k, _ := os.ReadFile(stem + ".key")
			_ = os.WriteFile(state, b, 0o600)
			_ = os.WriteFile(key, k, 0o600)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f, _, err := localstate.Open(dir, "agent/bot")
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Save([]byte("state"))
			state := f.Path()
			_ = f.Close()
			damage(t, dir, state, strings.TrimSuffix(state, ".state")+".key")
			before, _ := os.ReadFile(state)
			if _, _, err := localstate.Open(dir, "agent/bot"); err == nil {
				t.Fatal("opened")
			} else {
				t.Log(err)
			}
			after, _ := os.ReadFile(state)
			if !bytes.Equal(before, after) {
				t.Fatal("the state file was changed")
			}
		})
	}
}

// TestLock: a second owner in this process is refused; the lock of a
// killed process is released by the kernel.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	f, _, err := localstate.Open(dir, "agent/bot")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := localstate.Open(dir, "agent/bot"); !errors.Is(err, localstate.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	_ = f.Close()
	// A child process (this test binary) takes the lock and is killed.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolder$")
	cmd.Env = append(os.Environ(), "LOCALSTATE_HOLD="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "locked" {
		t.Fatalf("holder: %q %v", buf, err)
	}
	if _, _, err := localstate.Open(dir, "agent/bot"); !errors.Is(err, localstate.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("while the child holds it: %v", err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	g, _, err := localstate.Open(dir, "agent/bot")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	_ = g.Close()
}

// TestLockHolder is the child of TestLock.
func TestLockHolder(t *testing.T) {
	dir := os.Getenv("LOCALSTATE_HOLD")
	if dir == "" {
		t.Skip("the child of TestLock")
	}
	if _, _, err := localstate.Open(dir, "agent/bot"); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked")
	time.Sleep(time.Minute)
}
