// Package message holds agent messaging: a message and one receipt per
// recipient written in one transaction, inboxes of unread receipts, read
// marks, message history and its keyword documents.
package message

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Directory is what sending needs from profiles and presence to resolve a
// channel (profile.Service provides it). Errors are the store's.
type Directory interface {
	// Orchestrators returns the distinct orchestrators of the tenant with a
	// profile or presence row: who "broadcast" reaches.
	Orchestrators(ctx context.Context, tenant string) ([]string, error)
	// InstanceOwners returns the orchestrators that run an instance with
	// this id: a channel entry equal to a known instance id targets it.
	InstanceOwners(ctx context.Context, tenant, instance string) ([]string, error)
	// HasProfile reports an orchestrator with a profile or presence row.
	HasProfile(ctx context.Context, tenant, orch string) (bool, error)
}

// Options configures a Service.
type Options struct {
	Store     store.Store
	Cursors   *listing.Signer
	Now       func() time.Time
	Logger    *slog.Logger
	Directory Directory
	// Search, when set, keeps messages searchable by keyword.
	Search *search.Writer
}

// Service is the messaging domain.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	dir     Directory
	search  *search.Writer
	work    Work
}

// Work is what check_messages reads of the recipient's tasks: its stuck
// work (*task.Service implements it).
type Work interface {
	StuckWork(ctx context.Context, tenant, caller string, after time.Duration) (vp.StuckWork, error)
}

// UseWork wires the tasks that check_messages reports on; call it once,
// before serving. Without it, check_messages reports messages only.
func (s *Service) UseWork(w Work) { s.work = w }

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), dir: o.Directory, search: o.Search}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Broadcast is the channel that reaches every orchestrator with a profile
// except the sender, resolved when the message is sent.
const Broadcast = "broadcast"

// SendInput is a message to send.
type SendInput struct {
	From           string
	FromInstanceID string
	Channel        string
	Content        string
	// InstanceID restricts delivery to that instance of the channel's roles.
	InstanceID  string
	SessionDay  *int64
	TenantLabel string
}

// Recipient is one resolved delivery target.
type Recipient struct {
	Orchestrator string `json:"recipient"`
	InstanceID   string `json:"recipientInstanceId,omitempty"`
	ReceiptID    string `json:"receiptId"`
}

// SendResult reports what send_message wrote.
type SendResult struct {
	MessageID  string      `json:"messageId"`
	CreatedAt  int64       `json:"createdAt"`
	Recipients []Recipient `json:"recipients"`
	// UnknownRecipients are the names of the channel nobody has used yet
	// (no profile, no message sent or waiting): delivered, but perhaps a
	// typo. Warning says so in words, with the known peers.
	UnknownRecipients []string `json:"unknownRecipients,omitempty"`
	Warning           string   `json:"warning,omitempty"`
}

// SendLimits bound send_message's texts; names are bounded by vp.CheckName.
type SendLimits struct{ Channel, Content vp.Limit }

// Limits are send_message's limits.
func (SendInput) Limits() SendLimits {
	return SendLimits{Channel: vp.MaxBytes("channel", vp.MaxChannelBytes), Content: vp.MaxBytes("content", vp.MaxMessageBytes)}
}

// MarkReadLimit bounds mark_as_read's receipt ids per call.
func MarkReadLimit() vp.Limit { return vp.MaxItems("receiptIds", vp.MaxReceiptIDsPerOp, 0) }

