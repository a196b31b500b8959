// Package recurring is the recurring tasks capability: templates on a cron
// schedule, and the scheduler job that fires each due slot once, building
// its task with the tasks capability (task.Service.Build) in the same
// transaction as the fired-slot marker and the template advance.
package recurring

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // time zones validate the same on every host (Lambda has no zoneinfo)

	"github.com/robfig/cron/v3"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
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
	// Tasks builds the tasks templates fire, with the tasks capability's
	// rules, and indexes them.
	Tasks *task.Service
}

// Service is the recurring tasks capability.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	log     *slog.Logger
	tasks   *task.Service
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger, tasks: o.Tasks}
}

// Recurring task keys.
//
// The due index is the one tenant-less partition of tenant data: the
// scheduler is a server-side job that must find due templates of every
// tenant with one range query, so gsi2 holds every active template under
// the global partition RECURRING_DUE, sorted by next fire time, with the
// tenant inside the sort key. It is sparse: a paused template (or one whose
// schedule never fires again) has no entry. Nothing a tenant's request
// reaches reads it; each fired task is written under its own tenant's keys.

// Table declares the templates.
var Table = table.Declare(table.Schema[vp.RecurringTask]{
	Entity:  "recurring task template",
	Primary: table.Key{PK: "RECUR#{recId}", SK: "RECUR", Pattern: "recurring template by id"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "RECURS", SK: "{recId}", Pattern: "recurring templates of the tenant"},
		{Index: store.GSI2, PK: "RECURRING_DUE", SK: "{nextRunAt 13 digits}#{tenant}#{recId}", Global: true,
			Pattern: "due recurring templates, all tenants",
			Note:    "**server-side only** (the scheduler); sparse while paused; fired tasks use their tenant's keys"},
	},
	Fields: func(r vp.RecurringTask) table.Values {
		due := ""
		if !r.Paused && r.NextRunAt > 0 {
			due = table.Millis(r.NextRunAt)
		}
		return table.Values{"recId": r.ID, "nextRunAt 13 digits": due}
	},
})

// firedSlot marks one (template, scheduled time) as fired. It is written
// in the same transaction as the task, with IfNotExists, so a slot creates
// at most one task however many schedulers run.
type firedSlot struct {
	RecurringTaskID string `json:"recurringTaskId"`
	Slot            int64  `json:"slot"`
	TaskID          string `json:"taskId"`
}

// Fired declares the fired-slot markers.
var Fired = table.Declare(table.Schema[firedSlot]{
	Entity: "fired recurring slot",
	Primary: table.Key{PK: "RECFIRE#{recId}#{slot 13 digits}", SK: "FIRE", Pattern: "fired recurring slot",
		Note: "TTL 30 days; IfNotExists in the transaction that creates the task and advances the template"},
	Fields: func(f firedSlot) table.Values {
		return table.Values{"recId": f.RecurringTaskID, "slot 13 digits": table.Millis(f.Slot)}
	},
})

// Tables are the key declarations of this package, for KEYS.md.
func Tables() []table.Doc { return []table.Doc{Table.Doc(), Fired.Doc()} }

func recurringKey(tenant, id string) store.Key { return Table.KeyOf(tenant, table.Values{"recId": id}) }

func (s *Service) get(ctx context.Context, op, tenant, id string) (vp.RecurringTask, store.Item, error) {
	return Table.Get(ctx, s.st, op, "recurringTaskId", id, recurringKey(tenant, id))
}

func put(op, tenant string, r vp.RecurringTask, cond store.Cond) (store.Op, error) {
	it, err := Table.Item(op, tenant, r)
	return store.Put(it, cond), err
}

// recurringFiredTTL is how long a fired-slot marker lives. It only has to
// outlive concurrent and retried runs of the same slot (seconds); once the
// template has advanced no run computes that slot again.
const recurringFiredTTL = 30 * 24 * time.Hour

