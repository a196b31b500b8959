package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The doorbell served by a WebSocket API outside this process (API Gateway
// on AWS): the API holds the connections, the relay keeps one row per
// connection and rings them through Pusher. A ring is a side effect
// outside the store, so a send commits it as an outbox job (TopicRing) in
// the transaction that appends the message, and runs it right after its
// commit (RunInline); the committed job is the retry.

// TopicRing is the outbox topic of a ring: "inbox P has data up to N".
const TopicRing = "pacerelle.ring"

// Limits of pushed doorbells.
const (
	// MaxConnAge is how long a connection row is kept: API Gateway ends a
	// WebSocket connection after 2 hours; the extra 10 minutes cover a
	// clock skew and a late $disconnect. The TTL is the backstop of a
	// $disconnect that never came.
	MaxConnAge = 2*time.Hour + 10*time.Minute
	// MaxPushBytes is the largest ring pushed: an API Gateway WebSocket
	// frame is at most 32 KB; a ring is a few bytes.
	MaxPushBytes = 32 << 10
	// MaxConnsPerInbox bounds the connections one ring reaches (an agent's
	// bridge, a person's devices, a few tabs each).
	MaxConnsPerInbox = 100
)

// ErrGone is what a Pusher returns for a connection that no longer exists
// (API Gateway's 410 GoneException): its row is deleted.
var ErrGone = errors.New("pacerelle: the connection is gone")

// Pusher sends data to one connection of the WebSocket API.
type Pusher interface {
	Push(ctx context.Context, connectionID string, data []byte) error
}

// Jobs is the part of the outbox a send needs (*outbox.Outbox).
type Jobs interface {
	EnqueueInline(ctx context.Context, tenant, topic string, payload []byte) (outbox.Pending, error)
	RunInline(ctx context.Context, p ...outbox.Pending)
}

// Conn is one WebSocket connection following an inbox.
type Conn struct {
	Tenant    string `json:"tenant"`
	Party     string `json:"party"`
	ID        string `json:"id"` // API Gateway's connectionId
	Device    string `json:"device"`
	At        int64  `json:"at"`
	ExpiresAt int64  `json:"expiresAt"` // Unix seconds
}

var conns = table.Declare(table.Schema[Conn]{
	Entity:  "pacerelle connection",
	Primary: table.Key{PK: "PRCONN#{party}", SK: "{id}", Pattern: "the WebSocket connections following an inbox (pushed rings)", Note: "TTL: 2 h 10 min, API Gateway's connection limit"},
	Fields:  func(c Conn) table.Values { return table.Values{"party": c.Party, "id": c.ID} },
	Expires: func(c Conn) int64 { return c.ExpiresAt },
})

// connIDs finds a connection by its id alone: the $disconnect and
// $default events name no tenant. It is written and deleted with the
// connection's row, in one transaction, and read consistently (an index
// would lag the $connect that just wrote it).
var connIDs = table.Declare(table.Schema[Conn]{
	Entity: "pacerelle connection id",
	Global: true,
	Primary: table.Key{PK: "PRCONNID#{id}", SK: "CONN", Pattern: "a connection by its API Gateway id ($disconnect, $default)",
		Note: "no tenant in the key: the event has none; the row names it. TTL as the connection's"},
	Fields:  func(c Conn) table.Values { return table.Values{"id": c.ID} },
	Expires: func(c Conn) int64 { return c.ExpiresAt },
})

// ringJob is a ring's outbox payload.
type ringJob struct {
	Party string `json:"party"`
	Seq   int64  `json:"seq"`
}

// Wire registers the ring handler on the outbox whose jobs the relay
// enqueues (Options.Jobs).
func (r *Relay) Wire(ob *outbox.Outbox) error { return ob.Handle(TopicRing, r.RingJob) }

// ringOps returns the ring job committed with the message at seq, when
// rings are pushed.
func (r *Relay) ringOps(ctx context.Context, tenant, party string, seq int64) (outbox.Pending, error) {
	if r.jobs == nil {
		return outbox.Pending{}, nil
	}
	b, _ := json.Marshal(ringJob{Party: party, Seq: seq})
	return r.jobs.EnqueueInline(ctx, tenant, TopicRing, b)
}

// ringPairing returns the ring committed with a pairing started or
// confirmed: the agent's bridge syncs its pairings on a ring, so it shows
// a started pairing's code while the person compares it. The ring says
// the inbox head, which fetches nothing new.
func (r *Relay) ringPairing(ctx context.Context, tenant, agent string) (outbox.Pending, error) {
	head, err := r.head(ctx, tenant, agent)
	if err != nil {
		return outbox.Pending{}, err
	}
	return r.ringOps(ctx, tenant, agent, head)
}

// rangPairing rings the agent's doorbells once the pairing committed.
func (r *Relay) rangPairing(ctx context.Context, tenant, agent string, ring outbox.Pending) {
	head, err := r.head(ctx, tenant, agent)
	if err != nil {
		return // the committed job, or the bridge's poll, still rings
	}
	r.bell.ring(tenant+"/"+agent, head)
	if r.jobs != nil {
		r.jobs.RunInline(ctx, ring)
	}
}

// RingJob pushes {"seq":N} to every connection of the inbox. Rings are
// idempotent — a client fetches after its own cursor, so a second ring of
// the same N fetches nothing — which is why a retry may ring again the
// connections that had it: duplicates are bounded by the job's attempts.
// A gone connection loses its row; any other failure retries the job.
func (r *Relay) RingJob(ctx context.Context, j outbox.Job) error {
	const op = "pacerelle.ring"
	var rj ringJob
	if err := json.Unmarshal(j.Payload, &rj); err != nil {
		return outbox.Permanent(err)
	}
	if r.pusher == nil {
		return outbox.Permanent(errors.New("no pusher is configured in this process"))
	}
	rows, err := r.st.Query(ctx, func() store.Query {
		q := conns.Query(j.Tenant, store.Primary, table.Values{"party": rj.Party})
		q.Limit = MaxConnsPerInbox
		return q
	}())
	if err != nil {
		return records.Err(op, err)
	}
	data, _ := json.Marshal(wire.Ring{Seq: rj.Seq})
	if len(data) > MaxPushBytes {
		return outbox.Permanent(fmt.Errorf("a ring of %d bytes is over the %d-byte frame limit", len(data), MaxPushBytes))
	}
	var errs []error
	for _, it := range rows {
		c, err := records.Decode[Conn](op, it)
		if err != nil {
			return err
		}
		switch err := r.pusher.Push(ctx, c.ID, data); {
		case errors.Is(err, ErrGone):
			if err := r.st.Write(ctx, store.Delete(it.Key, store.Always), store.Delete(connIDs.Key("", c), store.Always)); err != nil {
				errs = append(errs, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("connection %s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}

// Connect authenticates a new WebSocket connection ($connect) as the
// relay's HTTP API does — a bearer (agent token with the agent header, or
// a device credential) in the headers, or, for a browser that cannot set
// them, the query parameters access_token and agent — and records it
// under the caller's inbox. It returns the HTTP status to answer.
func (r *Relay) Connect(ctx context.Context, h http.Header, query map[string]string, connectionID string) (int, error) {
	const op = "pacerelle.connect"
	q := url.Values{}
	for k, v := range query {
		q.Set(k, v)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/?"+q.Encode(), nil)
	if h != nil {
		req.Header = h.Clone()
	}
	var c caller
	var err error
	queryCredentials(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { c, err = r.authenticate(req) })).ServeHTTP(nil, req)
	if err == nil && c.party == "" {
		err = vp.E(op, vp.KindForbidden, wire.AgentHeader, "name the agent whose inbox to watch")
	}
	if err == nil && c.pendingWith != "" {
		err = r.refusePending(ctx, c)
	}
	if err == nil && connectionID == "" {
		err = vp.E(op, vp.KindInvalid, "connectionId", "is required")
	}
	if err != nil {
		return statusOf(err), err
	}
	now := r.now()
	cn := Conn{Tenant: c.tenant, Party: c.party, ID: connectionID, Device: c.device, At: now.UnixMilli(), ExpiresAt: now.Add(MaxConnAge).Unix()}
	it, err := conns.Item(op, c.tenant, cn)
	byID, err2 := connIDs.Item(op, "", cn)
	if err = errors.Join(err, err2); err == nil {
		err = r.st.Write(ctx, store.Put(it, store.Always), store.Put(byID, store.Always))
	}
	if err != nil {
		return http.StatusInternalServerError, records.Err(op, err)
	}
	return http.StatusOK, nil
}

// Disconnect deletes a connection's rows ($disconnect). It is best
// effort: the rows' TTL and the 410 of the next ring are the backstops.
func (r *Relay) Disconnect(ctx context.Context, connectionID string) error {
	const op = "pacerelle.disconnect"
	c, found, err := r.connByID(ctx, op, connectionID)
	if err != nil || !found {
		return err
	}
	return records.Err(op, r.st.Write(ctx, store.Delete(conns.Key(c.Tenant, c), store.Always), store.Delete(connIDs.Key("", c), store.Always)))
}

func (r *Relay) connByID(ctx context.Context, op, connectionID string) (Conn, bool, error) {
	if connectionID == "" {
		return Conn{}, false, nil
	}
	c, _, err := records.Get[Conn](ctx, r.st, op, "connectionId", connectionID, connIDs.KeyOf("", table.Values{"id": connectionID}))
	if vp.IsKind(err, vp.KindNotFound) {
		return Conn{}, false, nil
	}
	return c, err == nil, err
}

// Ping answers a message on a connection ($default) with the inbox's
// head, {"seq":N}: the client's heartbeat within the API's 10-minute idle
// timeout, and how a fresh connection learns the head (API Gateway cannot
// push from $connect).
func (r *Relay) Ping(ctx context.Context, connectionID string) ([]byte, error) {
	const op = "pacerelle.ping"
	c, found, err := r.connByID(ctx, op, connectionID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, vp.E(op, vp.KindNotFound, "connectionId", "this connection is not (or no longer) known; reconnect")
	}
	seq, err := r.head(ctx, c.Tenant, c.Party)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire.Ring{Seq: seq})
}

func statusOf(err error) int {
	switch vp.KindOf(err) {
	case vp.KindUnauthorized:
		return http.StatusUnauthorized
	case vp.KindForbidden:
		return http.StatusForbidden
	case vp.KindInvalid:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// Pusher returns the pusher rings go through (nil: only this process's
// doorbells are rung).
func (r *Relay) Pusher() Pusher { return r.pusher }
