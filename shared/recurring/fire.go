package recurring

// The scheduler job: FireDue creates the task of each due slot exactly once.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// FireReport summarises one FireDue run.
type FireReport struct {
	// Due is how many due index entries were read.
	Due int `json:"due"`
	// Fired is how many tasks this run created; TaskIDs names them.
	Fired   int      `json:"fired"`
	TaskIDs []string `json:"taskIds,omitempty"`
	// Skipped counts entries that were no longer due when read again: fired
	// by a concurrent run, paused, rescheduled or deleted meanwhile.
	Skipped int `json:"skipped"`
	// Missed counts older slots passed over in favour of the most recent one.
	Missed int `json:"missed"`
	// Failed counts templates that could not be fired (see the error).
	Failed int `json:"failed"`
	// More is true when the run stopped at its bound with due entries left.
	More bool `json:"more,omitempty"`
}

// FireDue creates the tasks of every recurring template due at now, across
// all tenants. It is the scheduler job: the embedded server calls it every
// minute in process, AWS from an EventBridge schedule; any number of runs
// may overlap or be retried.
//
// Exactly once per slot: a (template, scheduled time) creates at most one
// task. The task, a fired-slot marker (IfNotExists) and the template with its
// next run advanced (IfVersion) are one transaction; a concurrent or retried
// run loses the transaction, reads the template again, finds it no longer
// due and skips it.
//
// Missed slots: when several slots passed since the template's next run
// (the scheduler was down), FireDue creates ONE task, for the most recent
// missed slot, and moves the next run to the first slot after now. A task
// is a reminder to do the work now, so a backlog of identical tasks would be
// noise; the template's missedSlots counts the slots passed over.
//
// Errors on one template do not stop the others; they are joined in err.
func (s *Service) FireDue(ctx context.Context, now time.Time) (FireReport, error) {
	var rep FireReport
	var errs []error
	q := store.Query{Index: store.GSI2, PK: Table.PK("", store.GSI2, nil), SKTo: table.Millis(now.UnixMilli()) + "$"} // '$' sorts just after '#'
	for rep.Due < maxFirePerRun {
		q.Limit = min(100, maxFirePerRun-rep.Due)
		rows, err := s.st.Query(ctx, q)
		if err != nil {
			return rep, errors.Join(append(errs, vp.Wrap("recurring.fire_due", vp.KindInternal, err))...)
		}
		for _, it := range rows {
			rep.Due++
			tenant, id, ok := parseRecurringDueSK(it.GSI[1].SK)
			if !ok {
				errs = append(errs, fmt.Errorf("recurring.fire_due: malformed due entry %q", it.GSI[1].SK))
				rep.Failed++
				continue
			}
			out, err := s.fireOne(ctx, tenant, id, now)
			switch {
			case err != nil:
				rep.Failed++
				errs = append(errs, err)
				s.log.ErrorContext(ctx, "recurring task not fired", "tenant", tenant, "recurringTaskId", id, "err", err)
			case out.taskID != "":
				rep.Fired++
				rep.Missed += out.missed
				rep.TaskIDs = append(rep.TaskIDs, out.taskID)
				s.log.InfoContext(ctx, "recurring task fired", "tenant", tenant, "recurringTaskId", id, "taskId", out.taskID,
					"slot", time.UnixMilli(out.slot).UTC().Format(time.RFC3339), "missedSlots", out.missed)
			default:
				rep.Skipped++
			}
		}
		if len(rows) < q.Limit {
			return rep, errors.Join(errs...)
		}
		pos := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &pos
	}
	rep.More = true
	return rep, errors.Join(errs...)
}

