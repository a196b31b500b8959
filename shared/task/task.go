// Package task is the tasks capability: tasks that exactly one agent can
// claim, their lifecycle (verbs, work segments, dependencies), lists, bulk
// completion and the payload linter. Tasks are keyword-indexed (Doc). A
// task may belong to a mission; the missions capability is reached through
// the Missions interface, so that joining a mission commits in the task's
// own transaction without this package knowing how missions are stored.
// What follows a change — its index job, and the TopicFinished event a
// mission's auto-completion observes (events.go) — is committed in the
// change's transaction through the outbox and run right after it; this
// package does not know who subscribes.
package task

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
	// Search, when set, keeps tasks findable by keyword.
	Search *search.Writer
}

// Service is the tasks capability.
type Service struct {
	st       store.Store
	cursors  *listing.Signer
	now      func() time.Time
	ids      *vp.IDs
	log      *slog.Logger
	search   *search.Writer
	missions Missions
	events   Events
	watch    func(vp.Task) bool
}

// New returns a Service. Missions are wired afterwards (UseMissions), since
// the missions capability is built on this one.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger, search: o.Search, missions: noMissions{}}
}

// Missions is what tasks need of the missions they belong to. Membership
// is the mission's data: the task asks for the operations that add or
// remove it, and commits them in its own transaction. *mission.Service
// implements it.
type Missions interface {
	// JoinOps returns the operations that add task taskID to mission
	// missionID, refusing a mission that does not exist or is not open.
	JoinOps(ctx context.Context, op, tenant, missionID, taskID string) ([]store.Op, error)
	// LeaveOps returns the operations that remove the task from the mission.
	LeaveOps(tenant, missionID, taskID string) []store.Op
	// Members checks that the mission exists and returns the query of its
	// task links, in creation (step) order, and the task id of a link row.
	Members(ctx context.Context, op, tenant, missionID string) (store.Query, func(store.Item) string, error)
}

// UseMissions wires the missions capability; call it once, before serving.
func (s *Service) UseMissions(m Missions) { s.missions = m }

// noMissions is the Missions of a service nothing wired: a task cannot
// name a mission.
type noMissions struct{}

func (noMissions) JoinOps(_ context.Context, op, _, _, _ string) ([]store.Op, error) {
	return nil, vp.E(op, vp.KindInvalid, "missionId", "missions are not available on this server")
}
func (noMissions) LeaveOps(string, string, string) []store.Op { return nil }
func (noMissions) Members(_ context.Context, op, _, _ string) (store.Query, func(store.Item) string, error) {
	return store.Query{}, nil, vp.E(op, vp.KindInvalid, "missionId", "missions are not available on this server")
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Table declares the task keys. Every index sort key is
// "<updatedAt 13 digits>#<id>", so each partition reads newest-updated
// first. A task's mission membership is a link row in the mission's own
// partition (package mission), read with the mission in one strongly
// consistent query.
var Table = table.Declare(table.Schema[vp.Task]{
	Entity:  "task",
	Primary: table.Key{PK: "TASK#{taskId}", SK: "TASK", Pattern: "task by id", Note: "carries work segments; every change is IfVersion (checkout: one Put)"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "TASGN#{assignee}#{status}", SK: "{updatedAt 13 digits}#{taskId}",
			Pattern: "tasks of an assignee in a status, newest-updated first",
			Note:    "key moves on status/assignee change; several statuses = one partition each, merged by sort key"},
		{Index: store.GSI2, PK: "TSTAT#{status}", SK: "{updatedAt 13 digits}#{taskId}",
			Pattern: "tasks in a status, tenant-wide", Note: "list_tasks without assignee/project/creator (all = 7 partitions merged)"},
		{Index: store.GSI3, PK: "TBY#{createdBy}", SK: "{updatedAt 13 digits}#{taskId}", Pattern: "tasks by creator", Note: "status filtered on read"},
		{Index: store.GSI4, PK: "TPROJ#{project}", SK: "{updatedAt 13 digits}#{taskId}", Pattern: "tasks by project", Note: "sparse; status filtered on read"},
	},
	Fields: func(t vp.Task) table.Values {
		return table.Values{"taskId": t.ID, "assignee": t.AssignedTo, "status": t.Status, "createdBy": t.CreatedBy,
			"project": t.Project, "updatedAt 13 digits": table.Millis(t.UpdatedAt)}
	},
})

