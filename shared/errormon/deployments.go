package errormon

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DeploymentInput is add_deployment's arguments.
type DeploymentInput struct {
	Name            string   `json:"name"`
	Source          string   `json:"source,omitempty" jsonschema:"convex (default) or cloudwatch"`
	DeploymentURL   string   `json:"deploymentUrl,omitempty" jsonschema:"convex: https://NAME.convex.cloud"`
	DeployKeyEnvVar string   `json:"deployKeyEnvVar,omitempty" jsonschema:"convex: a stored deploy key's name, VP_DEPLOY_KEY_[A-Z0-9_]{1,64}"`
	LogGroups       []string `json:"logGroups,omitempty" jsonschema:"cloudwatch: log groups the operator allowed you"`
	FilterPattern   string   `json:"filterPattern,omitempty" jsonschema:"cloudwatch: default ERROR"`
	GitHubRepo      string   `json:"githubRepo" jsonschema:"owner/name: where issues are filed"`
	Orchestrator    string   `json:"orchestrator" jsonschema:"who gets the IRP missions"`
	MinOccurrences  int      `json:"minOccurrences,omitempty" jsonschema:"file once an error occurred this often within windowMinutes (default 1)"`
	WindowMinutes   int      `json:"windowMinutes,omitempty" jsonschema:"default 60"`
	DeployedAt      int64    `json:"deployedAt,omitempty" jsonschema:"Unix ms of the last deploy: only later errors reopen a fixed issue"`
}