func parseRecurringDueSK(sk string) (tenant, id string, ok bool) {
	parts := strings.Split(sk, "#")
	if len(parts) != 3 || !vp.ValidTenant(parts[1]) || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

type fireOutcome struct {
	taskID string // empty: nothing created
	slot   int64
	missed int
}

// fireOne fires one template if it is still due at now (see FireDue).
func (s *Service) fireOne(ctx context.Context, tenant, id string, now time.Time) (fireOutcome, error) {
	const op = "recurring.fire"
	nowMS := now.UnixMilli()
	alreadyFired := int64(-1) // a slot whose marker exists though the template still points at it
	var out fireOutcome
	err := table.Conflicts{Op: op, Max: maxRecurringRetries, Unmapped: true, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "recurringTaskId", "recurring task %s/%s kept changing while firing; the next run retries", tenant, id)
	}}.Retry(ctx, func() error {
		r, it, err := s.get(ctx, op, tenant, id)
		if vp.IsKind(err, vp.KindNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		if r.Paused || r.NextRunAt == 0 || r.NextRunAt > nowMS {
			return nil // not due (any more): the index entry was stale
		}
		sched, loc, _, next, err := schedule(op, r.CronExpression, r.Timezone, now)
		if err != nil {
			return err
		}
		slot, missed := latestSlot(sched, loc, r.NextRunAt, now)
		r.NextRunAt = 0 // never fires again
		if !next.IsZero() {
			r.NextRunAt = next.UnixMilli()
		}
		r.UpdatedAt = nowMS
		marker := Fired.KeyOf(tenant, table.Values{"recId": id, "slot 13 digits": table.Millis(slot)})
		if slot == alreadyFired {
			// The slot's task exists; only the template lags behind.
			w, err := put(op, tenant, r, store.IfVersion(it.Version))
			if err != nil {
				return err
			}
			return records.Err(op, s.st.Write(ctx, w))
		}
		taskItem, t, err := s.recurringInstance(op, tenant, r, slot, nowMS)
		if err != nil {
			return err
		}
		taskID := t.ID
		r.LastTriggered, r.LastSlot, r.LastTaskID = nowMS, slot, taskID
		r.FiredCount++
		r.MissedSlots += int64(missed)
		w, err := put(op, tenant, r, store.IfVersion(it.Version))
		if err != nil {
			return err
		}
		fired, err := Fired.Item(op, tenant, firedSlot{RecurringTaskID: id, TaskID: taskID, Slot: slot})
		if err != nil {
			return err
		}
		fired.ExpiresAt = now.Add(recurringFiredTTL).Unix()
		ix, err := s.tasks.Creating(ctx, tenant, t)
		if err != nil {
			return err
		}
		err = s.st.Write(ctx, append([]store.Op{w, store.Put(fired, store.IfNotExists), store.Put(taskItem, store.IfNotExists)}, ix.Ops()...)...)
		if err == nil {
			s.tasks.Created(ctx, op, tenant, ix, t)
			out = fireOutcome{taskID: taskID, slot: slot, missed: missed}
			return nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return records.Err(op, err)
		}
		// Another run got there first, or the template changed. Read again;
		// if this slot's marker exists, never create its task again.
		if _, gerr := s.st.Get(ctx, marker); gerr == nil {
			alreadyFired = slot
		} else if !errors.Is(gerr, store.ErrNotFound) {
			return records.Err(op, gerr)
		}
		return err
	})
	if err != nil {
		return fireOutcome{}, err
	}
	return out, nil
}

// latestSlot returns the most recent scheduled time at or before now,
// starting from the template's next run (itself a slot at or before now),
// and how many earlier slots it passes over.
func latestSlot(sched cron.Schedule, loc *time.Location, nextRunAt int64, now time.Time) (int64, int) {
	slot := time.UnixMilli(nextRunAt).In(loc)
	missed := 0
	if now.Sub(slot) > catchUpWindow {
		// After a very long downtime, look for the latest slot in the last
		// catchUpWindow only (bounded work); missed then counts those.
		if s := sched.Next(now.Add(-catchUpWindow).In(loc)); !s.IsZero() && !s.After(now) {
			slot, missed = s, 1
		}
	}
	for {
		n := sched.Next(slot)
		if n.IsZero() || n.After(now) {
			return slot.UnixMilli(), missed
		}
		slot = n
		missed++
	}
}

// RecurringCreator is the createdBy of the tasks recurring templates
// create. It matches the auto-generated predicate (createdBy "cron-…"), so
// list_tasks excludeAutoGenerated hides them and bulk_complete_tasks
// autoGeneratedOnly can drain them; their assignee works on them as usual.
const RecurringCreator = "cron-recurring"

// recurringTaskOf is the task a template creates, before task.Service.Build completes
// it. Its tags name the template ("recurring:<id>").
func recurringTaskOf(r vp.RecurringTask) vp.Task {
	return vp.Task{Title: r.Title, Description: r.Description, Project: r.Project, AssignedTo: r.AssignedTo,
		Priority: r.Priority, CreatedBy: RecurringCreator, Tags: []string{"recurring", "recurring:" + r.ID}}
}

// checkRecurringInstance validates a template by building the task it will
// create, with the tasks capability's own rules, so that a template that is
// accepted always fires.
func (s *Service) checkRecurringInstance(op, tenant string, r vp.RecurringTask, nowMS int64) error {
	_, _, err := s.tasks.Build(op, tenant, recurringTaskOf(r), nowMS)
	return err
}

// recurringInstance builds the task a template creates for one slot: its
// store item (keys and indexes are the tasks capability's, see task.Service.Build) and
// the task.
func (s *Service) recurringInstance(op, tenant string, r vp.RecurringTask, _, nowMS int64) (store.Item, vp.Task, error) {
	t, it, err := s.tasks.Build(op, tenant, recurringTaskOf(r), nowMS)
	if err != nil {
		return store.Item{}, vp.Task{}, err
	}
	return it, t, nil
}
