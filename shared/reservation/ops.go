package reservation

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ReserveInput is reserve_paths' arguments.
type ReserveInput struct {
	Project string
	Paths   []string
	// Exclusive defaults to true.
	Exclusive *bool
	// TTLMinutes defaults to DefaultTTLMinutes; whole minutes 1..MaxTTLMinutes.
	TTLMinutes *float64
	Reason     string
	TaskID     string
	Caller     string
}

// ReserveResult is reserve_paths' answer: the reservation, or the
// conflicts and nothing reserved.
type ReserveResult struct {
	Reserved    bool         `json:"reserved"`
	Reservation *Reservation `json:"reservation,omitempty"`
	Conflicts   []Conflict   `json:"conflicts,omitempty"`
}

func ttlOf(op string, v *float64, def int) (int, error) {
	if v == nil {
		return def, nil
	}
	l := limits().TTLMinutes
	if err := l.Minutes(op, v); err != nil {
		return 0, err
	}
	if *v != math.Trunc(*v) {
		return 0, vp.Errorf(op, vp.KindInvalid, l.Field, "must be a whole number of minutes, got %v", *v)
	}
	return int(*v), nil
}

func decodeEntry(it store.Item) (entry, error) { return records.Decode[entry]("reservation", it) }

// Reserve reserves in.Paths in in.Project for the caller, all or nothing:
// when an active reservation of another holder collides (see conflicts),
// nothing is written and the conflicts are the answer.
func (s *Service) Reserve(ctx context.Context, p vp.Principal, in ReserveInput) (ReserveResult, error) {
	const op = "reserve_paths"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return ReserveResult{}, err
	}
	var errs vp.Errs
	errs.Add(checkProject(op, in.Project, true))
	errs.Add(limits().Reason.Text(op, in.Reason, false))
	errs.Add(vp.CheckText(op, "taskId", in.TaskID, vp.MaxNameBytes, false))
	if err := errs.First(); err != nil {
		return ReserveResult{}, err
	}
	globs, err := parseGlobs(op, in.Paths, false)
	if err != nil {
		return ReserveResult{}, err
	}
	ttl, err := ttlOf(op, in.TTLMinutes, DefaultTTLMinutes)
	if err != nil {
		return ReserveResult{}, err
	}
	holder, err := p.ActAs(op, "callerOrchestrator", in.Caller)
	if err != nil {
		return ReserveResult{}, err
	}
	if in.TaskID != "" && s.tasks != nil {
		t, err := s.tasks.GetTask(ctx, p, task.TaskRef{TaskID: in.TaskID})
		if err != nil {
			return ReserveResult{}, vp.Wrap(op, vp.KindOf(err), err)
		}
		if !open(t.Status) {
			return ReserveResult{}, vp.Errorf(op, vp.KindConflict, "taskId", "task %s is %s: a reservation linked to it would be released at once", t.ID, t.Status)
		}
	}
	exclusive := in.Exclusive == nil || *in.Exclusive
	id, created := s.ids.NewTimed("rsv")
	var res ReserveResult
	err = table.Conflicts{Op: op, Max: maxAttempts, Field: "project", ID: in.Project}.Retry(ctx, func() error {
		lockOp, err := s.lockOp(ctx, op, tenant, in.Project)
		if err != nil {
			return err
		}
		now := s.now().UnixMilli()
		cs, err := s.conflicts(ctx, tenant, in.Project, holder, globs, exclusive, now)
		if err != nil {
			return records.Err(op, err)
		}
		if len(cs) > 0 {
			res = ReserveResult{Conflicts: cs}
			return nil
		}
		r := Reservation{ID: id, CreationTime: created, Project: in.Project, Holder: holder, Paths: globStrings(globs), Exclusive: exclusive,
			Reason: in.Reason, TaskID: in.TaskID, TTLMinutes: ttl, ExpiresAt: now + int64(ttl)*60_000}
		ops, err := s.writeOps(op, tenant, row{Reservation: r, Tenant: tenant}, store.IfNotExists, store.IfNotExists)
		if err != nil {
			return err
		}
		if err := s.st.Write(ctx, append([]store.Op{lockOp}, ops...)...); err != nil {
			return err
		}
		res = ReserveResult{Reserved: true, Reservation: &r}
		return nil
	})
	return res, err
}

