package errormon

import (
	"context"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ListInput is list_errors' filters.
type ListInput struct {
	listing.Params
	Deployment string `json:"deployment,omitempty"`
	Status     string `json:"status,omitempty" jsonschema:"pending|new|ongoing|regressed|resolved"`
}

// DeploymentStatus is how a deployment's scans go.
type DeploymentStatus struct {
	Name          string `json:"name"`
	Source        string `json:"source"`
	Active        bool   `json:"active"`
	Status        string `json:"status"` // ok | failing | needs a key | key bound to another URL | not scanned yet | inactive
	LastScanAt    int64  `json:"lastScanAt,omitempty"`
	LastError     string `json:"lastError,omitempty"`
	Failures      int    `json:"failures,omitempty"`
	NextScanAt    int64  `json:"nextScanAt,omitempty"`
	EventsScanned int64  `json:"eventsScanned"`
	// The triage settings, and what the hourly cap of new issues held
	// back (groups and their occurrences, per hour, latest last).
	MinOccurrences int        `json:"minOccurrences"`
	WindowMinutes  int        `json:"windowMinutes"`
	DeployedAt     int64      `json:"deployedAt,omitempty"`
	HeldBack       []HeldBack `json:"heldBack"`
	// LagSeconds: how far behind the last scan stopped when its budget ran
	// out (absent when it caught up).
	LagSeconds int64 `json:"lagSeconds,omitempty"`
}

// List is list_errors' answer: the list contract's envelope, plus the
// status of the deployments listed, so that a source that fails is seen.
type List struct {
	Items       []any              `json:"items"`
	NextCursor  string             `json:"nextCursor,omitempty"`
	Deployments []DeploymentStatus `json:"deployments"`
}

var groupStatuses = []string{StatusPending, StatusNew, StatusOngoing, StatusRegressed, StatusResolved}

// ListErrors lists error groups, last seen first: one deployment's
// (gsi1) or all of them (gsi2).
func (s *Service) ListErrors(ctx context.Context, p vp.Principal, in ListInput) (List, error) {
	const op = "list_errors"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return List{}, err
	}
	dep := strings.TrimSpace(in.Deployment)
	now := s.nowMS()
	var errs vp.Errs
	errs.Add(vp.CheckKeyText(op, "deployment", dep, vp.MaxNameBytes, false))
	errs.Add(vp.CheckEnum(op, "status", in.Status, groupStatuses, false))
	if err := errs.First(); err != nil {
		return List{}, err
	}
	q := Groups.Query(tenant, store.GSI2, nil)
	if dep != "" {
		q = Groups.Query(tenant, store.GSI1, table.Values{"deployment": dep})
	}
	q.Reverse = true
	page, err := listing.List(ctx, s.o.Store, s.o.Cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + dep + "\x00" + in.Status, Params: in.Params, Query: q,
		LiteKeys: []string{"deployment", "type", "message", "count", "lastSeen", "status", "issueNumber", "escalated"},
	}, func(it store.Item) (Group, bool, error) {
		g, err := records.Decode[Group](op, it)
		g.Escalated = g.escalated(now)
		return g, err == nil && (in.Status == "" || g.Status == in.Status), err
	})
	if err != nil {
		return List{}, err
	}
	ds, err := s.deployments(ctx, op, tenant)
	if err != nil {
		return List{}, err
	}
	out := List{Items: page.Items, NextCursor: page.NextCursor, Deployments: []DeploymentStatus{}}
	for _, d := range ds {
		if dep != "" && d.Name != dep {
			continue
		}
		out.Deployments = append(out.Deployments, s.statusOf(tenant, d))
	}
	slices.SortFunc(out.Deployments, func(a, b DeploymentStatus) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// StatusNeedsKey is the status of a Convex deployment without a deploy
// key to read it with: its key name is not a deploy key's (stored by an
// older server), or its tenant has not set that key.
const StatusNeedsKey = "needs a key"

func (s *Service) statusOf(tenant string, d Deployment) DeploymentStatus {
	st := DeploymentStatus{Name: d.Name, Source: d.Source, Active: d.Active, LastScanAt: d.LastScanAt, LastError: withoutRemoteText(d.LastError),
		Failures: d.Failures, NextScanAt: d.NextScanAt, EventsScanned: d.EventsScanned, LagSeconds: d.LagSeconds, DeployedAt: d.DeployedAt,
		HeldBack: append([]HeldBack{}, d.HeldBack...)}
	n, window := d.threshold()
	st.MinOccurrences, st.WindowMinutes = n, int(window/60_000)
	switch {
	case !d.Active:
		st.Status = "inactive"
	case d.Source == SourceConvex && !ValidDeployKeyName(d.DeployKeyEnvVar):
		// Known without a scan; whatever an older scan recorded is stale.
		st.Status, st.LastError = StatusNeedsKey, s.needsKeyText(tenant, d)
	case d.NeedsKey:
		st.Status = StatusNeedsKey
	case d.KeyElsewhere:
		st.Status = StatusKeyElsewhere
	case d.Failures > 0:
		st.Status = "failing"
	case d.LastScanAt == 0:
		st.Status = "not scanned yet"
	default:
		st.Status = "ok"
	}
	return st
}

// ErrorRef names an error group.
type ErrorRef struct {
	ErrorID string `json:"errorId"`
}

// GetError returns an error group with its sample, stack trace and raw
// record.
func (s *Service) GetError(ctx context.Context, p vp.Principal, in ErrorRef) (Group, error) {
	const op = "get_error"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Group{}, err
	}
	if err := vp.CheckName(op, "errorId", in.ErrorID, true); err != nil {
		return Group{}, err
	}
	g, _, err := Groups.Get(ctx, s.o.Store, op, "errorId", in.ErrorID, groupKey(tenant, in.ErrorID))
	if vp.IsKind(err, vp.KindNotFound) {
		err = vp.Errorf(op, vp.KindNotFound, "errorId", "no error %q in this tenant (list_errors lists them)", in.ErrorID)
	}
	g.Escalated = g.escalated(s.nowMS())
	return g, err
}
