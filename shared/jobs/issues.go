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

// ErrorScanner is what the error monitor runs, tenant by tenant;
// *errormon.Service implements it.
type ErrorScanner interface {
	ScanAll(ctx context.Context, tenant string) (int, error)
}

// perTenant runs run for every tenant of d.Tenants, logging what each
// did; one tenant's failure does not stop the others. missing names the
// Deps field run needs when it is not wired ("").
func perTenant(name string, d Deps, missing string, run func(context.Context, string) (int, error)) (Func, error) {
	switch {
	case missing != "":
		return nil, notWired(name, missing)
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
			n, err := run(ctx, t)
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

// issueJob is perTenant for a method of d.Issues.
func issueJob(name string, d Deps, run func(IssueJobs, context.Context, string) (int, error)) (Func, error) {
	if d.Issues == nil {
		return perTenant(name, d, "Issues", nil)
	}
	return perTenant(name, d, "", func(ctx context.Context, t string) (int, error) { return run(d.Issues, ctx, t) })
}