// Limits and defaults of recurring tasks.
const (
	MaxCronBytes        = 128
	MaxTimezoneBytes    = 64
	DefaultTimezone     = "UTC"
	cronExample         = `"0 9 * * 1-5" (09:00 on weekdays) or "*/30 * * * *" (every 30 minutes)`
	maxRecurringRetries = 8
	// maxFirePerRun bounds one FireDue run; the rest wait for the next tick.
	maxFirePerRun = 5000
	// catchUpWindow bounds the search for the most recent missed slot after
	// a very long downtime.
	catchUpWindow = 400 * 24 * time.Hour
)

// cronParser accepts exactly the standard 5 fields (minute hour
// day-of-month month day-of-week), with names (MON, JAN), ranges, lists and
// steps, and no @descriptors or seconds.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Limits bound a recurring task's fields, declared once for
// create_recurring_task and update_recurring_task: the texts of the task it
// creates, and its schedule. The assignee is bounded by vp.CheckName.
type Limits struct{ Title, Description, Project, CronExpression, Timezone vp.Limit }

func recurringLimits() Limits {
	t := task.CreateTaskInput{}.Limits()
	return Limits{
		Title: t.Title, Description: t.Description, Project: t.Project,
		CronExpression: vp.MaxBytes("cronExpression", MaxCronBytes),
		Timezone:       vp.MaxBytes("timezone", MaxTimezoneBytes),
	}
}

// Limits are create_recurring_task's limits.
func (CreateRecurringInput) Limits() Limits { return recurringLimits() }

// Limits are update_recurring_task's limits.
func (UpdateRecurringInput) Limits() Limits { return recurringLimits() }

// parseCron validates a cron expression and returns its schedule.
func parseCron(op, expr string) (sched cron.Schedule, err error) {
	lim := recurringLimits().CronExpression
	field := lim.Field
	if err := lim.Text(op, expr, true); err != nil {
		return nil, err
	}
	upper := strings.ToUpper(strings.TrimSpace(expr))
	switch {
	case strings.HasPrefix(upper, "TZ=") || strings.HasPrefix(upper, "CRON_TZ="):
		return nil, vp.Errorf(op, vp.KindInvalid, field, "%q carries a time zone; put it in the timezone field (e.g. \"Europe/Paris\") and keep the 5 fields here, e.g. %s", expr, cronExample)
	case strings.HasPrefix(upper, "@"):
		return nil, vp.Errorf(op, vp.KindInvalid, field, "%q: descriptors such as @daily are not accepted; write the 5 fields minute hour day-of-month month day-of-week, e.g. %s", expr, cronExample)
	}
	if n := len(strings.Fields(expr)); n != 5 {
		return nil, vp.Errorf(op, vp.KindInvalid, field, "%q has %d fields; a cron expression has 5: minute hour day-of-month month day-of-week, e.g. %s", expr, n, cronExample)
	}
	defer func() {
		if r := recover(); r != nil { // the parser must never take the server down
			sched, err = nil, vp.Errorf(op, vp.KindInvalid, field, "%q is not a valid cron expression; use the 5 fields minute hour day-of-month month day-of-week, e.g. %s", expr, cronExample)
		}
	}()
	sched, perr := cronParser.Parse(expr)
	if perr != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, field, "%q is not a valid cron expression (%v); use the 5 fields minute hour day-of-month month day-of-week, e.g. %s", expr, perr, cronExample)
	}
	return sched, nil
}

