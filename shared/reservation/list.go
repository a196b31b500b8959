package reservation

import (
	"context"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ListInput filters list_reservations: a project (one partition), else a
// holder (an index), else the tenant's; path keeps the reservations with a
// glob overlapping it.
type ListInput struct {
	Project string
	Holder  string
	Path    string
	Params  listing.Params
}

// List lists the active reservations, oldest first.
func (s *Service) List(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	const op = "list_reservations"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	var errs vp.Errs
	errs.Add(checkProject(op, in.Project, false))
	errs.Add(vp.CheckName(op, "holder", in.Holder, false))
	if err := errs.First(); err != nil {
		return listing.Page[any]{}, err
	}
	var path *Glob
	if in.Path != "" {
		if len(in.Path) > MaxGlobBytes {
			return listing.Page[any]{}, vp.Errorf(op, vp.KindTooLarge, "path", "is %d bytes; the limit is %d bytes", len(in.Path), MaxGlobBytes)
		}
		g, err := ParseGlob(op, "path", in.Path)
		if err != nil {
			return listing.Page[any]{}, err
		}
		path = &g
	}
	holder := vp.NormalizeOrchestrator(in.Holder)
	var q store.Query
	switch {
	case in.Project != "":
		q = rows.Query(tenant, store.Primary, table.Values{"project": in.Project})
		q.SKPrefix = "R#"
	case holder != "":
		q = rows.Query(tenant, store.GSI1, table.Values{"holder": holder})
	default:
		q = rows.Query(tenant, store.GSI4, nil)
	}
	now := s.now().UnixMilli()
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + in.Project + "\x00" + holder + "\x00" + in.Path, Params: in.Params, Query: q,
		LiteKeys: []string{"project", "holder", "paths", "exclusive", "expiresAt"},
	}, func(it store.Item) (Reservation, bool, error) {
		r, err := records.Decode[row](op, it)
		if err != nil || r.ExpiresAt <= now || (holder != "" && r.Holder != holder) {
			return r.Reservation, false, err
		}
		if path != nil {
			hit := false
			for _, g := range r.Paths {
				if h, err := ParseGlob(op, "paths", g); err == nil {
					if _, ok := Overlap(*path, h); ok {
						hit = true
						break
					}
				}
			}
			return r.Reservation, hit, nil
		}
		return r.Reservation, true, nil
	})
}