// Send stores a message and one unread receipt per resolved recipient, all in
// one transaction: either every recipient can see it or none can.
func (s *Service) Send(ctx context.Context, p vp.Principal, in SendInput) (SendResult, error) {
	const op = "send_message"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return SendResult{}, err
	}
	for _, c := range []struct {
		field, v string
	}{{"from", in.From}, {"fromInstanceId", in.FromInstanceID}, {"instanceId", in.InstanceID}, {"tenantId", in.TenantLabel}} {
		if err := vp.CheckName(op, c.field, c.v, false); err != nil {
			return SendResult{}, err
		}
	}
	lim := in.Limits()
	if err := lim.Channel.Text(op, in.Channel, true); err != nil {
		return SendResult{}, err
	}
	if err := lim.Content.Text(op, in.Content, true); err != nil {
		return SendResult{}, err
	}
	from, err := p.ActAs(op, "from", in.From)
	if err != nil {
		return SendResult{}, err
	}
	in.InstanceID = vp.NormalizeOrchestrator(in.InstanceID)
	targets, unknown, err := s.resolveChannel(ctx, op, tenant, from, in.Channel, in.InstanceID)
	if err != nil {
		return SendResult{}, err
	}
	// Receipt ids are minted after the message id, so their milliseconds are
	// never below now: the inbox's id floor for "since" keeps every receipt
	// created after it.
	msgID, now := s.ids.NewTimed("msg")
	msg := vp.Message{
		ID: msgID, CreationTime: now, From: from, FromInstanceID: in.FromInstanceID,
		Channel: NormalizeChannel(in.Channel), Content: in.Content, InstanceID: in.InstanceID,
		SessionDay: in.SessionDay, TenantLabel: in.TenantLabel, Recipients: len(targets), CreatedAt: now,
	}
	ops, res, ix, err := s.compose(ctx, op, tenant, msg, targets)
	if err != nil {
		return SendResult{}, err
	}
	if ops, err = s.search.Add(ctx, s.st, ops, ix); err != nil {
		return SendResult{}, records.Err(op, err)
	}
	if err := s.st.Write(ctx, ops...); err != nil {
		return SendResult{}, records.Err(op, err)
	}
	s.search.Done(ctx, op, ix, Doc(tenant, msg))
	if len(unknown) > 0 {
		res.UnknownRecipients, res.Warning = unknown, s.unknownWarning(ctx, tenant, unknown)
	}
	return res, nil
}

// compose returns the writes of msg to targets: the message, a receipt
// each, and its index job.
func (s *Service) compose(ctx context.Context, op, tenant string, msg vp.Message, targets []Recipient) ([]store.Op, SendResult, search.Pending, error) {
	mi, err := Messages.Item(op, tenant, msg)
	if err != nil {
		return nil, SendResult{}, search.Pending{}, err
	}
	from, now := msg.From, msg.CreationTime
	ops := []store.Op{store.Put(mi, store.IfNotExists)}
	res := SendResult{MessageID: msg.ID, CreatedAt: now, Recipients: make([]Recipient, 0, len(targets))}
	for _, t := range targets {
		r := vp.Receipt{
			ID: s.ids.New("rcp"), MessageID: msg.ID, Recipient: t.Orchestrator, RecipientInstanceID: t.InstanceID,
			From: from, FromInstanceID: msg.FromInstanceID, Channel: msg.Channel, Content: msg.Content,
			TenantLabel: msg.TenantLabel, CreatedAt: now,
		}
		ri, err := receipts.Item(op, tenant, r)
		if err != nil {
			return nil, SendResult{}, search.Pending{}, err
		}
		ops = append(ops, store.Put(ri, store.IfNotExists))
		t.ReceiptID = r.ID
		res.Recipients = append(res.Recipients, t)
	}
	// The index job commits with the message (or just before it, when 99
	// receipts leave no room: see search.Writer.Add).
	ix, err := s.search.Prepare(ctx, tenant, Kind, msg.ID)
	return ops, res, ix, err
}

// Notice is a message from the system to one orchestrator, composed for
// a caller's transaction (an issue assigned by a webhook): commit Ops,
// then call Sent.
type Notice struct {
	MessageID string
	Ops       []store.Op
	msg       vp.Message
	ix        search.Pending
}

// ComposeNotice returns the writes of a message from `from` to the
// orchestrator `to`.
func (s *Service) ComposeNotice(ctx context.Context, op, tenant, from, to, content string) (Notice, error) {
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "from", from, true))
	errs.Add(vp.CheckName(op, "to", to, true))
	errs.Add(vp.CheckText(op, "content", content, vp.MaxMessageBytes, true))
	if err := errs.First(); err != nil {
		return Notice{}, err
	}
	id, now := s.ids.NewTimed("msg")
	to = vp.NormalizeOrchestrator(to)
	msg := vp.Message{ID: id, CreationTime: now, From: vp.NormalizeOrchestrator(from), Channel: to, Content: content,
		Recipients: 1, CreatedAt: now}
	ops, _, ix, err := s.compose(ctx, op, tenant, msg, []Recipient{{Orchestrator: to}})
	if err != nil {
		return Notice{}, err
	}
	// Room for the index job is the caller's to keep (search.Writer.Add
	// would commit it ahead, outside the caller's transaction).
	return Notice{MessageID: id, Ops: append(ops, ix.Ops()...), msg: msg, ix: ix}, nil
}

// Sent runs what follows the commit of n's writes: its index job.
func (s *Service) Sent(ctx context.Context, op, tenant string, n Notice) {
	s.search.Done(ctx, op, n.ix, Doc(tenant, n.msg))
}