// open reports a task status that has not finished (the statuses a linked
// reservation outlives).
func open(status string) bool {
	return status != vp.TaskDone && status != vp.TaskCancelled && status != taskFailed && status != ""
}

// taskFailed is fail_task's terminal status.
const taskFailed = "failed"

// lockOp reads the project's lock and returns its conditional rewrite.
func (s *Service) lockOp(ctx context.Context, op, tenant, project string) (store.Op, error) {
	k := locks.KeyOf(tenant, table.Values{"project": project})
	cond := store.IfNotExists
	it, err := s.st.Get(ctx, k)
	switch {
	case err == nil:
		cond = store.IfVersion(it.Version)
	case !errors.Is(err, store.ErrNotFound):
		return store.Op{}, records.Err(op, err)
	}
	l, err := locks.Item(op, tenant, lock{Project: project, At: s.now().UnixMilli()})
	if err != nil {
		return store.Op{}, err
	}
	return store.Put(l, cond), nil
}

// writeOps are the writes of r: its row under rowCond and its entries
// under entryCond.
func (s *Service) writeOps(op, tenant string, r row, rowCond, entryCond store.Cond) ([]store.Op, error) {
	it, err := rows.Item(op, tenant, r)
	if err != nil {
		return nil, err
	}
	ops := []store.Op{store.Put(it, rowCond)}
	for i, g := range r.Paths {
		e, err := entries.Item(op, tenant, entry{Project: r.Project, ReservationID: r.ID, N: i, Glob: g, Holder: r.Holder,
			Exclusive: r.Exclusive, ExpiresAt: r.ExpiresAt, Reason: r.Reason})
		if err != nil {
			return nil, err
		}
		ops = append(ops, store.Put(e, entryCond))
	}
	return ops, nil
}

// deleteOps are the deletions of r's row (at version v) and entries.
func deleteOps(tenant string, r row, v int64) []store.Op {
	ops := []store.Op{store.Delete(rows.Key(tenant, r), store.IfVersion(v))}
	for i, g := range r.Paths {
		ops = append(ops, store.Delete(entries.Key(tenant, entry{Project: r.Project, ReservationID: r.ID, N: i, Glob: g}), store.Always))
	}
	return ops
}

// CheckInput is check_paths' arguments.
type CheckInput struct {
	Project string
	Paths   []string
	// Exclusive asks as an exclusive reservation would (default true):
	// false reports only the exclusive reservations in the way.
	Exclusive *bool
	Caller    string
}

// CheckResult is check_paths' answer.
type CheckResult struct {
	Conflicts []Conflict `json:"conflicts"`
}

// Check reports, without writing, the active reservations of other
// holders that in.Paths collide with.
func (s *Service) Check(ctx context.Context, p vp.Principal, in CheckInput) (CheckResult, error) {
	const op = "check_paths"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return CheckResult{}, err
	}
	if err := checkProject(op, in.Project, true); err != nil {
		return CheckResult{}, err
	}
	globs, err := parseGlobs(op, in.Paths, false)
	if err != nil {
		return CheckResult{}, err
	}
	holder, err := p.ActAs(op, "callerOrchestrator", in.Caller)
	if err != nil {
		return CheckResult{}, err
	}
	cs, err := s.conflicts(ctx, tenant, in.Project, holder, globs, in.Exclusive == nil || *in.Exclusive, s.now().UnixMilli())
	if err != nil {
		return CheckResult{}, records.Err(op, err)
	}
	if cs == nil {
		cs = []Conflict{}
	}
	return CheckResult{Conflicts: cs}, nil
}

