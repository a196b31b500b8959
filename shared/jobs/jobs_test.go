package jobs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
)

func TestRunEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs.RunEvery(ctx, nil, "test", 10*time.Millisecond, func(context.Context, time.Time) error {
			switch runs.Add(1) {
			case 2:
				panic("a panicking run must not stop the job")
			case 3:
				return errors.New("neither must a failing one")
			}
			return nil
		})
	}()
	deadline := time.After(5 * time.Second)
	for runs.Load() < 5 {
		select {
		case <-deadline:
			t.Fatalf("only %d runs in 5s", runs.Load())
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunEvery did not return after cancel")
	}
	n := runs.Load()
	time.Sleep(30 * time.Millisecond)
	if runs.Load() != n {
		t.Fatal("runs continued after RunEvery returned")
	}
}

func TestRunEveryStartsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan time.Time, 1)
	start := time.Now()
	go jobs.RunEvery(ctx, nil, "test", time.Hour, func(_ context.Context, now time.Time) error {
		select {
		case first <- now:
		default:
		}
		return nil
	})
	select {
	case now := <-first:
		if now.Before(start) {
			t.Fatalf("run time %v before start %v", now, start)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first run did not happen at once")
	}
}

type fakeFirer struct {
	calls int
	more  int // how many calls report More
}

func (f *fakeFirer) FireDue(context.Context, time.Time) (recurring.FireReport, error) {
	f.calls++
	return recurring.FireReport{Fired: 1, More: f.calls <= f.more}, nil
}

func TestRecurringTasksDrainsBoundedRuns(t *testing.T) {
	f := &fakeFirer{more: 2}
	if err := jobs.RecurringTasks(f, nil)(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if f.calls != 3 {
		t.Fatalf("FireDue called %d times, want 3 (two bounded runs, then the rest)", f.calls)
	}
	f = &fakeFirer{more: 1000}
	_ = jobs.RecurringTasks(f, nil)(context.Background(), time.Now())
	if f.calls != 10 {
		t.Fatalf("FireDue called %d times, want the bound of 10", f.calls)
	}
}