// NormalizeChannel folds each entry like an orchestrator id (so that "Alice"
// and "alice" are one channel, for delivery and for list_messages alike) and
// drops empty and repeated entries.
func NormalizeChannel(ch string) string {
	var out []string
	for _, part := range strings.Split(ch, ",") {
		if part = vp.NormalizeOrchestrator(part); part != "" && !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return strings.Join(out, ",")
}

// resolveChannel turns a channel expression into recipients: "broadcast",
// orchestrator names, and ids of known instances, comma-separated.
func (s *Service) resolveChannel(ctx context.Context, op, tenant, from, channel, instance string) (_ []Recipient, unknown []string, _ error) {
	var out []Recipient
	seen := map[Recipient]bool{}
	add := func(r Recipient) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, entry := range strings.Split(NormalizeChannel(channel), ",") {
		if entry == "" {
			continue
		}
		if err := vp.CheckName(op, "channel", entry, true); err != nil {
			return nil, nil, err
		}
		if entry == vp.Wildcard {
			return nil, nil, vp.E(op, vp.KindInvalid, "channel", "\"*\" is not a channel; use \"broadcast\" to reach everyone")
		}
		if entry == Broadcast {
			all, err := s.dir.Orchestrators(ctx, tenant)
			if err != nil {
				return nil, nil, records.Err(op, err)
			}
			for _, o := range all {
				if o != from {
					add(Recipient{Orchestrator: o, InstanceID: instance})
				}
			}
			continue
		}
		owners, err := s.dir.InstanceOwners(ctx, tenant, entry)
		if err != nil {
			return nil, nil, records.Err(op, err)
		}
		if len(owners) > 0 {
			for _, o := range owners {
				add(Recipient{Orchestrator: o, InstanceID: entry})
			}
			continue
		}
		if entry != from && !seen[Recipient{Orchestrator: entry, InstanceID: instance}] {
			known, err := s.known(ctx, tenant, entry)
			if err != nil {
				return nil, nil, records.Err(op, err)
			}
			if !known {
				unknown = append(unknown, entry)
			}
		}
		add(Recipient{Orchestrator: entry, InstanceID: instance})
	}
	if len(out) == 0 {
		if strings.Contains(strings.ToLower(channel), Broadcast) {
			return nil, nil, vp.E(op, vp.KindInvalid, "channel", "broadcast reached no one: no other orchestrator has a profile yet (update_profile or set_summary creates one)")
		}
		return nil, nil, vp.E(op, vp.KindInvalid, "channel", "names no recipient; use an orchestrator id, a comma-separated list, an instance id or \"broadcast\"")
	}
	if len(out) > vp.MaxRecipients {
		return nil, nil, vp.Errorf(op, vp.KindTooLarge, "channel", "resolves to %d recipients; the limit is %d per message", len(out), vp.MaxRecipients)
	}
	return out, unknown, nil
}

// known reports a name somebody has used: a profile or presence row, a
// message sent, or one waiting. Sending to any other name still works (the
// recipient may not have started yet) but is flagged: a typo ("bbo") would
// otherwise go to an inbox no one will ever read, and look fine.
func (s *Service) known(ctx context.Context, tenant, name string) (bool, error) {
	if ok, err := s.dir.HasProfile(ctx, tenant, name); err != nil || ok {
		return ok, err
	}
	for _, q := range []store.Query{
		Messages.Query(tenant, store.GSI1, table.Values{"from": name}),
		receipts.Query(tenant, store.GSI1, table.Values{"unreadRecipient": name}),
	} {
		q.Limit = 1
		rows, err := s.st.Query(ctx, q)
		if err != nil || len(rows) > 0 {
			return len(rows) > 0, err
		}
	}
	return false, nil
}

// unknownWarning tells the sender which names nobody has used, and who is
// known. An error here only loses the list of peers, not the send.
func (s *Service) unknownWarning(ctx context.Context, tenant string, unknown []string) string {
	list := "none yet"
	if peers, err := s.dir.Orchestrators(ctx, tenant); err == nil && len(peers) > 0 {
		if len(peers) > 20 {
			peers = append(peers[:20:20], "…")
		}
		list = strings.Join(peers, ", ")
	}
	return fmt.Sprintf("delivered, but nobody named %s has a profile, sent a message or has one waiting (known peers: %s): "+
		"check the spelling; if that peer has not started yet, it will find the message at its first check_messages",
		strings.Join(unknown, ", "), list)
}

// CheckInput selects unread messages.
type CheckInput struct {
	Recipient   string
	InstanceID  string
	Since       *int64 // Unix ms: only receipts created after it
	TenantLabel string
	Limit       int
	// StuckAfterHours: a task in progress with no update for this long is
	// reported stuck (nil: DefaultStuckAfterHours).
	StuckAfterHours *int
}

// Limits are check_messages' limits.
func (CheckInput) Limits() vp.Limit {
	return vp.Between("stuckAfterHours", 1, MaxStuckAfterHours)
}

// Inbox is check_messages' result: unread receipts in the order they
// arrived, and the recipient's stuck work (vp.StuckWork: at most
// task.MaxStuckListed entries per list; absent when there is none).
type Inbox struct {
	Messages []vp.Receipt `json:"messages"`
	Count    int          `json:"count"`
	// HasMore is true when more unread messages wait beyond Limit.
	HasMore bool `json:"hasMore"`
	vp.StuckWork
}

const (
	defaultInboxLimit = 100
	maxInboxLimit     = 500
	// DefaultStuckAfterHours and MaxStuckAfterHours bound stuckAfterHours:
	// a working day's half by default, a week at most.
	DefaultStuckAfterHours = 4
	MaxStuckAfterHours     = 168
)

// Check returns unread messages for a recipient without marking them.
func (s *Service) Check(ctx context.Context, p vp.Principal, in CheckInput) (Inbox, error) {
	const op = "check_messages"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Inbox{}, err
	}
	if err := vp.CheckName(op, "recipient", in.Recipient, false); err != nil {
		return Inbox{}, err
	}
	if err := vp.CheckName(op, "recipientInstanceId", in.InstanceID, false); err != nil {
		return Inbox{}, err
	}
	if h := in.StuckAfterHours; h != nil && (*h < 1 || *h > MaxStuckAfterHours) {
		lim := in.Limits()
		return Inbox{}, vp.Errorf(op, vp.KindInvalid, lim.Field, "must be a whole number of hours from %v to %v, got %d", lim.Min, lim.Max, *h)
	}
	recipient, err := p.ActAs(op, "recipient", in.Recipient)
	if err != nil {
		return Inbox{}, err
	}
	in.InstanceID = vp.NormalizeOrchestrator(in.InstanceID)
	limit := in.Limit
	if limit <= 0 {
		limit = defaultInboxLimit
	}
	limit = min(limit, maxInboxLimit)
	q := receipts.Query(tenant, store.GSI1, table.Values{"unreadRecipient": recipient})
	if in.Since != nil {
		q.SKFrom = vp.IDFloor("rcp", time.UnixMilli(*in.Since+1))
	}
	inbox := Inbox{Messages: []vp.Receipt{}}
	err = records.Scan(ctx, s.st, q, func(it store.Item) (bool, error) {
		r, err := records.Decode[vp.Receipt](op, it)
		if err != nil {
			return false, err
		}
		if in.Since != nil && r.CreatedAt <= *in.Since {
			// Minted in a later millisecond than the message it carries.
			return true, nil
		}
		if in.InstanceID != "" && r.RecipientInstanceID != "" && r.RecipientInstanceID != in.InstanceID {
			return true, nil
		}
		if in.TenantLabel != "" && r.TenantLabel != in.TenantLabel {
			return true, nil
		}
		if len(inbox.Messages) == limit {
			inbox.HasMore = true
			return false, nil
		}
		inbox.Messages = append(inbox.Messages, r)
		return true, nil
	})
	if err != nil {
		return Inbox{}, records.Err(op, err)
	}
	inbox.Count = len(inbox.Messages)
	if s.work != nil {
		hours := DefaultStuckAfterHours
		if in.StuckAfterHours != nil {
			hours = *in.StuckAfterHours
		}
		if inbox.StuckWork, err = s.work.StuckWork(ctx, tenant, recipient, time.Duration(hours)*time.Hour); err != nil {
			return Inbox{}, err
		}
	}
	return inbox, nil
}

