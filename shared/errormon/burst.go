package errormon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// Reading to the end. A source answers a chunk at a time (Convex's
// stream_function_logs, CloudWatch's pages); a scan asks again from the
// chunk's cursor until it has caught up with its own start, so that a
// burst is read and grouped in one scan rather than a chunk per scan.
// Each chunk commits its groups with its cursor (apply), so a scan cut
// anywhere resumes from the last committed chunk and counts nothing twice.

// Defaults of the options that bound reading to the end.
const (
	// DefaultScanConcurrency is how many deployments of a tenant are
	// scanned at once.
	DefaultScanConcurrency = 4
	// DefaultCaughtUpWithin: a chunk whose newest entry is this close to
	// the scan's start ends the scan. Asking again would mostly wait on a
	// long poll for what is logged after the start, which the next scan
	// reads anyway.
	DefaultCaughtUpWithin = 2 * time.Second
	// DefaultFollowUpWait bounds a follow-up read's long poll: a source
	// that has more answers at once, so a short wait only costs the scan
	// that has just caught up (with a burst that ended before its start).
	DefaultFollowUpWait = time.Second
)

// reading is one scan's progress through its source's chunks.
type reading struct {
	start    time.Time // the scan's start, by the service's clock
	began    time.Time // the same, by the wall clock (the budget's)
	chunks   int
	last     time.Time     // the wall clock when the last chunk was committed
	longest  time.Duration // the longest chunk, read and commit
	lag      int64
	caughtUp bool
}

func (s *Service) newReading() *reading {
	now := time.Now()
	return &reading{start: s.o.Now(), began: now, last: now}
}

// target is the target of the scan's next read: follow-ups do not wait
// long on a source that has nothing more.
func (s *Service) target(r *reading, t source.Target) source.Target {
	if r.chunks > 0 {
		t.Wait = s.o.FollowUpWait
	}
	return t
}

// next decides after a chunk whether the scan reads another: not when
// the source has nothing more or the chunk reached the scan's start, nor
// when the next chunk would not fit in what is left of the budget. It
// records the lag a scan that stops behind leaves (0 when caught up).
func (s *Service) next(ctx context.Context, r *reading, page source.Page) bool {
	now := time.Now()
	followUp := r.chunks > 0
	r.chunks++
	r.longest = max(r.longest, now.Sub(r.last))
	r.last = now
	reached := !page.Newest.IsZero() && !page.Newest.Before(r.start.Add(-s.o.CaughtUpWithin))
	r.caughtUp = !page.More || reached
	if !page.More && !reached && followUp && len(page.Events) == 0 && left(ctx) < s.o.FollowUpWait {
		// The budget, not the source, ended a follow-up's wait: whether
		// there was more is not known, and the scan is behind by as much.
		r.caughtUp = false
	}
	if r.caughtUp {
		r.lag = 0
		return false
	}
	r.lag = lagSeconds(r.start, page.Newest)
	return ctx.Err() == nil && left(ctx) >= r.longest
}

// left is the time left before ctx's deadline; an hour when it has none.
func left(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return time.Hour
}

// lagSeconds is how far behind start a scan that stopped at newest is,
// at least a second (it is behind); when the source does not say, one.
func lagSeconds(start, newest time.Time) int64 {
	if newest.IsZero() {
		return 1
	}
	return max(int64(start.Sub(newest)/time.Second), 1)
}

// outOfBudget: a read failed because the scan's own budget ran out after
// some chunks were committed. The scan is behind, not failing.
func outOfBudget(ctx context.Context, r *reading) bool {
	return r.chunks > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// behind records a scan that ran out of budget between chunks: its lag,
// and its lease released (the cursor is the last chunk's, committed).
func (s *Service) behind(ctx context.Context, op, tenant string, d Deployment, r *reading) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	lag := max(r.lag, 1)
	_, err := s.updateDeployment(ctx, op, tenant, d.Name, func(cur *Deployment) {
		if cur.Cursor == d.Cursor && cur.LeaseUntil == d.LeaseUntil {
			cur.LagSeconds, cur.LeaseUntil = lag, 0
		}
	})
	return err
}

// logScan shows a scan's progress: long work is visible in the job's log.
func (s *Service) logScan(ctx context.Context, tenant, name string, r *reading, events int) {
	s.log.InfoContext(ctx, "error monitor: scanned a deployment", "tenant", tenant, "deployment", name,
		"events", events, "chunks", r.chunks, "lagSeconds", r.lag, "caughtUp", r.caughtUp, "took", time.Since(r.began).Round(time.Millisecond))
}

// scanConcurrently scans names, at most limit at once; each scan holds
// its own deployment's lease.
func (s *Service) scanConcurrently(ctx context.Context, tenant string, names []string, limit int) (int, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		errs  []error
	)
	sem := make(chan struct{}, max(limit, 1))
	for _, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := s.Scan(ctx, tenant, name)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return total, errors.Join(errs...)
}