// loadZone validates an IANA time zone name; empty means UTC.
func loadZone(op, tz string) (*time.Location, string, error) {
	lim := recurringLimits().Timezone
	field := lim.Field
	if tz == "" {
		return time.UTC, DefaultTimezone, nil
	}
	if err := lim.Text(op, tz, false); err != nil {
		return nil, "", err
	}
	if tz == "Local" {
		return nil, "", vp.E(op, vp.KindInvalid, field, `"Local" depends on the server; name an IANA time zone such as "Europe/Paris", "America/New_York" or "UTC"`)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, "", vp.Errorf(op, vp.KindInvalid, field, "%q is not an IANA time zone; use a name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"", tz)
	}
	return loc, tz, nil
}

// schedule compiles a template's cron expression and time zone and returns
// its next fire time strictly after now (zero when it never fires again).
func schedule(op, expr, tz string, now time.Time) (cron.Schedule, *time.Location, string, time.Time, error) {
	sched, err := parseCron(op, expr)
	if err != nil {
		return nil, nil, "", time.Time{}, err
	}
	loc, tz, err := loadZone(op, tz)
	if err != nil {
		return nil, nil, "", time.Time{}, err
	}
	return sched, loc, tz, sched.Next(now.In(loc)), nil
}

func checkRecurringPriority(op, v string) error {
	if slices.Contains(vp.Priorities, v) {
		return nil
	}
	return vp.Errorf(op, vp.KindInvalid, "priority", "%q is not a priority; use one of %s", v, strings.Join(vp.Priorities, ", "))
}

// CreateRecurringInput is a new recurring task template.
type CreateRecurringInput struct {
	Title          string
	Description    string
	AssignedTo     string
	Priority       string
	CronExpression string
	Timezone       string
	Project        string
	CreatedBy      string
}

// CreateRecurringTask stores a template and schedules its first run.
func (s *Service) CreateRecurringTask(ctx context.Context, p vp.Principal, in CreateRecurringInput) (vp.RecurringTask, error) {
	const op = "create_recurring_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	lim := in.Limits()
	if err := lim.Title.Text(op, in.Title, true); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := lim.Description.Text(op, in.Description, false); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := vp.CheckName(op, "assignedTo", in.AssignedTo, true); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := checkRecurringPriority(op, in.Priority); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := lim.Project.Text(op, in.Project, false); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return vp.RecurringTask{}, err
	}
	now := s.now()
	_, _, tz, next, err := schedule(op, in.CronExpression, in.Timezone, now)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	if next.IsZero() {
		return vp.RecurringTask{}, vp.Errorf(op, vp.KindInvalid, "cronExpression", "%q never fires (no matching date in the next 5 years); e.g. %s", in.CronExpression, cronExample)
	}
	creator, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	r := vp.RecurringTask{
		ID: s.ids.New("rec"), CreationTime: now.UnixMilli(), Title: in.Title, Description: in.Description,
		AssignedTo: vp.NormalizeOrchestrator(in.AssignedTo), Priority: in.Priority, CronExpression: strings.TrimSpace(in.CronExpression),
		Timezone: tz, Project: in.Project, CreatedBy: creator, NextRunAt: next.UnixMilli(), UpdatedAt: now.UnixMilli(),
	}
	if err := s.checkRecurringInstance(op, tenant, r, now.UnixMilli()); err != nil {
		return vp.RecurringTask{}, err
	}
	w, err := put(op, tenant, r, store.IfNotExists)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	if err := s.st.Write(ctx, w); err != nil {
		return vp.RecurringTask{}, records.Err(op, err)
	}
	return r, nil
}

// GetRecurringTask returns one template of the tenant.
func (s *Service) GetRecurringTask(ctx context.Context, p vp.Principal, id string) (vp.RecurringTask, error) {
	const op = "get_recurring_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	if err := vp.CheckName(op, "recurringTaskId", id, true); err != nil {
		return vp.RecurringTask{}, err
	}
	r, _, err := s.get(ctx, op, tenant, id)
	return r, err
}

// ListRecurringTasks lists the tenant's templates, newest first.
func (s *Service) ListRecurringTasks(ctx context.Context, p vp.Principal, params listing.Params) (listing.Page[any], error) {
	const op = "list_recurring_tasks"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op, Params: params,
		Query:    store.Query{Index: store.GSI1, PK: Table.PK(tenant, store.GSI1, nil), Reverse: true},
		LiteKeys: []string{"title", "cronExpression", "assignedTo", "nextRunAt"},
	}, func(it store.Item) (vp.RecurringTask, bool, error) {
		r, err := records.Decode[vp.RecurringTask](op, it)
		return r, err == nil, err
	})
}