// MarkRead marks receipts read and returns how many were newly marked. Every
// id is checked before anything is written: an unknown or foreign receipt
// fails the whole call.
func (s *Service) MarkRead(ctx context.Context, p vp.Principal, ids []string) (int, error) {
	const op = "mark_as_read"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, vp.E(op, vp.KindInvalid, "receiptIds", "is required: pass the receiptId values check_messages returned")
	}
	if lim := MarkReadLimit(); len(ids) > lim.Items {
		return 0, vp.Errorf(op, vp.KindTooLarge, lim.Field, "has %d ids; the limit is %d per call", len(ids), lim.Items)
	}
	type pending struct {
		r  vp.Receipt
		it store.Item
	}
	var todo []pending
	seen := map[string]bool{}
	for _, id := range ids {
		if err := vp.CheckName(op, "receiptIds", id, true); err != nil {
			return 0, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		r, it, err := receipts.Get(ctx, s.st, op, "receiptIds", id, receiptKey(tenant, id))
		if err != nil {
			return 0, err
		}
		if err := p.MayActAs(op, fmt.Sprintf("receiptIds (receipt %q)", id), r.Recipient); err != nil {
			return 0, err
		}
		if r.ReadAt == nil {
			todo = append(todo, pending{r, it})
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	// One transaction for the whole batch; only when another caller marked
	// one of them meanwhile does each receipt go its own way.
	now := s.nowMS()
	ops := make([]store.Op, len(todo))
	for i, t := range todo {
		r := t.r
		r.ReadAt = &now
		next, err := receipts.Item(op, tenant, r) // read: out of the unread index
		if err != nil {
			return 0, err
		}
		ops[i] = store.Put(next, store.IfVersion(t.it.Version))
	}
	err = s.st.Write(ctx, ops...)
	if err == nil {
		return len(todo), nil
	}
	if !errors.Is(err, store.ErrConditionFailed) {
		return 0, records.Err(op, err)
	}
	marked := 0
	for _, t := range todo {
		ok, err := s.markOne(ctx, op, tenant, t.r, t.it)
		if err != nil {
			return marked, err
		}
		if ok {
			marked++
		}
	}
	return marked, nil
}

// markOne sets ReadAt with a conditional write; when another caller marks
// the same receipt concurrently exactly one of them counts it.
//
// A receipt is written only when it is sent and when it is marked read,
// and deleted with its message: a lost write is another caller's mark or
// the deletion, which the reread answers. The bound of table.Conflicts is
// therefore never reached in practice.
func (s *Service) markOne(ctx context.Context, op, tenant string, r vp.Receipt, it store.Item) (bool, error) {
	marked, reread := false, false
	err := table.Conflicts{Op: op, Field: "receiptIds", ID: r.ID}.Retry(ctx, func() error {
		if reread {
			// Only the receipt is read again: the batch read the rest.
			cur, err := s.st.Get(ctx, it.Key)
			if errors.Is(err, store.ErrNotFound) {
				return nil // deleted meanwhile
			}
			if err != nil {
				return records.Err(op, err)
			}
			if r, err = records.Decode[vp.Receipt](op, cur); err != nil {
				return err
			}
			if r.ReadAt != nil {
				return nil
			}
			it = cur
		}
		reread = true
		now := s.nowMS()
		r.ReadAt = &now
		next, err := receipts.Item(op, tenant, r) // read: out of the unread index
		if err != nil {
			return err
		}
		if err := records.Err(op, s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))); err != nil {
			return err
		}
		marked = true
		return nil
	})
	return marked, err
}

