package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PerTenant is a job that runs run for every tenant of d.Tenants, logging
// what each did; one tenant's failure does not stop the others. run is
// nil when the service it calls is not built in this process.
func PerTenant(name string, d Deps, run func(ctx context.Context, tenant string) (int, error)) (Func, error) {
	switch {
	case run == nil:
		return nil, NotWired(name, "its service")
	case d.Tenants == nil:
		return nil, NotWired(name, "Deps.Tenants")
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
