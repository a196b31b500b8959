package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestReindexCoordJob: messages and tasks written before the store had a
// search index are found once the job has run, in every tenant it is given,
// and only once per index.
func TestReindexCoordJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	beforeTasks := task.New(task.Options{Store: st})
	messages := message.New(message.Options{Store: st, Directory: profile.New(profile.Options{Store: st})})
	tenants := []string{"acme", "beta"}
	const n = 45
	for _, tenant := range tenants {
		p := vp.Principal{Tenant: tenant, Orchestrators: []string{"alice"}}
		for i := range n {
			if _, err := beforeTasks.CreateTask(ctx, p, task.CreateTaskInput{Title: fmt.Sprintf("%s ibis task %d", tenant, i), AssignedTo: "alice", Priority: "low"}); err != nil {
				t.Fatal(err)
			}
			if _, err := messages.Send(ctx, p, message.SendInput{Channel: "bob", Content: fmt.Sprintf("%s ibis message %d", tenant, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	svc := keyword.New(keyword.Options{Store: st, Index: idx})
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if err := jobs.ReindexCoord(ctx, svc, tenants, log); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range tenants {
		p := vp.Principal{Tenant: tenant, Orchestrators: []string{"alice"}}
		tasks, err := svc.SearchTasks(ctx, p, keyword.SearchTasksInput{Query: "ibis", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := svc.SearchMessages(ctx, p, keyword.SearchMessagesInput{Query: "ibis", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if tasks.Count != n || msgs.Count != n {
			t.Fatalf("%s: %d tasks and %d messages found, want %d each", tenant, tasks.Count, msgs.Count, n)
		}
		for _, h := range tasks.Items {
			if !strings.HasPrefix(h.Title, tenant+" ") {
				t.Fatalf("%s found %q", tenant, h.Title)
			}
		}
	}
	if got := strings.Count(logs.String(), "keyword-search backfill done"); got != 2 {
		t.Fatalf("%d backfills logged, want 2: %s", got, logs.String())
	}
	// A second run (even from another process) finds the markers.
	logs.Reset()
	if err := jobs.ReindexCoord(ctx, keyword.New(keyword.Options{Store: st, Index: idx}), tenants, log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "backfill done") {
		t.Fatalf("second run backfilled again: %s", logs.String())
	}
}

type failingIndexer struct{ fail string }

func (f failingIndexer) EnsureIndexed(_ context.Context, tenant string) (keyword.ReindexReport, error) {
	if tenant == f.fail {
		return keyword.ReindexReport{}, errors.New("index unreachable")
	}
	return keyword.ReindexReport{Tenant: tenant, Tasks: 1}, nil
}

// A tenant that fails does not stop the others; the error says which.
func TestReindexCoordJobFailure(t *testing.T) {
	var logs bytes.Buffer
	err := jobs.ReindexCoord(context.Background(), failingIndexer{fail: "beta"}, []string{"acme", "beta", "gamma"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(logs.String(), "tenant=acme") || !strings.Contains(logs.String(), "tenant=gamma") || !strings.Contains(logs.String(), "failed") {
		t.Fatalf("logs: %s", logs.String())
	}
}

// recordingIndexer records the tenants it is asked to index.
type recordingIndexer struct{ got []string }

func (r *recordingIndexer) EnsureIndexed(_ context.Context, tenant string) (keyword.ReindexReport, error) {
	r.got = append(r.got, tenant)
	return keyword.ReindexReport{Tenant: tenant, AlreadyIndexed: true}, nil
}

// TestSearchBackfill: each run asks for the tenants again and ensures every
// one it is given, in order; a listing that fails is the run's error.
func TestSearchBackfill(t *testing.T) {
	ctx := context.Background()
	lists := [][]string{{"default", "acme"}, {"default", "acme", "beta"}}
	calls := 0
	lister := func(context.Context) ([]string, error) {
		calls++
		if calls > len(lists) {
			return nil, errors.New("table unreachable")
		}
		return lists[calls-1], nil
	}
	ix := &recordingIndexer{}
	run := jobs.SearchBackfill(ix, lister, nil)
	for range lists {
		if err := run(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"default", "acme", "default", "acme", "beta"}; !slices.Equal(ix.got, want) {
		t.Fatalf("ensured %v, want %v", ix.got, want)
	}
	if err := run(ctx, time.Now()); err == nil || !strings.Contains(err.Error(), "listing the tenants") || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("failed listing: %v", err)
	}
	if len(ix.got) != 5 {
		t.Fatalf("a failed listing ensured %v", ix.got[5:])
	}
}
