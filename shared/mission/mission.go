// Package mission is the missions capability: missions (a group of tasks
// with a pilot, moved through stages), their templates, and the membership
// of tasks. A task joins a mission in the task's own transaction: package
// task asks this one for the operations (Service implements
// task.Missions), and this one builds template tasks with the task
// package's builder.
package mission

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
	// Tasks builds and indexes the tasks of instantiated templates.
	Tasks *task.Service
}

// Service is the missions capability.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	log     *slog.Logger
	tasks   *task.Service
}

// New returns a Service. Wire it into the tasks it reads with
// Options.Tasks.UseMissions, and subscribe OnTaskFinished to
// task.TopicFinished on the outbox the tasks publish to (UseEvents) for
// auto-completion.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger, tasks: o.Tasks}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Mission keys. A mission's partition holds the mission ("MISSION") and
// one link row per task ("TASK#<taskId>"), so the mission and its
// membership are one strongly consistent query. Index sort keys are
// "<updatedAt 13 digits>#<id>".

// Table declares the mission item.
var Table = table.Declare(table.Schema[vp.Mission]{
	Entity: "mission",
	Primary: table.Key{PK: "MISSION#{missionId}", SK: "MISSION", Pattern: "mission by id, with its task links",
		Note: "a task joins with a rewrite of the mission item, so auto-completion and joins exclude each other"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "MPROJ#{project}", SK: "{updatedAt 13 digits}#{missionId}", Pattern: "missions by project"},
		{Index: store.GSI2, PK: "MPILOT#{pilot}", SK: "{updatedAt 13 digits}#{missionId}", Pattern: "missions by pilot"},
		{Index: store.GSI3, PK: "MSTAT#{status}", SK: "{updatedAt 13 digits}#{missionId}", Pattern: "missions by status", Note: "one partition per status, merged"},
	},
	Fields: func(m vp.Mission) table.Values {
		return table.Values{"missionId": m.ID, "project": m.Project, "pilot": m.Pilot, "status": m.Status,
			"updatedAt 13 digits": table.Millis(m.UpdatedAt)}
	},
})

// link is a task's membership row in its mission's partition.
type link struct {
	MissionID, TaskID string
}

const linkPrefix = "TASK#"

// Links declares the task links, in the mission's partition.
var Links = table.Declare(table.Schema[link]{
	Entity:  "mission task link",
	Primary: table.Key{PK: "MISSION#{missionId}", SK: linkPrefix + "{taskId}", Pattern: "a mission's task links, in step order", Note: "same partition as the mission; written in the task's transaction"},
	Fields:  func(l link) table.Values { return table.Values{"missionId": l.MissionID, "taskId": l.TaskID} },
	Encode:  func(l link) ([]byte, error) { return []byte(`{"taskId":"` + l.TaskID + `"}`), nil },
})

// Tables are the key declarations of this package, for KEYS.md.
func Tables() []table.Doc { return []table.Doc{Table.Doc(), Links.Doc(), Templates.Doc()} }

// Key is the primary key of mission id.
func Key(tenant, id string) store.Key { return Table.KeyOf(tenant, table.Values{"missionId": id}) }

func (s *Service) get(ctx context.Context, op, tenant, id string) (vp.Mission, store.Item, error) {
	return Table.Get(ctx, s.st, op, "missionId", id, Key(tenant, id))
}

// put is the write of mission m under cond.
func put(op, tenant string, m vp.Mission, cond store.Cond) (store.Op, error) {
	it, err := Table.Item(op, tenant, m)
	return store.Put(it, cond), err
}

func linkKey(tenant, missionID, taskID string) store.Key {
	return Links.KeyOf(tenant, table.Values{"missionId": missionID, "taskId": taskID})
}

func linkPut(tenant, missionID, taskID string) store.Op {
	it, _ := Links.Item("", tenant, link{MissionID: missionID, TaskID: taskID}) // Encode cannot fail
	return store.Put(it, store.Always)
}

func checkCaller(op string, p vp.Principal, caller string) error {
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return err
	}
	_, err := p.ActAs(op, "callerOrchestrator", caller)
	return err
}

// maxMissionTasks bounds how many tasks a mission view or completion check
// reads.
const maxMissionTasks = 2000

var openStages = []string{vp.MissionBrainstorm, vp.MissionPlan, vp.MissionExecute, vp.MissionValidate}

var statusAliases = map[string][]string{
	"open":   openStages,
	"active": {vp.MissionPlan, vp.MissionExecute},
}

// lifecycle is the mission lifecycle: the pilot moves a mission between
// the open stages in any order (plans get revised); complete and cancelled
// are final. Cancelling is update_mission's, creator only, with a reason.
var lifecycle = map[string][]string{
	vp.MissionBrainstorm: {vp.MissionPlan, vp.MissionExecute, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionPlan:       {vp.MissionBrainstorm, vp.MissionExecute, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionExecute:    {vp.MissionBrainstorm, vp.MissionPlan, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionValidate:   {vp.MissionBrainstorm, vp.MissionPlan, vp.MissionExecute, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionComplete:   {},
	vp.MissionCancelled:  {},
}

// Transitions returns a copy of the mission lifecycle table.
func Transitions() map[string][]string {
	out := make(map[string][]string, len(lifecycle))
	for k, v := range lifecycle {
		out[k] = slices.Clone(v)
	}
	return out
}

func isOpen(status string) bool { return slices.Contains(openStages, status) }

// moveMission applies a status change. Staying in an open stage is a no-op.
func move(op, field string, m *vp.Mission, to string, now int64) error {
	if to == m.Status && isOpen(to) {
		return nil
	}
	next := lifecycle[m.Status]
	if !slices.Contains(next, to) {
		if len(next) == 0 {
			return vp.Errorf(op, vp.KindConflict, field, "mission %s is %s, which is final: it cannot become %s", m.ID, m.Status, to)
		}
		return vp.Errorf(op, vp.KindConflict, field, "mission %s is %s and cannot become %s; from %s it can become %s", m.ID, m.Status, to, m.Status, strings.Join(next, ", "))
	}
	m.Status = to
	if to == vp.MissionComplete {
		m.CompletedAt = &now
	}
	return nil
}

func checkProgress(op string, v *float64) (*int, error) {
	if v == nil {
		return nil, nil
	}
	if math.IsNaN(*v) || *v < 0 || *v > 100 || *v != math.Trunc(*v) {
		return nil, vp.Errorf(op, vp.KindInvalid, "progress", "must be a whole number from 0 to 100 (e.g. 25, 50, 75), got %v", *v)
	}
	n := int(*v)
	return &n, nil
}

func checkAgents(op string, agents []string) error {
	if lim := missionLimits().Agents; len(agents) > lim.Items {
		return vp.Errorf(op, vp.KindTooLarge, lim.Field, "has %d entries; the limit is %d", len(agents), lim.Items)
	}
	for _, a := range agents {
		if err := vp.CheckName(op, "agents", a, true); err != nil {
			return err
		}
	}
	return nil
}

func normalizeAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = vp.NormalizeOrchestrator(n); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
