// Package relay is Pacerelle's embedded relay: per-party inboxes of sealed
// envelopes in the store, the HTTP API the bridge and the requester speak
// (Handler), and a WebSocket doorbell that only says "new data at seq N".
//
// The relay is not trusted with content: it stores and forwards envelopes
// (shared/pacerelle/seal) it cannot open, and device public keys and
// device lists that the clients verify themselves (pairing codes, signed
// lists). What it is trusted with is availability and order: each inbox is
// an append-only log with a monotonic sequence, a send carries a
// client-made message id so that a resend is not a second message, and a
// fetch after a cursor returns everything past it (at least once).
package relay

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Limits of the API.
const (
	// MaxEnvelopeBytes fits a stored message (base64 in JSON) in one
	// store item (store.MaxItemBytes); seal's largest envelope is smaller.
	MaxEnvelopeBytes = 280 << 10
	MaxFetch         = 100
	DefaultFetch     = 50
)

// DeviceRec is a registered device: its public keys and, for a person's
// device, the SHA-256 of its credential.
type DeviceRec struct {
	Party    string `json:"party"`
	ID       string `json:"id"`
	Bundle   []byte `json:"bundle"` // JSON seal.Device, verified by the clients
	CredHash string `json:"credHash,omitempty"`
	// PendingWith is the agent whose pairing this person device started
	// and has not confirmed: until then the device only takes pairing
	// steps (it sends nothing), and a new start may replace it. Empty for
	// a confirmed device, a device added by a paired one, an agent's
	// bridge, and devices stored before this field.
	PendingWith string `json:"pendingWith,omitempty"`
	CreatedAt   int64  `json:"createdAt"`
}

// ListRec is a party's latest signed device list (JSON seal.DeviceList).
type ListRec struct {
	Party   string `json:"party"`
	Version uint64 `json:"version"`
	List    []byte `json:"list"`
}

// Head is an inbox's last sequence number.
type Head struct {
	Party string `json:"party"`
	Seq   int64  `json:"seq"`
}

// MessageID maps a sender's client-made id to the sequence it got.
type MessageID struct {
	Party string `json:"party"`
	From  string `json:"from"`
	ID    string `json:"id"`
	Seq   int64  `json:"seq"`
}

// Ack is how far a device has acknowledged its inbox.
type Ack struct {
	Party  string `json:"party"`
	Device string `json:"device"`
	Seq    int64  `json:"seq"`
}

func seqKey(n int64) string { return fmt.Sprintf("%020d", n) }

var (
	devices = table.Declare(table.Schema[DeviceRec]{
		Entity:  "pacerelle device",
		Primary: table.Key{PK: "PRDEV#{party}", SK: "{id}", Pattern: "a party's devices (public keys; a person device's credential hash)"},
		Fields:  func(d DeviceRec) table.Values { return table.Values{"party": d.Party, "id": d.ID} },
	})
	lists = table.Declare(table.Schema[ListRec]{
		Entity:  "pacerelle device list",
		Primary: table.Key{PK: "PRLIST#{party}", SK: "CURRENT", Pattern: "a party's latest signed device list", Note: "replaced only by a higher version"},
		Fields:  func(l ListRec) table.Values { return table.Values{"party": l.Party} },
	})
	pairings = table.Declare(table.Schema[wire.Pairing]{
		Entity:  "pacerelle pairing",
		Primary: table.Key{PK: "PRPAIR#{agent}", SK: "{person}", Pattern: "an agent's paired persons"},
		Indexes: []table.Key{{Index: store.GSI1, PK: "PRPAIRP#{person}", SK: "{agent}", Pattern: "a person's paired agents"}},
		Fields:  func(p wire.Pairing) table.Values { return table.Values{"agent": p.Agent, "person": p.Person} },
	})
	heads = table.Declare(table.Schema[Head]{
		Entity:  "pacerelle inbox head",
		Primary: table.Key{PK: "PRINBOX#{party}", SK: "HEAD", Pattern: "an inbox's last sequence", Note: "advanced under IfVersion with the message it numbers"},
		Fields:  func(h Head) table.Values { return table.Values{"party": h.Party} },
	})
	messages = table.Declare(table.Schema[wire.Message]{
		Entity:  "pacerelle message",
		Primary: table.Key{PK: "PRLOG#{party}", SK: "{seq}", Pattern: "an inbox log after a cursor", Note: "seq = 20 digits; append-only; Envelope is ciphertext"},
		Fields:  func(m wire.Message) table.Values { return table.Values{"party": m.Party, "seq": seqKey(m.Seq)} },
	})
	messageIDs = table.Declare(table.Schema[MessageID]{
		Entity:  "pacerelle message id",
		Primary: table.Key{PK: "PRMID#{party}", SK: "{from}#{id}", Pattern: "idempotent send: a sender's client-made id in an inbox"},
		Fields:  func(m MessageID) table.Values { return table.Values{"party": m.Party, "from": m.From, "id": m.ID} },
	})
	conversations = table.Declare(table.Schema[wire.Conversation]{
		Entity:  "pacerelle conversation",
		Primary: table.Key{PK: "PRCONV#{party}", SK: "{id}", Pattern: "the conversations of an inbox"},
		Fields:  func(c wire.Conversation) table.Values { return table.Values{"party": c.Party, "id": c.ID} },
	})
	acks = table.Declare(table.Schema[Ack]{
		Entity:  "pacerelle ack",
		Primary: table.Key{PK: "PRACK#{party}", SK: "{device}", Pattern: "how far each device acknowledged its inbox", Note: "only moves forward"},
		Fields:  func(a Ack) table.Values { return table.Values{"party": a.Party, "device": a.Device} },
	})
)

