package issue

import (
	"context"
	"errors"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// MappingInput is add_repo_mapping's arguments.
type MappingInput struct {
	Repo         string `json:"repo"`
	Orchestrator string `json:"orchestrator"`
	Project      string `json:"project"`
	// Active defaults to true; false keeps the mapping but starts no mission.
	Active *bool `json:"active,omitempty"`
}

// AddMapping maps a repository to an orchestrator and project, or
// replaces the mapping of a repository already mapped (its id and
// creation time are kept).
func (s *Service) AddMapping(ctx context.Context, p vp.Principal, in MappingInput) (Mapping, error) {
	const op = "add_repo_mapping"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Mapping{}, err
	}
	repo, err := checkRepo(op, "repo", in.Repo)
	var errs vp.Errs
	errs.Add(err)
	errs.Add(vp.CheckName(op, "orchestrator", in.Orchestrator, true))
	errs.Add(vp.CheckKeyText(op, "project", strings.TrimSpace(in.Project), vp.MaxProjectBytes, true))
	if err := errs.First(); err != nil {
		return Mapping{}, err
	}
	caller, _ := p.ActAs(op, "createdBy", "")
	var out Mapping
	err = table.Retry(ctx, op, "repo", repo, func() error {
		now := s.nowMS()
		m := Mapping{ID: s.ids.New("map"), CreationTime: now, Repo: repo, Orchestrator: vp.NormalizeOrchestrator(in.Orchestrator),
			Project: strings.TrimSpace(in.Project), Active: in.Active == nil || *in.Active, CreatedBy: caller, UpdatedAt: now}
		cond := store.IfNotExists
		cur, it, err := Mappings.Get(ctx, s.st, op, "repo", repo, mappingKey(tenant, repo))
		switch {
		case err == nil:
			m.ID, m.CreationTime, m.LastDeployedSHA, m.LastDeployedAt = cur.ID, cur.CreationTime, cur.LastDeployedSHA, cur.LastDeployedAt
			cond = store.IfVersion(it.Version)
		case !vp.IsKind(err, vp.KindNotFound):
			return err
		}
		item, err := Mappings.Item(op, tenant, m)
		if err != nil {
			return err
		}
		out = m
		return s.st.Write(ctx, store.Put(item, cond))
	})
	return out, err
}

// RepoRef names a repository.
type RepoRef struct {
	Repo string `json:"repo"`
}

// GetMapping returns a repository's mapping.
func (s *Service) GetMapping(ctx context.Context, p vp.Principal, in RepoRef) (Mapping, error) {
	const op = "get_repo_mapping"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Mapping{}, err
	}
	repo, err := checkRepo(op, "repo", in.Repo)
	if err != nil {
		return Mapping{}, err
	}
	m, _, err := s.mapping(ctx, op, tenant, repo)
	return m, err
}

func (s *Service) mapping(ctx context.Context, op, tenant, repo string) (Mapping, store.Item, error) {
	m, it, err := Mappings.Get(ctx, s.st, op, "repo", repo, mappingKey(tenant, repo))
	if vp.IsKind(err, vp.KindNotFound) {
		err = vp.Errorf(op, vp.KindNotFound, "repo", "%s is not mapped in this tenant (add_repo_mapping maps it)", repo)
	}
	return m, it, err
}

// ListMappingsInput is list_repo_mappings' arguments.
type ListMappingsInput struct {
	listing.Params
}

// ListMappings lists the mappings, newest first.
func (s *Service) ListMappings(ctx context.Context, p vp.Principal, in ListMappingsInput) (listing.Page[any], error) {
	const op = "list_repo_mappings"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	q := Mappings.Query(tenant, store.GSI1, nil)
	q.Reverse = true
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op, Params: in.Params, Query: q,
		LiteKeys: []string{"repo", "orchestrator", "project"},
	}, func(it store.Item) (Mapping, bool, error) {
		m, err := records.Decode[Mapping](op, it)
		return m, err == nil, err
	})
}

// RemoveResult says what remove_repo_mapping removed.
type RemoveResult struct {
	Repo    string `json:"repo"`
	Removed bool   `json:"removed"`
}

// RemoveMapping deletes a mapping; its issues stay. Removing a mapping
// that does not exist is not an error (removed: false).
func (s *Service) RemoveMapping(ctx context.Context, p vp.Principal, in RepoRef) (RemoveResult, error) {
	const op = "remove_repo_mapping"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return RemoveResult{}, err
	}
	repo, err := checkRepo(op, "repo", in.Repo)
	if err != nil {
		return RemoveResult{}, err
	}
	err = s.st.Write(ctx, store.Delete(mappingKey(tenant, repo), store.IfExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return RemoveResult{Repo: repo}, nil
	}
	if err != nil {
		return RemoveResult{}, records.Err(op, err)
	}
	return RemoveResult{Repo: repo, Removed: true}, nil
}

// mappingsOfProject returns the mappings of a project.
func (s *Service) mappingsOfProject(ctx context.Context, op, tenant, project string) ([]Mapping, error) {
	rows, err := records.QueryAll(ctx, s.st, Mappings.Query(tenant, store.GSI2, table.Values{"project": project}), 100)
	if err != nil {
		return nil, records.Err(op, err)
	}
	out := make([]Mapping, 0, len(rows))
	for _, it := range rows {
		m, err := records.Decode[Mapping](op, it)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