// changeRecurring applies change to the current template and writes it
// under IfVersion, retrying when another writer (or the scheduler) got
// there first. caller must be the template's creator or assignee, or
// system; creatorOnly narrows that to the creator.
func (s *Service) changeRecurring(ctx context.Context, op string, p vp.Principal, id, caller string, creatorOnly bool, change func(*vp.RecurringTask, time.Time) error) (vp.RecurringTask, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	if err := vp.CheckName(op, "recurringTaskId", id, true); err != nil {
		return vp.RecurringTask{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return vp.RecurringTask{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return vp.RecurringTask{}, err
	}
	var r vp.RecurringTask
	err = table.Conflicts{Op: op, Max: maxRecurringRetries, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "recurringTaskId", "the recurring task is being changed by others; read it again and retry")
	}}.Retry(ctx, func() error {
		var it store.Item
		var err error
		r, it, err = s.get(ctx, op, tenant, id)
		if err != nil {
			return err
		}
		if who != vp.SystemCaller && who != r.CreatedBy && (creatorOnly || who != r.AssignedTo) {
			if creatorOnly {
				return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the creator (%q) or system may do this to recurring task %s; %q may not", r.CreatedBy, r.ID, who)
			}
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the creator (%q), the assignee (%q) or system may change recurring task %s; %q may not", r.CreatedBy, r.AssignedTo, r.ID, who)
		}
		now := s.now()
		if err := change(&r, now); err != nil {
			return err
		}
		r.UpdatedAt = now.UnixMilli()
		w, err := put(op, tenant, r, store.IfVersion(it.Version))
		if err != nil {
			return err
		}
		return s.st.Write(ctx, w)
	})
	if err != nil {
		return vp.RecurringTask{}, err
	}
	return r, nil
}

// UpdateRecurringInput changes a template; nil fields are left as they are.
// A new cronExpression or timezone reschedules the next run from now.
type UpdateRecurringInput struct {
	RecurringTaskID string
	Caller          string
	Title           *string
	Description     *string
	AssignedTo      *string
	Priority        *string
	CronExpression  *string
	Timezone        *string
	Project         *string
}