// Tables describes the relay's keys for shared/store/KEYS.md.
func Tables() []table.Doc {
	return []table.Doc{devices.Doc(), lists.Doc(), pairings.Doc(), heads.Doc(), messages.Doc(), messageIDs.Doc(), conversations.Doc(), acks.Doc(), conns.Doc(), connIDs.Doc(), pairingLimits.Doc()}
}

// Resolver turns a VantagePeers bearer token into a principal
// (auth.Tokens).
type Resolver interface {
	Resolve(ctx context.Context, secret string) (vp.Principal, error)
}

// Options configures a Relay.
type Options struct {
	Store  store.Store
	Tokens Resolver
	Logger *slog.Logger
	Now    func() time.Time
	// Jobs and Pusher, when set, ring the doorbells of a WebSocket API
	// outside this process (push.go): each append commits a ring job,
	// run right after the commit. Without them only the doorbells of this
	// process's Handler are rung.
	Jobs   Jobs
	Pusher Pusher
	// Limits bounds pairing starts and failed pairing steps (zero fields:
	// DefaultLimits).
	Limits Limits
}

// Relay is the service behind the HTTP API.
type Relay struct {
	st     store.Store
	tokens Resolver
	log    *slog.Logger
	now    func() time.Time
	bell   doorbell
	jobs   Jobs
	pusher Pusher
	limits Limits
}

// New returns a Relay.
func New(o Options) *Relay {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Relay{st: o.Store, tokens: o.Tokens, log: o.Logger, now: o.Now, bell: doorbell{subs: map[string]map[chan int64]struct{}{}},
		jobs: o.Jobs, pusher: o.Pusher, limits: o.Limits.withDefaults()}
}

// doorbell rings the subscribers of an inbox in this process.
type doorbell struct {
	mu   sync.Mutex
	subs map[string]map[chan int64]struct{}
}

func (d *doorbell) subscribe(inbox string) (chan int64, func()) {
	ch := make(chan int64, 1)
	d.mu.Lock()
	if d.subs[inbox] == nil {
		d.subs[inbox] = map[chan int64]struct{}{}
	}
	d.subs[inbox][ch] = struct{}{}
	d.mu.Unlock()
	return ch, func() {
		d.mu.Lock()
		delete(d.subs[inbox], ch)
		d.mu.Unlock()
	}
}

func (d *doorbell) ring(inbox string, seq int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ch := range d.subs[inbox] {
		select { // keep only the newest number
		case <-ch:
		default:
		}
		ch <- seq
	}
}

// append adds one message to an inbox, or returns the sequence the same
// sender's id already got there.
func (r *Relay) append(ctx context.Context, tenant string, m wire.Message) (seq int64, dup bool, err error) {
	const op = "pacerelle.send"
	idKey := messageIDs.KeyOf(tenant, table.Values{"party": m.Party, "from": m.From, "id": m.ID})
	var ring outbox.Pending
	err = table.Retry(ctx, op, "id", m.ID, func() error {
		prev, _, err := records.Get[MessageID](ctx, r.st, op, "id", m.ID, idKey)
		if err == nil {
			seq, dup = prev.Seq, true
			return nil
		}
		if !vp.IsKind(err, vp.KindNotFound) {
			return err
		}
		hk := heads.KeyOf(tenant, table.Values{"party": m.Party})
		head, hit, err := records.Get[Head](ctx, r.st, op, "inbox", m.Party, hk)
		cond := store.IfVersion(hit.Version)
		if vp.IsKind(err, vp.KindNotFound) {
			head, cond, err = Head{Party: m.Party}, store.IfNotExists, nil
		}
		if err != nil {
			return err
		}
		head.Seq++
		m.Seq, m.At = head.Seq, r.now().UnixMilli()
		items := make([]store.Op, 0, 4)
		for _, build := range []func() (store.Item, error){
			func() (store.Item, error) { return heads.Item(op, tenant, head) },
			func() (store.Item, error) { return messages.Item(op, tenant, m) },
			func() (store.Item, error) {
				return messageIDs.Item(op, tenant, MessageID{Party: m.Party, From: m.From, ID: m.ID, Seq: m.Seq})
			},
		} {
			it, err := build()
			if err != nil {
				return err
			}
			c := store.IfNotExists
			if len(items) == 0 {
				c = cond
			}
			items = append(items, store.Put(it, c))
		}
		conv, err := conversations.Item(op, tenant, wire.Conversation{Party: m.Party, ID: m.Conversation, LastSeq: m.Seq, At: m.At})
		if err != nil {
			return err
		}
		items = append(items, store.Put(conv, store.Always))
		// The ring commits with the message it announces: one job per
		// (inbox, seq) by construction — the head's condition lets one
		// transaction number seq — and none for a resent id (dup above).
		if ring, err = r.ringOps(ctx, tenant, m.Party, m.Seq); err != nil {
			return err
		}
		items = append(items, ring.Ops()...)
		if err := r.st.Write(ctx, items...); err != nil {
			return err
		}
		seq, dup = m.Seq, false
		return nil
	})
	if err == nil && !dup {
		r.bell.ring(tenant+"/"+m.Party, seq)
		if r.jobs != nil {
			r.jobs.RunInline(ctx, ring)
		}
	}
	return seq, dup, err
}

