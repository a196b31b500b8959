package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

const crashChildEnv = "VP_SQLITE_CRASH_CHILD"

// TestAcknowledgedWritesSurviveKill9 runs a writer in a child process,
// SIGKILLs it mid-stream and checks that every write it acknowledged is
// there when the database is reopened — in both durable modes (they
// differ on a power cut, not on a crash of the process).
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path, os.Getenv(crashModeEnv))
		return
	}
	for _, mode := range []string{"", "NORMAL"} { // "": the default, FULL
		t.Run("synchronous="+mode, func(t *testing.T) { killMidStream(t, mode) })
	}
}

const crashModeEnv = "VP_SQLITE_CRASH_MODE"

func killMidStream(t *testing.T, mode string) {
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcknowledgedWritesSurviveKill9$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashModeEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			continue // test framework chatter
		}
		acked = n
		if acked >= 150 {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if acked < 150 {
		t.Fatalf("child acknowledged only %d writes before dying", acked)
	}
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i <= acked; i++ {
		if _, err := s.Get(context.Background(), store.Key{PK: "T#a#CRASH", SK: fmt.Sprintf("%06d", i)}); err != nil {
			t.Fatalf("acknowledged write %d of %d lost after kill -9: %v", i, acked, err)
		}
	}
}

func crashChild(path, mode string) {
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: path, Synchronous: mode})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		// A transaction per write, as the domain does; printed only once acknowledged.
		err := s.Write(context.Background(),
			store.Put(store.Item{Key: store.Key{PK: "T#a#CRASH", SK: fmt.Sprintf("%06d", i)}, Data: []byte("payload")}, store.IfNotExists),
			store.Put(store.Item{Key: store.Key{PK: "T#a#CRASHLOG", SK: fmt.Sprintf("%06d", i)}, Data: []byte(time.Now().String())}, store.Always))
		if err != nil {
			fmt.Println("write:", err)
			os.Exit(2)
		}
		fmt.Println(i)
	}
}