// UpdateRecurringTask applies an update.
func (s *Service) UpdateRecurringTask(ctx context.Context, p vp.Principal, in UpdateRecurringInput) (vp.RecurringTask, error) {
	const op = "update_recurring_task"
	if in.Title == nil && in.Description == nil && in.AssignedTo == nil && in.Priority == nil && in.CronExpression == nil && in.Timezone == nil && in.Project == nil {
		return vp.RecurringTask{}, vp.E(op, vp.KindInvalid, "recurringTaskId", "nothing to update: pass at least one of title, description, assignedTo, priority, cronExpression, timezone, project")
	}
	lim := in.Limits()
	if in.Title != nil {
		if err := lim.Title.Text(op, *in.Title, true); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.Description != nil {
		if err := lim.Description.Text(op, *in.Description, false); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.AssignedTo != nil {
		if err := vp.CheckName(op, "assignedTo", *in.AssignedTo, true); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.Priority != nil {
		if err := checkRecurringPriority(op, *in.Priority); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.Project != nil {
		if err := lim.Project.Text(op, *in.Project, false); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.CronExpression != nil {
		if _, err := parseCron(op, *in.CronExpression); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	if in.Timezone != nil {
		if _, _, err := loadZone(op, *in.Timezone); err != nil {
			return vp.RecurringTask{}, err
		}
	}
	return s.changeRecurring(ctx, op, p, in.RecurringTaskID, in.Caller, false, func(r *vp.RecurringTask, now time.Time) error {
		expr, tz := r.CronExpression, r.Timezone
		if in.CronExpression != nil {
			expr = strings.TrimSpace(*in.CronExpression)
		}
		if in.Timezone != nil {
			tz = *in.Timezone
		}
		if in.CronExpression != nil || in.Timezone != nil {
			_, _, tzName, next, err := schedule(op, expr, tz, now)
			if err != nil {
				return err
			}
			if next.IsZero() {
				return vp.Errorf(op, vp.KindInvalid, "cronExpression", "%q never fires (no matching date in the next 5 years); e.g. %s", expr, cronExample)
			}
			r.CronExpression, r.Timezone = expr, tzName
			if !r.Paused {
				r.NextRunAt = next.UnixMilli()
			}
		}
		if in.Title != nil {
			r.Title = *in.Title
		}
		if in.Description != nil {
			r.Description = *in.Description
		}
		if in.AssignedTo != nil {
			r.AssignedTo = vp.NormalizeOrchestrator(*in.AssignedTo)
		}
		if in.Priority != nil {
			r.Priority = *in.Priority
		}
		if in.Project != nil {
			r.Project = *in.Project
		}
		return s.checkRecurringInstance(op, p.Tenant, *r, now.UnixMilli())
	})
}

// PauseRecurringTask stops a template from firing (active → paused). Its
// entry leaves the due index.
func (s *Service) PauseRecurringTask(ctx context.Context, p vp.Principal, id, caller string) (vp.RecurringTask, error) {
	const op = "pause_recurring_task"
	return s.changeRecurring(ctx, op, p, id, caller, false, func(r *vp.RecurringTask, _ time.Time) error {
		if r.Paused {
			return vp.Errorf(op, vp.KindConflict, "recurringTaskId", "recurring task %s is paused already; the allowed next state is active (resume_recurring_task)", r.ID)
		}
		r.Paused, r.NextRunAt = true, 0
		return nil
	})
}

// ResumeRecurringTask makes a paused template fire again (paused → active).
// The next run is the first slot after now: slots that passed while it was
// paused are not fired.
func (s *Service) ResumeRecurringTask(ctx context.Context, p vp.Principal, id, caller string) (vp.RecurringTask, error) {
	const op = "resume_recurring_task"
	return s.changeRecurring(ctx, op, p, id, caller, false, func(r *vp.RecurringTask, now time.Time) error {
		if !r.Paused {
			return vp.Errorf(op, vp.KindConflict, "recurringTaskId", "recurring task %s is active already; the allowed next state is paused (pause_recurring_task)", r.ID)
		}
		_, _, _, next, err := schedule(op, r.CronExpression, r.Timezone, now)
		if err != nil {
			return err
		}
		r.Paused, r.NextRunAt = false, next.UnixMilli()
		if next.IsZero() {
			r.NextRunAt = 0
		}
		return nil
	})
}

// DeleteRecurringResult reports a deletion.
type DeleteRecurringResult struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"recurringTaskId"`
	// Tasks the template already created are kept.
	Note string `json:"note"`
}

// DeleteRecurringTask deletes a template (creator or system). The tasks it
// already created are untouched.
func (s *Service) DeleteRecurringTask(ctx context.Context, p vp.Principal, id, caller string) (DeleteRecurringResult, error) {
	const op = "delete_recurring_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteRecurringResult{}, err
	}
	if err := vp.CheckName(op, "recurringTaskId", id, true); err != nil {
		return DeleteRecurringResult{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return DeleteRecurringResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return DeleteRecurringResult{}, err
	}
	err = table.Conflicts{Op: op, Max: maxRecurringRetries, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "recurringTaskId", "the recurring task is being changed by others; retry")
	}}.Retry(ctx, func() error {
		r, it, err := s.get(ctx, op, tenant, id)
		if err != nil {
			return err
		}
		if who != vp.SystemCaller && who != r.CreatedBy {
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the creator (%q) or system may delete recurring task %s; %q may not", r.CreatedBy, r.ID, who)
		}
		return s.st.Write(ctx, store.Delete(it.Key, store.IfVersion(it.Version)))
	})
	if err != nil {
		return DeleteRecurringResult{}, err
	}
	return DeleteRecurringResult{Deleted: true, ID: id, Note: "the tasks it already created are kept"}, nil
}
