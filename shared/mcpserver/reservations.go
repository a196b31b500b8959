package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type reservePathsIn struct {
	Project            string   `json:"project"`
	Paths              []string `json:"paths" jsonschema:"globs: * ? **"`
	Exclusive          *bool    `json:"exclusive,omitempty" jsonschema:"default true"`
	TTLMinutes         *float64 `json:"ttlMinutes,omitempty" jsonschema:"default 60"`
	Reason             string   `json:"reason,omitempty"`
	TaskID             string   `json:"taskId,omitempty" jsonschema:"released when it ends"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
}

type renewReservationsIn struct {
	Project            string   `json:"project,omitempty"`
	ReservationIDs     []string `json:"reservationIds,omitempty"`
	TTLMinutes         *float64 `json:"ttlMinutes,omitempty" jsonschema:"default: as reserved"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
}

type releasePathsIn struct {
	ReservationIDs     []string `json:"reservationIds,omitempty"`
	Project            string   `json:"project,omitempty"`
	Paths              []string `json:"paths,omitempty" jsonschema:"globs as reserved"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
}

type checkPathsIn struct {
	Project            string   `json:"project"`
	Paths              []string `json:"paths"`
	Exclusive          *bool    `json:"exclusive,omitempty" jsonschema:"default true"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
}

type listReservationsIn struct {
	listing.Params
	Project string `json:"project,omitempty"`
	Holder  string `json:"holder,omitempty"`
	Path    string `json:"path,omitempty" jsonschema:"a glob"`
}

// ReservationTools are the tools of path reservations over c; none when c
// is nil.
func ReservationTools(c *reservation.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addReservationTools(m, c) }}
}

func (s *server) addReservationTools(m *mcp.Server, c *reservation.Service) {
	add(s, m, tool{Name: "reserve_paths", Title: "Reserve paths", Annotations: write, Limits: reservation.ReserveInput{}.Limits(),
		Description: "Reserve files before editing, all or nothing: the reservation or the conflicts. Example: {\"project\":\"web\",\"paths\":[\"src/api/**\"]}"},
		func(ctx context.Context, p vp.Principal, in reservePathsIn) (reservation.ReserveResult, error) {
			return c.Reserve(ctx, p, reservation.ReserveInput{Project: in.Project, Paths: in.Paths, Exclusive: in.Exclusive,
				TTLMinutes: in.TTLMinutes, Reason: in.Reason, TaskID: in.TaskID, Caller: in.CallerOrchestrator})
		})

	add(s, m, tool{Name: "renew_reservations", Title: "Renew reservations", Annotations: write, Limits: reservation.RenewInput{}.Limits(),
		Description: "Extend your active reservations (by id, project, or all). Example: {\"project\":\"web\"}"},
		func(ctx context.Context, p vp.Principal, in renewReservationsIn) (reservation.RenewResult, error) {
			return c.Renew(ctx, p, reservation.RenewInput{Project: in.Project, ReservationIDs: in.ReservationIDs, TTLMinutes: in.TTLMinutes,
				Caller: in.CallerOrchestrator})
		})

	add(s, m, tool{Name: "release_paths", Title: "Release paths", Annotations: destructive, Limits: reservation.ReleaseInput{}.Limits(),
		Description: "End your reservations by id, or drop some of your globs in a project. Example: {\"reservationIds\":[\"rsv_01...\"]}"},
		func(ctx context.Context, p vp.Principal, in releasePathsIn) (reservation.ReleaseResult, error) {
			return c.Release(ctx, p, reservation.ReleaseInput{Project: in.Project, Paths: in.Paths, ReservationIDs: in.ReservationIDs,
				Caller: in.CallerOrchestrator})
		})

	add(s, m, tool{Name: "check_paths", Title: "Check paths", Annotations: readOnly, Limits: reservation.CheckInput{}.Limits(),
		Description: "Others' reservations your paths collide with. Example: {\"project\":\"web\",\"paths\":[\"src/a.go\"]}"},
		func(ctx context.Context, p vp.Principal, in checkPathsIn) (reservation.CheckResult, error) {
			return c.Check(ctx, p, reservation.CheckInput{Project: in.Project, Paths: in.Paths, Exclusive: in.Exclusive, Caller: in.CallerOrchestrator})
		})

	add(s, m, tool{Name: "list_reservations", Title: "List reservations", Annotations: readOnly, Limits: reservation.ListInput{}.Limits(),
		Description: "List active path reservations. Example: {\"project\":\"web\"}"},
		func(ctx context.Context, p vp.Principal, in listReservationsIn) (listing.Page[any], error) {
			return c.List(ctx, p, reservation.ListInput{Project: in.Project, Holder: in.Holder, Path: in.Path, Params: in.Params})
		})
}
