package activity

import (
	"context"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const op = "wait_for_activity"

// maxTitleBytes cuts what an item shows of a message: the agent reads the
// whole of it with check_messages.
const maxTitleBytes = 200

// Inbox is what the messages source needs: *message.Service.
type Inbox interface {
	Check(ctx context.Context, p vp.Principal, in message.CheckInput) (message.Inbox, error)
}

// Messages is the source of unread messages, as check_messages reads them
// (never marked read here).
func Messages(in Inbox) Source { return messages{in} }

type messages struct{ in Inbox }

func (messages) Kind() string { return KindMessages }

func (m messages) Pending(ctx context.Context, q Query) ([]Item, bool, error) {
	ci := message.CheckInput{Recipient: q.Who, InstanceID: q.Instance, Limit: q.Limit}
	if q.Since > 0 {
		ci.Since = &q.Since
	}
	box, err := m.in.Check(ctx, q.Principal, ci)
	if err != nil {
		return nil, false, err
	}
	out := make([]Item, 0, len(box.Messages))
	for _, r := range box.Messages {
		out = append(out, Item{Kind: KindMessages, ID: r.ID, Ref: r.MessageID, At: r.CreatedAt, From: r.From, Title: cut(r.Content)})
	}
	return out, box.HasMore, nil
}

// Tasks is the source of the tasks assigned to the caller and not started
// (todo, not paused), by their last update.
func Tasks(st store.Store) Source { return tasks{st} }

type tasks struct{ st store.Store }

func (tasks) Kind() string { return KindTasks }

func (t tasks) Pending(ctx context.Context, q Query) ([]Item, bool, error) {
	var out []Item
	more := false
	err := scanTodo(ctx, t.st, q, func(tk vp.Task) bool {
		if tk.UpdatedAt <= q.Since {
			return false // newest-updated first: the rest is older
		}
		if len(out) == q.Limit {
			more = true
			return false
		}
		out = append(out, Item{Kind: KindTasks, ID: tk.ID, At: tk.UpdatedAt, From: tk.CreatedBy, Title: cut(tk.Title)})
		return true
	})
	return out, more, err
}

// maxUnblockedScan bounds the todo tasks with prerequisites that one read
// looks at, maxDepReads the prerequisites it reads for them, and
// maxTodoScan the todo tasks it walks to find them.
const (
	maxUnblockedScan = 100
	maxDepReads      = 200
	maxTodoScan      = 500
)

// Unblocked is the source of the caller's todo tasks whose prerequisites
// are all done, the last of them after the cursor: the moment such a task
// can start, which changes nothing on the task itself.
func Unblocked(st store.Store) Source { return unblocked{st} }

type unblocked struct{ st store.Store }

func (unblocked) Kind() string { return KindUnblocked }

func (u unblocked) Pending(ctx context.Context, q Query) ([]Item, bool, error) {
	var waiting []vp.Task
	scanned := 0
	err := scanTodo(ctx, u.st, q, func(tk vp.Task) bool {
		if scanned++; len(tk.DependsOn) > 0 {
			waiting = append(waiting, tk)
		}
		return len(waiting) < maxUnblockedScan && scanned < maxTodoScan
	})
	if err != nil {
		return nil, false, err
	}
	done := map[string]int64{} // prerequisite id -> completedAt; absent: not done
	reads := 0
	var out []Item
	more := false
	for _, tk := range waiting {
		last, ready := int64(0), true
		for _, d := range tk.DependsOn {
			at, ok := done[d]
			if !ok {
				if reads == maxDepReads {
					return out, true, nil
				}
				reads++
				dep, _, err := task.Table.Get(ctx, u.st, op, "dependsOn", d, task.Key(q.Tenant, d))
				if err != nil && !vp.IsKind(err, vp.KindNotFound) {
					return nil, false, err
				}
				if err == nil && dep.Status == vp.TaskDone && dep.CompletedAt != nil {
					at = *dep.CompletedAt
				}
				done[d] = at
			}
			if at == 0 {
				ready = false
				break
			}
			last = max(last, at)
		}
		if !ready || last <= q.Since {
			continue
		}
		if len(out) == q.Limit {
			more = true
			break
		}
		out = append(out, Item{Kind: KindUnblocked, ID: tk.ID, At: last, From: tk.CreatedBy, Title: cut(tk.Title)})
	}
	return out, more, nil
}

// scanTodo calls fn on q.Who's todo tasks that are not paused, newest-
// updated first, until it returns false.
func scanTodo(ctx context.Context, st store.Store, q Query, fn func(vp.Task) bool) error {
	tq := task.Table.Query(q.Tenant, store.GSI1, table.Values{"assignee": q.Who, "status": vp.TaskTodo})
	tq.Reverse = true
	err := records.Scan(ctx, st, tq, func(it store.Item) (bool, error) {
		tk, err := records.Decode[vp.Task](op, it)
		if err != nil {
			return false, err
		}
		if tk.Paused {
			return true, nil
		}
		return fn(tk), nil
	})
	return records.Err(op, err)
}

func cut(s string) string {
	if len(s) <= maxTitleBytes {
		return s
	}
	n := maxTitleBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