var repoSlug = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$`)

func (in *DeploymentInput) check(op string, pol *egress.Policy) vp.Errs {
	lim := in.Limits()
	var errs vp.Errs
	in.Name = strings.TrimSpace(in.Name)
	errs.Add(lim.Name.KeyText(op, in.Name, true))
	errs.Add(vp.CheckEnum(op, "source", in.Source, []string{SourceConvex, SourceCloudWatch}, false))
	if in.Source == "" {
		in.Source = SourceConvex
	}
	if !repoSlug.MatchString(in.GitHubRepo) {
		errs.Add(vp.Errorf(op, vp.KindInvalid, "githubRepo", "must be a GitHub repository as owner/name, got %q", in.GitHubRepo))
	}
	in.GitHubRepo = strings.ToLower(in.GitHubRepo)
	errs.Add(vp.CheckName(op, "orchestrator", in.Orchestrator, true))
	switch in.Source {
	case SourceConvex:
		errs.Add(checkDeploymentURL(op, pol, in.DeploymentURL))
		if !ValidDeployKeyName(in.DeployKeyEnvVar) {
			errs.Add(vp.Errorf(op, vp.KindInvalid, "deployKeyEnvVar", "%s (e.g. VP_DEPLOY_KEY_MYAPP; someone who manages the tenant stores the key under that name); got %q",
				DeployKeyRule, clipName(in.DeployKeyEnvVar)))
		}
	case SourceCloudWatch:
		switch {
		case len(in.LogGroups) == 0:
			errs.Add(vp.E(op, vp.KindInvalid, "logGroups", "is required for a cloudwatch source: at least one log group name"))
		case len(in.LogGroups) > lim.LogGroups.Items:
			errs.Add(vp.Errorf(op, vp.KindTooLarge, lim.LogGroups.Field, "has %d groups; the limit is %d", len(in.LogGroups), lim.LogGroups.Items))
		}
		for _, g := range in.LogGroups {
			if !validLogGroup(g) {
				errs.Add(vp.Errorf(op, vp.KindInvalid, "logGroups", "%q is not a log group name", g))
			}
		}
		errs.Add(lim.FilterPattern.Text(op, in.FilterPattern, false))
		if in.FilterPattern == "" {
			in.FilterPattern = "ERROR"
		}
	}
	return errs
}

// AddDeployment starts monitoring a deployment, or updates (and
// reactivates) one of the same name; its cursor and counts are kept.
func (s *Service) AddDeployment(ctx context.Context, p vp.Principal, in DeploymentInput) (Deployment, error) {
	const op = "add_deployment"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Deployment{}, err
	}
	errs := in.check(op, s.o.Egress)
	errs.Add(in.checkTriage(op, s.nowMS()).First())
	if err := errs.First(); err != nil {
		return Deployment{}, err
	}
	if err := s.checkLogGroups(ctx, op, tenant, in.Source, in.LogGroups); err != nil {
		return Deployment{}, err
	}
	caller, _ := p.ActAs(op, "createdBy", "")
	var out Deployment
	err = table.Retry(ctx, op, "name", in.Name, func() error {
		now := s.nowMS()
		d := Deployment{ID: "dep_" + GroupID(in.Name, "")[4:], CreationTime: now, Name: in.Name, CreatedBy: caller}
		cond := store.IfNotExists
		cur, it, err := Deployments.Get(ctx, s.o.Store, op, "name", in.Name, deploymentKey(tenant, in.Name))
		switch {
		case err == nil:
			d, cond = cur, store.IfVersion(it.Version)
		case !vp.IsKind(err, vp.KindNotFound):
			return err
		}
		d.Source, d.DeploymentURL, d.DeployKeyEnvVar = in.Source, in.DeploymentURL, in.DeployKeyEnvVar
		d.LogGroups, d.FilterPattern = slices.Clone(in.LogGroups), in.FilterPattern
		d.GitHubRepo, d.Orchestrator = in.GitHubRepo, vp.NormalizeOrchestrator(in.Orchestrator)
		d.Active, d.UpdatedAt, d.NextScanAt, d.Failures, d.NeedsKey, d.KeyElsewhere = true, now, 0, 0, false, false
		d.MinOccurrences, d.WindowMinutes = in.MinOccurrences, in.WindowMinutes
		if in.DeployedAt > 0 {
			d.DeployedAt = max(d.DeployedAt, in.DeployedAt)
		}
		next, err := Deployments.Item(op, tenant, d)
		if err != nil {
			return err
		}
		out = d
		return s.o.Store.Write(ctx, store.Put(next, cond))
	})
	return out, err
}

// checkLogGroups refuses a CloudWatch deployment that names a log group
// the operator did not allow for the tenant: at add_deployment, and again
// at each scan (the operator may have withdrawn it since).
func (s *Service) checkLogGroups(ctx context.Context, op, tenant, src string, groups []string) error {
	if src != SourceCloudWatch {
		return nil
	}
	var allowed []string
	how := "no log group policy is configured in this server"
	if s.o.LogGroups != nil {
		var err error
		if allowed, err = s.o.LogGroups.Allowed(ctx, tenant); err != nil {
			return err
		}
		how = s.o.LogGroups.HowToAllow(tenant)
	}
	for _, g := range groups {
		if LogGroupAllowed(allowed, g) {
			continue
		}
		shown := "none"
		if len(allowed) > 0 {
			shown = strings.Join(allowed, ", ")
		}
		return vp.Errorf(op, vp.KindForbidden, "logGroups",
			"%q is not allowed for tenant %s: a tenant may name only the log groups the operator allowed for it (allowed: %s); %s", g, tenant, shown, how)
	}
	return nil
}

// DeploymentRef names a deployment.
type DeploymentRef struct {
	Name string `json:"name"`
}

// RemoveDeployment stops monitoring a deployment; its errors stay.
func (s *Service) RemoveDeployment(ctx context.Context, p vp.Principal, in DeploymentRef) (Deployment, error) {
	const op = "remove_deployment"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Deployment{}, err
	}
	if err := in.Limits().KeyText(op, in.Name, true); err != nil {
		return Deployment{}, err
	}
	return s.updateDeployment(ctx, op, tenant, in.Name, func(d *Deployment) { d.Active = false })
}

func (s *Service) updateDeployment(ctx context.Context, op, tenant, name string, change func(*Deployment)) (Deployment, error) {
	var out Deployment
	err := table.Retry(ctx, op, "name", name, func() error {
		d, it, err := Deployments.Get(ctx, s.o.Store, op, "name", name, deploymentKey(tenant, name))
		if vp.IsKind(err, vp.KindNotFound) {
			return vp.Errorf(op, vp.KindNotFound, "name", "no monitored deployment %q in this tenant (add_deployment adds one)", name)
		}
		if err != nil {
			return err
		}
		change(&d)
		d.UpdatedAt = s.nowMS()
		next, err := Deployments.Item(op, tenant, d)
		if err != nil {
			return err
		}
		out = d
		return s.o.Store.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
	return out, err
}

// deployments returns the tenant's deployments, by name.
func (s *Service) deployments(ctx context.Context, op, tenant string) ([]Deployment, error) {
	rows, err := records.QueryAll(ctx, s.o.Store, Deployments.Query(tenant, store.GSI1, nil), 1000)
	if err != nil {
		return nil, records.Err(op, err)
	}
	out := make([]Deployment, 0, len(rows))
	for _, it := range rows {
		d, err := records.Decode[Deployment](op, it)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