// GetMessage returns one message of the tenant.
func (s *Service) GetMessage(ctx context.Context, p vp.Principal, id string) (vp.Message, error) {
	const op = "get_message"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Message{}, err
	}
	if err := vp.CheckName(op, "messageId", id, true); err != nil {
		return vp.Message{}, err
	}
	m, _, err := Messages.Get(ctx, s.st, op, "messageId", id, Key(tenant, id))
	return m, err
}

// DeleteResult reports a deletion.
type DeleteResult struct {
	Deleted         bool `json:"deleted"`
	ReceiptsDeleted int  `json:"receiptsDeleted"`
}

// DeleteMessage deletes a message and all its receipts in one transaction.
// Only the sender, or "system", may delete.
func (s *Service) DeleteMessage(ctx context.Context, p vp.Principal, id, caller string) (DeleteResult, error) {
	const op = "delete_message"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteResult{}, err
	}
	if err := vp.CheckName(op, "messageId", id, true); err != nil {
		return DeleteResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return DeleteResult{}, err
	}
	m, mi, err := Messages.Get(ctx, s.st, op, "messageId", id, Key(tenant, id))
	if err != nil {
		return DeleteResult{}, err
	}
	if who != m.From && who != vp.SystemCaller {
		return DeleteResult{}, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the sender (%q) or system may delete this message", m.From)
	}
	rows, err := records.QueryAll(ctx, s.st, receiptsOf(tenant, id), store.MaxTransactOps-1)
	if err != nil {
		return DeleteResult{}, records.Err(op, err)
	}
	ops := []store.Op{store.Delete(mi.Key, store.IfVersion(mi.Version))}
	for _, r := range rows {
		ops = append(ops, store.Delete(r.Key, store.Always))
	}
	ix, err := s.search.Prepare(ctx, tenant, Kind, id)
	if err != nil {
		return DeleteResult{}, err
	}
	if ops, err = s.search.Add(ctx, s.st, ops, ix); err != nil {
		return DeleteResult{}, records.Err(op, err)
	}
	if err := s.st.Write(ctx, ops...); err != nil {
		return DeleteResult{}, records.Err(op, err)
	}
	s.search.Done(ctx, op, ix)
	return DeleteResult{Deleted: true, ReceiptsDeleted: len(rows)}, nil
}

