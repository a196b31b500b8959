package task

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Task events: what other capabilities may react to, published in the
// transaction of the change and delivered after it commits to whoever
// subscribed in wiring (mission auto-completion today; GitHub comments on
// step completion later). This package does not know who listens.

// TopicFinished is the topic of the event published when a task that
// belongs to a mission reaches done, cancelled or failed (NewStatus says
// which: a failed task keeps its mission from completing by itself, and
// the issue protocol reacts to done only), or leaves the mission
// (moved to another, or deleted): the moments its mission may have become
// complete. One event names one mission; a change that touches two (a
// done task moved between missions) publishes two. A task outside any
// mission publishes one when it closes or is deleted open and a watcher
// registered with WatchFinished wants it (MissionID is then "").
const TopicFinished = "task.finished"

// Finished is the payload of TopicFinished.
type Finished struct {
	Tenant    string `json:"tenant"`
	TaskID    string `json:"taskId"`
	MissionID string `json:"missionId,omitempty"` // the mission to look at; "" for a watched task outside missions
	OldStatus string `json:"oldStatus,omitempty"`
	NewStatus string `json:"newStatus,omitempty"` // "" for a deleted task
	// What observers of a completion read, so that they need not read the
	// task back: its title, project and completion note (the note cut to
	// maxEventNote bytes).
	Title   string `json:"title,omitempty"`
	Project string `json:"project,omitempty"`
	Note    string `json:"note,omitempty"`
}

// maxEventNote bounds the completion note an event carries.
const maxEventNote = 4096

// DecodeFinished reads the payload of a TopicFinished job; a payload that
// does not decode is a permanent failure.
func DecodeFinished(j outbox.Job) (Finished, error) {
	var f Finished
	if err := json.Unmarshal(j.Payload, &f); err != nil || f.TaskID == "" {
		return f, outbox.Permanent(vp.Errorf("task.finished", vp.KindInvalid, "payload", "not a task.finished event: %s", j.Payload))
	}
	if f.Tenant == "" {
		f.Tenant = j.Tenant
	}
	return f, nil
}

// Events is where the service publishes its events; *outbox.Outbox
// implements it. A task change delivers its events itself right after the
// commit, in the caller's goroutine (PublishInline, RunInline), so that
// complete_task returns with the mission already completed; the committed
// deliveries are the backstop. Bulk completion publishes plain events
// (Publish, Flush): one op each whatever the number of subscribers, which
// is what its transactions have room for.
type Events interface {
	Publish(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (outbox.Pending, error)
	Flush(ctx context.Context, p ...outbox.Pending)
	PublishInline(ctx context.Context, tenant, topic string, payload []byte) (outbox.Pending, error)
	RunInline(ctx context.Context, p ...outbox.Pending)
}

// UseEvents wires the event bus; call it once, before serving. Without
// one, no event is published (and no mission completes by itself).
func (s *Service) UseEvents(e Events) { s.events = e }

// WatchFinished also publishes TopicFinished when a task outside any
// mission closes (reaches done or cancelled) or is deleted open, and
// watch(task) holds — a change another capability reacts to (a title
// naming a GitHub issue, a task holding path reservations). Watchers add
// up: the event is published when any holds. Call it before serving; the
// predicate must be cheap: it runs on every such change.
func (s *Service) WatchFinished(watch func(vp.Task) bool) {
	if prev := s.watch; prev != nil {
		s.watch = func(t vp.Task) bool { return prev(t) || watch(t) }
		return
	}
	s.watch = watch
}

func closed(t *vp.Task) bool {
	return t != nil && final(t.Status)
}

// finishedEvents returns the events of a change from old to t (old nil for
// a new task, t nil for a deleted one): none for most changes, so that
// checkout_task and the other verbs pay nothing for them.
func (s *Service) finishedEvents(tenant string, old, t *vp.Task) []Finished {
	var out []Finished
	ev := func(mission string) {
		f := Finished{Tenant: tenant, MissionID: mission}
		if old != nil {
			f.TaskID, f.OldStatus, f.Title, f.Project = old.ID, old.Status, old.Title, old.Project
		}
		if t != nil {
			f.TaskID, f.NewStatus, f.Title, f.Project = t.ID, t.Status, t.Title, t.Project
			f.Note = truncate(t.CompletionNote, maxEventNote)
		}
		out = append(out, f)
	}
	if t != nil && t.MissionID == "" && closed(t) && (old == nil || old.Status != t.Status) &&
		s.watch != nil && s.watch(*t) {
		ev("")
	}
	if t == nil && old != nil && old.MissionID == "" && !closed(old) && s.watch != nil && s.watch(*old) {
		ev("")
	}
	if old != nil && old.MissionID != "" && (t == nil || t.MissionID != old.MissionID || (closed(t) && !closed(old))) {
		ev(old.MissionID)
	}
	if t != nil && t.MissionID != "" && closed(t) && (old == nil || old.MissionID != t.MissionID || !closed(old)) &&
		(len(out) == 0 || out[0].MissionID != t.MissionID) {
		ev(t.MissionID)
	}
	return out
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// publish returns the pending events of fs, to commit with the change;
// inline: delivered by this caller (see Events).
func (s *Service) publish(ctx context.Context, op string, fs []Finished, inline bool) ([]outbox.Pending, error) {
	if s.events == nil || len(fs) == 0 {
		return nil, nil
	}
	out := make([]outbox.Pending, 0, len(fs))
	for _, f := range fs {
		b, err := records.Encode(op, f)
		if err != nil {
			return nil, err
		}
		var p outbox.Pending
		if inline {
			p, err = s.events.PublishInline(ctx, f.Tenant, TopicFinished, b)
		} else {
			p, err = s.events.Publish(ctx, f.Tenant, TopicFinished, "", b)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// after runs what follows a committed change: its index job, then its
// events.
func (s *Service) after(ctx context.Context, op, tenant string, ix search.Pending, evs []outbox.Pending, ts ...vp.Task) {
	docs := make([]search.Doc, len(ts))
	for i, t := range ts {
		docs[i] = Doc(tenant, t)
	}
	s.search.Done(ctx, op, ix, docs...)
	if s.events != nil && len(evs) > 0 {
		s.events.RunInline(ctx, evs...) // the deliveries of PublishInline
		s.events.Flush(ctx, evs...)     // the events of Publish
	}
}