// Tables are the key declarations of this package, for KEYS.md.
func Tables() []table.Doc { return []table.Doc{Table.Doc()} }

// Key is the primary key of task id.
func Key(tenant, id string) store.Key { return Table.KeyOf(tenant, table.Values{"taskId": id}) }

func (s *Service) get(ctx context.Context, op, tenant, field, id string) (vp.Task, store.Item, error) {
	return Table.Get(ctx, s.st, op, field, id, Key(tenant, id))
}

// Kind is the search kind of task documents.
const Kind = "task"

// Doc is a task's keyword document: the title (weighted), the description
// and tags; the status, assignee and project are filters.
func Doc(tenant string, t vp.Task) search.Doc {
	text := t.Description
	if len(t.Tags) > 0 {
		text += "\n" + strings.Join(t.Tags, " ")
	}
	return search.Doc{Tenant: search.KindPartition(tenant, Kind), ID: t.ID, Kind: Kind, Namespace: t.Project,
		Type: t.Status, Owner: t.AssignedTo, Title: t.Title, Text: text, CreatedAt: t.CreationTime}
}

// indexing prepares the index job of tasks ids, to commit with their
// change.
func (s *Service) indexing(ctx context.Context, tenant string, ids ...string) (search.Pending, error) {
	return s.search.Prepare(ctx, tenant, Kind, ids...)
}

// Creating returns the ops another capability commits with tasks it wrote
// with Build (a template's steps, a recurring slot's task): their index
// job. Pass the result to Created once the Write commits.
func (s *Service) Creating(ctx context.Context, tenant string, ts ...vp.Task) (search.Pending, error) {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return s.indexing(ctx, tenant, ids...)
}

// Created is what follows the commit of tasks written with Build and
// Creating: their index job runs. New tasks are open, so they publish no
// TopicFinished event.
func (s *Service) Created(ctx context.Context, op, tenant string, ix search.Pending, ts ...vp.Task) {
	s.after(ctx, op, tenant, ix, nil, ts...)
}

const (
	// MaxWorkSegment is the longest single work segment complete_task
	// records; a longer one means the clock ran through an unrecorded break.
	MaxWorkSegment = 8 * time.Hour
	// maxDependencyWalk bounds the tasks a cycle check reads. Each one read
	// is also checked (IfVersion) in the writing transaction, so that two
	// concurrent edges can never close a cycle between them.
	maxDependencyWalk = 90
)

// statusAliases of list_tasks. Cancelled and failed tasks are never open
// or active.
var statusAliases = map[string][]string{
	"open":   {vp.TaskTodo, vp.TaskInProgress, vp.TaskReview, vp.TaskBlocked},
	"active": {vp.TaskTodo, vp.TaskInProgress},
}

// StatusAliases returns the status aliases of the task lists and searches
// (open, active); callers must not modify it.
func StatusAliases() map[string][]string { return statusAliases }

// lifecycle is the task lifecycle: the statuses each status may move to. Verbs
// narrow it (pause_task only from in_progress, and so on); none widens it.
// done, cancelled and failed are final. failed is reached only through
// fail_task (update_task refuses it), from every open status: a task can
// turn out impossible before it is started (todo, paused), while it is
// worked on, in review, or while it waits (blocked).
var lifecycle = map[string][]string{
	vp.TaskTodo:       {vp.TaskInProgress, vp.TaskBlocked, vp.TaskDone, vp.TaskCancelled, vp.TaskFailed},
	vp.TaskInProgress: {vp.TaskTodo, vp.TaskReview, vp.TaskBlocked, vp.TaskDone, vp.TaskCancelled, vp.TaskFailed},
	vp.TaskReview:     {vp.TaskInProgress, vp.TaskBlocked, vp.TaskDone, vp.TaskCancelled, vp.TaskFailed},
	vp.TaskBlocked:    {vp.TaskTodo, vp.TaskInProgress, vp.TaskCancelled, vp.TaskFailed},
	vp.TaskDone:       {},
	vp.TaskCancelled:  {},
	vp.TaskFailed:     {},
}

// final reports a status nothing moves out of.
func final(status string) bool { return len(lifecycle[status]) == 0 }

// Transitions returns a copy of the task lifecycle table.
func Transitions() map[string][]string {
	out := make(map[string][]string, len(lifecycle))
	for k, v := range lifecycle {
		out[k] = slices.Clone(v)
	}
	return out
}

