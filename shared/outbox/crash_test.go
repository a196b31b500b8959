package outbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The child process's side of the crash tests, selected by these variables.
const (
	crashModeEnv = "VP_OUTBOX_CRASH_MODE" // "commit" or "call"
	crashDBEnv   = "VP_OUTBOX_CRASH_DB"
	crashURLEnv  = "VP_OUTBOX_CRASH_URL"
)

// crashLease is short so that the restarted process does not wait long for
// the dead child's lease.
const crashLease = 500 * time.Millisecond

// fakeExternal stands for GitHub or a push service: it records every call
// and applies an effect once per Idempotency-Key, as such APIs do.
type fakeExternal struct {
	mu      sync.Mutex
	calls   map[string]int // by idempotency key
	applied []string       // the effects, in order
}

func newFakeExternal(t *testing.T) (*fakeExternal, string) {
	f := &fakeExternal{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get("Idempotency-Key")
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls[key]++
		if key == "" {
			http.Error(w, "Idempotency-Key required", http.StatusBadRequest)
			return
		}
		if f.calls[key] == 1 {
			f.applied = append(f.applied, string(body))
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeExternal) snapshot() (calls int, applied []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.calls {
		calls += n
	}
	return calls, append([]string(nil), f.applied...)
}

// commentHandler is a handler honouring the contract: the job's id is the
// idempotency key of the external call.
func commentHandler(url string) outbox.Handler {
	return func(ctx context.Context, j outbox.Job) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(j.Payload)))
		if err != nil {
			return outbox.Permanent(err)
		}
		req.Header.Set("Idempotency-Key", j.ID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("external: %s", resp.Status)
		}
		return nil
	}
}

func openCrashStore(path string) (*sqlite.Store, error) {
	return sqlite.Open(context.Background(), sqlite.Options{Path: path})
}

// TestFakeExternalExactlyOnceAcrossKill9 SIGKILLs a child process (a) after
// it committed a change with its job but before the side effect, and (b)
// after the external call but before the job's removal committed. After a
// restart the effect is applied exactly once in both cases.
func TestFakeExternalExactlyOnceAcrossKill9(t *testing.T) {
	if mode := os.Getenv(crashModeEnv); mode != "" {
		crashChild(mode)
		return
	}
	tests := []struct {
		mode, signal string
		wantCalls    int // calls the fake saw: the effect attempted once or twice
	}{
		{"commit", "COMMITTED", 1}, // killed between commit and side effect
		{"call", "CALLED", 2},      // killed between side effect and deletion
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			fake, url := newFakeExternal(t)
			db := filepath.Join(t.TempDir(), "vp.db")
			id := runChildUntil(t, tt.mode, db, url, tt.signal)
			if calls, _ := fake.snapshot(); calls != tt.wantCalls-1 {
				t.Fatalf("before restart the fake saw %d calls, want %d", calls, tt.wantCalls-1)
			}

			// Restart: a new process would do exactly this.
			st, err := openCrashStore(db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Get(context.Background(), store.Key{PK: "T#acme#TASK#t1", SK: "TASK"}); err != nil {
				t.Fatalf("the committed change is gone: %v", err)
			}
			ob, err := outbox.New(outbox.Options{Store: st, Lease: crashLease})
			if err != nil {
				t.Fatal(err)
			}
			_ = ob.Handle("github.comment", commentHandler(url))
			// Drain until the job is gone: in "call" the dead child's lease
			// must run out first.
			deadline := time.Now().Add(20 * time.Second)
			for {
				if _, err := ob.Drain(context.Background()); err != nil {
					t.Fatal(err)
				}
				if _, err := ob.Get(context.Background(), "acme", id); vp.IsKind(err, vp.KindNotFound) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the job never completed after the restart")
				}
				time.Sleep(50 * time.Millisecond)
			}
			// Nothing is left to run, now or later.
			time.Sleep(2 * crashLease)
			if n, _ := ob.Drain(context.Background()); n != 0 {
				t.Fatalf("drained %d more jobs", n)
			}
			calls, applied := fake.snapshot()
			if calls != tt.wantCalls || len(applied) != 1 || applied[0] != `{"comment":"T6 done"}` {
				t.Fatalf("the fake saw %d calls and applied %q; want %d calls, one effect", calls, applied, tt.wantCalls)
			}
		})
	}
}

// runChildUntil starts the child in mode and SIGKILLs it when it prints
// signal; it returns the job id the child printed with it.
func runChildUntil(t *testing.T, mode, db, url, signal string) (id string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeExternalExactlyOnceAcrossKill9$")
	cmd.Env = append(os.Environ(), crashModeEnv+"="+mode, crashDBEnv+"="+db, crashURLEnv+"="+url)
	testproc.DieWithParent(cmd)
	var stderr testproc.Output
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), signal+" "); ok {
				got <- id
				return
			}
		}
		close(got)
	}()
	select {
	case jid, ok := <-got:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("child exited before %s; stderr:\n%s", signal, stderr.String())
		}
		id = jid
	case <-time.After(30 * time.Second):
		t.Fatalf("child never said %s; stderr:\n%s", signal, stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	return id
}

// crashChild commits a change and its job, then either hangs ("commit") or
// runs the job with a handler that hangs right after the external call
// ("call"); the parent kills it there.
func crashChild(mode string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := openCrashStore(os.Getenv(crashDBEnv))
	if err != nil {
		fail(err)
	}
	ob, err := outbox.New(outbox.Options{Store: st, Lease: crashLease})
	if err != nil {
		fail(err)
	}
	external := commentHandler(os.Getenv(crashURLEnv))
	_ = ob.Handle("github.comment", func(ctx context.Context, j outbox.Job) error {
		if err := external(ctx, j); err != nil {
			return err
		}
		fmt.Println("CALLED", j.ID) // the parent kills us before the job's removal
		time.Sleep(time.Hour)
		return nil
	})
	p, err := ob.Enqueue(ctx, "acme", "github.comment", "issue-42/T6", []byte(`{"comment":"T6 done"}`))
	if err != nil {
		fail(err)
	}
	task := store.Put(store.Item{Key: store.Key{PK: "T#acme#TASK#t1", SK: "TASK"}, Data: []byte(`{"status":"done"}`)}, store.IfNotExists)
	if err := st.Write(ctx, append([]store.Op{task}, p.Ops()...)...); err != nil {
		fail(err)
	}
	if mode == "commit" {
		fmt.Println("COMMITTED", p.ID())
		time.Sleep(time.Hour)
	}
	ob.Flush(ctx, p)
	fail(fmt.Errorf("the handler returned"))
}