// RenewInput is renew_reservations' arguments: the caller's reservations
// by id, or all of theirs in a project, or all of theirs.
type RenewInput struct {
	Project        string
	ReservationIDs []string
	// TTLMinutes is the new time to live from now; each reservation's own
	// when absent.
	TTLMinutes *float64
	Caller     string
}

// RenewResult is renew_reservations' answer: those renewed, and the ids
// asked for that are no longer active (expired or released) or not the
// caller's.
type RenewResult struct {
	Renewed  []Reservation `json:"renewed"`
	NotFound []string      `json:"notFound,omitempty"`
}

// Renew extends the caller's active reservations to now + ttl. An expired
// reservation is not renewed: its paths may be someone else's already.
func (s *Service) Renew(ctx context.Context, p vp.Principal, in RenewInput) (RenewResult, error) {
	const op = "renew_reservations"
	tenant, holder, targets, missing, err := s.held(ctx, op, p, in.Project, in.ReservationIDs, in.Caller)
	if err != nil {
		return RenewResult{}, err
	}
	if _, err := ttlOf(op, in.TTLMinutes, 1); err != nil {
		return RenewResult{}, err
	}
	out := RenewResult{Renewed: []Reservation{}, NotFound: missing}
	for _, t := range targets {
		var renewed *Reservation
		err := table.Conflicts{Op: op, Max: maxAttempts, Field: "reservationIds", ID: t.ID}.Retry(ctx, func() error {
			renewed = nil
			r, it, err := s.getRow(ctx, op, tenant, t.Project, t.ID)
			now := s.now().UnixMilli()
			if vp.IsKind(err, vp.KindNotFound) || (err == nil && (r.ExpiresAt <= now || r.Holder != holder)) {
				return nil
			}
			if err != nil {
				return err
			}
			lockOp, err := s.lockOp(ctx, op, tenant, r.Project)
			if err != nil {
				return err
			}
			ttl, _ := ttlOf(op, in.TTLMinutes, r.TTLMinutes)
			r.TTLMinutes, r.ExpiresAt, r.RenewedAt, r.Notified = ttl, now+int64(ttl)*60_000, now, false
			ops, err := s.writeOps(op, tenant, r, store.IfVersion(it.Version), store.Always)
			if err != nil {
				return err
			}
			if err := s.st.Write(ctx, append([]store.Op{lockOp}, ops...)...); err != nil {
				return err
			}
			renewed = &r.Reservation
			return nil
		})
		if err != nil {
			return out, err
		}
		if renewed == nil {
			out.NotFound = append(out.NotFound, t.ID)
			continue
		}
		out.Renewed = append(out.Renewed, *renewed)
	}
	return out, nil
}

// held resolves the reservations a renewal or release names: the ids
// given (those not the caller's active ones are missing), else the
// caller's active reservations in project (or everywhere).
func (s *Service) held(ctx context.Context, op string, p vp.Principal, project string, ids []string, caller string) (string, string, []row, []string, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return "", "", nil, nil, err
	}
	var errs vp.Errs
	errs.Add(checkProject(op, project, false))
	errs.Add(limits().ReservationIDs.IDs(op, ids))
	if err := errs.First(); err != nil {
		return "", "", nil, nil, err
	}
	holder, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return "", "", nil, nil, err
	}
	now := s.now().UnixMilli()
	var out []row
	var missing []string
	if len(ids) > 0 {
		mine, err := s.holderRows(ctx, op, tenant, holder, "", now)
		if err != nil {
			return "", "", nil, nil, err
		}
		for _, id := range vp.Dedupe(ids) {
			i := slices.IndexFunc(mine, func(r row) bool { return r.ID == id && (project == "" || r.Project == project) })
			if i < 0 {
				missing = append(missing, id)
				continue
			}
			out = append(out, mine[i])
		}
		return tenant, holder, out, missing, nil
	}
	out, err = s.holderRows(ctx, op, tenant, holder, project, now)
	return tenant, holder, out, nil, err
}