// The auto-generated (cron-spam) predicate shared by list_tasks
// excludeAutoGenerated and bulk_complete_tasks autoGeneratedOnly.
var (
	cronCreatorRE        = regexp.MustCompile(`(?i)^cron-`)
	checkMessagesTitleRE = regexp.MustCompile(`(?i)^/?check-messages$`)
)

func autoGenerated(t vp.Task) bool {
	return cronCreatorRE.MatchString(t.CreatedBy) || checkMessagesTitleRE.MatchString(t.Title)
}

// ---- Field validation, shared by the write paths and validate_task_payload.

// FieldLimits bound the fields a task is created with, declared once: the
// checks below, update_task's and tools/list read them. Names and ids are
// bounded by vp.CheckName.
type FieldLimits struct {
	Title, Description, Project, Tags, DependsOn, EstimatedMinutes vp.Limit
}

func fieldLimits() FieldLimits {
	return FieldLimits{
		Title:            vp.MaxBytes("title", vp.MaxTaskTitleBytes),
		Description:      vp.MaxBytes("description", vp.MaxTaskDescriptionBytes),
		Project:          vp.MaxBytes("project", vp.MaxProjectBytes),
		Tags:             vp.MaxItems("tags", vp.MaxTags, vp.MaxTagBytes),
		DependsOn:        vp.MaxItems("dependsOn", vp.MaxDependsOn, 0),
		EstimatedMinutes: vp.Between("estimatedMinutes", 0, vp.MaxMinutes),
	}
}

// Limits are create_task's limits.
func (CreateTaskInput) Limits() FieldLimits { return fieldLimits() }

// checkFields validates the stored fields of a task being created.
func checkFields(op string, t vp.Task) vp.Errs {
	lim := fieldLimits()
	var errs vp.Errs
	errs.Add(lim.Title.Text(op, t.Title, true))
	errs.Add(lim.Description.Text(op, t.Description, false))
	errs.Add(lim.Project.Text(op, t.Project, false))
	errs.Add(lim.Tags.Tags(op, t.Tags))
	errs.Add(vp.CheckName(op, "assignedTo", t.AssignedTo, true))
	errs.Add(vp.CheckName(op, "assignedToInstance", t.AssignedToInstance, false))
	errs.Add(vp.CheckPriority(op, t.Priority, true))
	errs.Add(lim.DependsOn.IDs(op, t.DependsOn))
	errs.Add(vp.CheckName(op, "missionId", t.MissionID, false))
	errs.Add(lim.EstimatedMinutes.Minutes(op, t.EstimatedMinutes))
	errs.Add(vp.CheckMillis(op, "dueDate", t.DueDate))
	errs.Add(vp.CheckName(op, "createdBy", t.CreatedBy, true))
	return errs
}

// Build completes and validates a task about to be created and returns it
// with its store item. It is the one builder behind create_task, template
// instantiation and recurring tasks: fill Title, AssignedTo, Priority,
// CreatedBy (and any optional field); ID, times and status todo are set
// here when empty. A task with a MissionID also needs its mission link in
// the same Write, and a caller other than this package commits the ops of
// Creating with it and calls Created once the Write commits.
func (s *Service) Build(op, tenant string, t vp.Task, now int64) (vp.Task, store.Item, error) {
	if t.ID == "" {
		t.ID = s.ids.New("tsk")
	}
	if t.Status == "" {
		t.Status = vp.TaskTodo
	}
	t.CreationTime, t.UpdatedAt = now, now
	t.AssignedTo = vp.NormalizeOrchestrator(t.AssignedTo)
	t.CreatedBy = vp.NormalizeOrchestrator(t.CreatedBy)
	t.DependsOn = vp.Dedupe(t.DependsOn)
	if err := checkFields(op, t).First(); err != nil {
		return vp.Task{}, store.Item{}, err
	}
	it, err := Table.Item(op, tenant, t)
	return t, it, err
}

func cloneTask(t vp.Task) vp.Task {
	t.Tags = slices.Clone(t.Tags)
	t.DependsOn = slices.Clone(t.DependsOn)
	t.WorkSegments = slices.Clone(t.WorkSegments)
	t.WaitedOnBy = slices.Clone(t.WaitedOnBy)
	return t
}