// fetch returns up to limit messages of an inbox after a sequence.
func (r *Relay) fetch(ctx context.Context, tenant, party string, after int64, limit int) ([]wire.Message, bool, error) {
	q := messages.Query(tenant, store.Primary, table.Values{"party": party})
	q.SKFrom = seqKey(after + 1)
	q.Limit = limit + 1
	rows, err := r.st.Query(ctx, q)
	if err != nil {
		return nil, false, records.Err("pacerelle.fetch", err)
	}
	out := make([]wire.Message, 0, len(rows))
	for _, it := range rows[:min(len(rows), limit)] {
		m, err := records.Decode[wire.Message]("pacerelle.fetch", it)
		if err != nil {
			return nil, false, err
		}
		out = append(out, m)
	}
	return out, len(rows) > limit, nil
}

func (r *Relay) head(ctx context.Context, tenant, party string) (int64, error) {
	h, _, err := records.Get[Head](ctx, r.st, "pacerelle.head", "inbox", party, heads.KeyOf(tenant, table.Values{"party": party}))
	if vp.IsKind(err, vp.KindNotFound) {
		return 0, nil
	}
	return h.Seq, err
}

// ack moves a device's acknowledgement forward (never back).
func (r *Relay) ack(ctx context.Context, tenant, party, device string, seq int64) (int64, error) {
	const op = "pacerelle.ack"
	k := acks.KeyOf(tenant, table.Values{"party": party, "device": device})
	var now int64
	err := table.Retry(ctx, op, "seq", strconv.FormatInt(seq, 10), func() error {
		cur, it, err := records.Get[Ack](ctx, r.st, op, "device", device, k)
		cond := store.IfVersion(it.Version)
		if vp.IsKind(err, vp.KindNotFound) {
			cur, cond, err = Ack{Party: party, Device: device}, store.IfNotExists, nil
		}
		if err != nil {
			return err
		}
		if seq <= cur.Seq {
			now = cur.Seq
			return nil
		}
		cur.Seq, now = seq, seq
		item, err := acks.Item(op, tenant, cur)
		if err != nil {
			return err
		}
		return r.st.Write(ctx, store.Put(item, cond))
	})
	return now, err
}

// pairingOf is the pairing record between two parties (an agent and a
// person, in either order), confirmed or not.
func (r *Relay) pairingOf(ctx context.Context, op, tenant, a, b string) (wire.Pairing, bool, error) {
	agent, person := a, b
	if isPerson(a) {
		agent, person = b, a
	}
	p, _, err := records.Get[wire.Pairing](ctx, r.st, op, "to", person, pairings.KeyOf(tenant, table.Values{"agent": agent, "person": person}))
	if vp.IsKind(err, vp.KindNotFound) {
		return p, false, nil
	}
	return p, err == nil, err
}

// missingStep names the step a pairing that is not confirmed still needs.
func missingStep(p wire.Pairing) string {
	switch {
	case p.Version == seal.PairingVersion && p.AgentNonce == nil:
		return "the agent's answer (its bridge answers the device's commitment)"
	case p.Version == seal.PairingVersion && p.PersonNonce == nil:
		return "the device's reveal (POST /pacerelle/v1/pairings/reveal)"
	default:
		return "the device's confirmation (POST /pacerelle/v1/pairings/confirm, once the person saw the same code on both screens)"
	}
}

func isPerson(party string) bool { return len(party) > 7 && party[:7] == "person:" }