// ListMessagesInput filters message history.
type ListMessagesInput struct {
	From       string
	Channel    string
	SessionDay *int64
	Params     listing.Params
}

// ListMessages lists message history, newest first.
func (s *Service) ListMessages(ctx context.Context, p vp.Principal, in ListMessagesInput) (listing.Page[any], error) {
	const op = "list_messages"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "from", in.From, false); err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckText(op, "channel", in.Channel, vp.MaxChannelBytes, false); err != nil {
		return listing.Page[any]{}, err
	}
	from := vp.NormalizeOrchestrator(in.From)
	channel := NormalizeChannel(in.Channel)
	q := Messages.Query(tenant, store.GSI3, nil)
	switch {
	case from != "":
		q = Messages.Query(tenant, store.GSI1, table.Values{"from": from})
	case channel != "":
		q = Messages.Query(tenant, store.GSI2, table.Values{"channel": channel})
	case in.SessionDay != nil:
		q = Messages.Query(tenant, store.GSI4, table.Values{"day": itoa64(*in.SessionDay)})
	}
	q.Reverse = true
	binding := op + "\x00" + from + "\x00" + channel
	if in.SessionDay != nil {
		binding += "\x00" + itoa64(*in.SessionDay)
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q,
		LiteKeys: []string{"from", "channel", "createdAt"},
	}, func(it store.Item) (vp.Message, bool, error) {
		m, err := records.Decode[vp.Message](op, it)
		if err != nil {
			return m, false, err
		}
		keep := (channel == "" || m.Channel == channel) &&
			(in.SessionDay == nil || (m.SessionDay != nil && *m.SessionDay == *in.SessionDay))
		return m, keep, nil
	})
}

// ReceiptStatus is one recipient's read state.
type ReceiptStatus struct {
	Recipient           string `json:"recipient"`
	RecipientInstanceID string `json:"recipientInstanceId,omitempty"`
	Read                bool   `json:"read"`
	ReadAt              *int64 `json:"readAt,omitempty"`
}

// BroadcastStatus is list_broadcast_status' single object.
type BroadcastStatus struct {
	MessageID string          `json:"messageId"`
	From      string          `json:"from"`
	Channel   string          `json:"channel,omitempty"`
	CreatedAt int64           `json:"createdAt"`
	ReadCount int             `json:"readCount"`
	Unread    int             `json:"unreadCount"`
	Receipts  []ReceiptStatus `json:"receipts"`
}

// BroadcastStatus reports who has and has not read a message.
func (s *Service) BroadcastStatus(ctx context.Context, p vp.Principal, id string) (BroadcastStatus, error) {
	const op = "list_broadcast_status"
	m, err := s.GetMessage(ctx, p, id)
	if err != nil {
		return BroadcastStatus{}, vp.Wrap(op, vp.KindOf(err), err)
	}
	rows, err := records.QueryAll(ctx, s.st, receiptsOf(p.Tenant, id), 1000)
	if err != nil {
		return BroadcastStatus{}, records.Err(op, err)
	}
	st := BroadcastStatus{MessageID: m.ID, From: m.From, Channel: m.Channel, CreatedAt: m.CreatedAt, Receipts: []ReceiptStatus{}}
	for _, it := range rows {
		r, err := records.Decode[vp.Receipt](op, it)
		if err != nil {
			return BroadcastStatus{}, err
		}
		st.Receipts = append(st.Receipts, ReceiptStatus{Recipient: r.Recipient, RecipientInstanceID: r.RecipientInstanceID, Read: r.ReadAt != nil, ReadAt: r.ReadAt})
		if r.ReadAt != nil {
			st.ReadCount++
		} else {
			st.Unread++
		}
	}
	return st, nil
}
