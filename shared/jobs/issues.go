package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IssueJobs is what the GitHub jobs run, tenant by tenant; *issue.Service
// implements it.
type IssueJobs interface {
	MonitorPRs(ctx context.Context, tenant string) (int, error)
	SnapshotAll(ctx context.Context, tenant string) (int, error)
}

// perTenant runs run for every tenant of d.Tenants, logging what each
// did; one tenant's failure does not stop the others.
func perTenant(name string, d Deps, run func(IssueJobs, context.Context, string) (int, error)) (Func, error) {
	switch {
	case d.Issues == nil:
		return nil, notWired(name, "Issues")
	case d.Tenants == nil:
		return nil, notWired(name, "Tenants")
	}
	return func(ctx context.Context, _ time.Time) error {
		ts, err := d.Tenants(ctx)
		if err != nil {
			return fmt.Errorf("%s: listing the tenants: %w", name, err)
		}
		var errs []error
		for _, t := range ts {
			n, err := run(d.Issues, ctx, t)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: tenant %s: %w", name, t, err))
			}
			if d.Logger != nil && (n > 0 || err != nil) {
				d.Logger.InfoContext(ctx, "job", "job", name, "tenant", t, "count", n, "err", err)
			}
		}
		return errors.Join(errs...)
	}, nil
}