// holderRows are holder's active reservations (in project, when given).
func (s *Service) holderRows(ctx context.Context, op, tenant, holder, project string, now int64) ([]row, error) {
	items, err := records.QueryAll(ctx, s.st, rows.Query(tenant, store.GSI1, table.Values{"holder": holder}), maxHeld)
	if err != nil {
		return nil, records.Err(op, err)
	}
	var out []row
	for _, it := range items {
		r, err := records.Decode[row](op, it)
		if err != nil {
			return nil, err
		}
		if r.ExpiresAt > now && (project == "" || r.Project == project) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Service) getRow(ctx context.Context, op, tenant, project, id string) (row, store.Item, error) {
	return records.Get[row](ctx, s.st, op, "reservationIds", id, rows.KeyOf(tenant, table.Values{"project": project, "reservationId": id}))
}

// ReleaseInput is release_paths' arguments: reservation ids, or a project
// and the globs to give up there.
type ReleaseInput struct {
	Project        string
	Paths          []string
	ReservationIDs []string
	Caller         string
}

// ReleaseResult is release_paths' answer.
type ReleaseResult struct {
	// Released are the reservations ended whole.
	Released []string `json:"released"`
	// Narrowed are the reservations that keep some of their globs.
	Narrowed []Reservation `json:"narrowed,omitempty"`
	NotFound []string      `json:"notFound,omitempty"`
}

// Release ends the caller's reservations named by id, or gives up the
// globs in.Paths (as written when reserved) of the caller's reservations
// in in.Project: a reservation left with none is released.
func (s *Service) Release(ctx context.Context, p vp.Principal, in ReleaseInput) (ReleaseResult, error) {
	const op = "release_paths"
	switch {
	case len(in.ReservationIDs) == 0 && (in.Project == "" || len(in.Paths) == 0):
		return ReleaseResult{}, vp.E(op, vp.KindInvalid, "reservationIds", "is required unless project and paths are given")
	case len(in.ReservationIDs) > 0 && len(in.Paths) > 0:
		return ReleaseResult{}, vp.E(op, vp.KindInvalid, "paths", "give reservationIds or project and paths, not both")
	}
	globs, err := parseGlobs(op, in.Paths, true)
	if err != nil {
		return ReleaseResult{}, err
	}
	tenant, holder, targets, missing, err := s.held(ctx, op, p, in.Project, in.ReservationIDs, in.Caller)
	if err != nil {
		return ReleaseResult{}, err
	}
	drop := globStrings(globs)
	out := ReleaseResult{Released: []string{}, NotFound: missing}
	for _, t := range targets {
		if len(drop) > 0 && !slices.ContainsFunc(t.Paths, func(g string) bool { return slices.Contains(drop, g) }) {
			continue
		}
		var narrowed *Reservation
		gone := false
		err := table.Conflicts{Op: op, Max: maxAttempts, Field: "reservationIds", ID: t.ID}.Retry(ctx, func() error {
			narrowed, gone = nil, false
			r, it, err := s.getRow(ctx, op, tenant, t.Project, t.ID)
			if vp.IsKind(err, vp.KindNotFound) {
				gone = true
				return nil
			}
			if err != nil || r.Holder != holder {
				return err
			}
			keep := slices.DeleteFunc(slices.Clone(r.Paths), func(g string) bool { return len(drop) == 0 || slices.Contains(drop, g) })
			ops := deleteOps(tenant, r, it.Version)
			if len(keep) > 0 {
				// Fewer globs never create a conflict: no lock needed. The
				// kept globs are renumbered, so their keys may change:
				// delete each old entry that is not rewritten.
				n := r
				n.Paths = keep
				put, err := s.writeOps(op, tenant, n, store.IfVersion(it.Version), store.Always)
				if err != nil {
					return err
				}
				for _, d := range ops[1:] {
					if !slices.ContainsFunc(put, func(o store.Op) bool { return o.Key == d.Key }) {
						put = append(put, d)
					}
				}
				ops = put
				narrowed = &n.Reservation
			}
			if err := s.st.Write(ctx, ops...); err != nil {
				return err
			}
			gone = narrowed == nil
			return nil
		})
		if err != nil {
			return out, err
		}
		if narrowed != nil {
			out.Narrowed = append(out.Narrowed, *narrowed)
		} else if gone {
			out.Released = append(out.Released, t.ID)
		}
	}
	return out, nil
}

// OnTaskFinished is the subscriber to task.TopicFinished: a linked task
// that completed, failed, was cancelled or deleted releases its
// reservations.
func (s *Service) OnTaskFinished(ctx context.Context, tenant, taskID, newStatus string) error {
	const op = "reservation.task_finished"
	if open(newStatus) {
		return nil
	}
	items, err := records.QueryAll(ctx, s.st, rows.Query(tenant, store.GSI3, table.Values{"taskId": taskID}), maxHeld)
	if err != nil {
		return records.Err(op, err)
	}
	for _, it := range items {
		r, err := records.Decode[row](op, it)
		if err != nil {
			return err
		}
		err = table.Retry(ctx, op, "reservationId", r.ID, func() error {
			r, it, err := s.getRow(ctx, op, tenant, r.Project, r.ID)
			if vp.IsKind(err, vp.KindNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return s.st.Write(ctx, deleteOps(tenant, r, it.Version)...)
		})
		if err != nil {
			return err
		}
		s.log.InfoContext(ctx, "reservation released with its task", "tenant", tenant, "reservation", r.ID, "task", taskID, "status", newStatus)
	}
	return nil
}

// NotifyReport is what one expiry run did.
type NotifyReport struct {
	Expired, Notified int
	More              bool
}

// maxNotify bounds one run of NotifyExpired.
const maxNotify = 200

// NotifyExpired tells the holder of each reservation that expired
// unrenewed, once: the notice commits with the row's notified mark, under
// the version read, so a renewal or a second run cannot make it twice.
func (s *Service) NotifyExpired(ctx context.Context, now time.Time) (NotifyReport, error) {
	const op = "reservation.expiry"
	q := rows.Query("", store.GSI2, nil)
	q.SKTo = table.Millis(now.UnixMilli())
	q.Limit = maxNotify
	items, err := s.st.Query(ctx, q)
	if err != nil {
		return NotifyReport{}, records.Err(op, err)
	}
	rep := NotifyReport{Expired: len(items), More: len(items) == maxNotify}
	var errs []error
	for _, it := range items {
		r, err := records.Decode[row](op, it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sent, err := s.notifyOne(ctx, op, r, now.UnixMilli())
		if err != nil {
			errs = append(errs, err)
		}
		if sent {
			rep.Notified++
		}
	}
	return rep, errors.Join(errs...)
}

func (s *Service) notifyOne(ctx context.Context, op string, was row, now int64) (bool, error) {
	sent := false
	err := table.Retry(ctx, op, "reservationId", was.ID, func() error {
		sent = false
		r, it, err := s.getRow(ctx, op, was.Tenant, was.Project, was.ID)
		if vp.IsKind(err, vp.KindNotFound) {
			return nil
		}
		if err != nil || r.Notified || r.ExpiresAt > now {
			return err
		}
		r.Notified = true
		put, err := rows.Item(op, r.Tenant, r)
		if err != nil {
			return err
		}
		ops := []store.Op{store.Put(put, store.IfVersion(it.Version))}
		var n *message.Notice
		if s.notices != nil {
			msg := "Your reservation " + r.ID + " of " + strings.Join(r.Paths, ", ") + " in project " + r.Project +
				" expired unrenewed at " + time.UnixMilli(r.ExpiresAt).UTC().Format(time.RFC3339) + "; reserve the paths again if you still need them."
			notice, err := s.notices.ComposeNotice(ctx, op, r.Tenant, vp.SystemCaller, r.Holder, msg)
			if err != nil {
				return err
			}
			ops = append(ops, notice.Ops...)
			n = &notice
		}
		if err := s.st.Write(ctx, ops...); err != nil {
			return err
		}
		if n != nil {
			s.notices.Sent(ctx, op, r.Tenant, *n)
		}
		sent = true
		return nil
	})
	return sent, err
}
