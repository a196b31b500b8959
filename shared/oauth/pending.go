package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A client that registered itself (or was created from its metadata
// document) is pending until a person approves an authorization for it or
// an admin elevates it: its item carries a TTL (Options.PendingClientTTL),
// so one that is never used disappears by itself on both stores, and the
// pending clients are capped (Options.MaxPendingClients) so that an
// outsider cannot fill the table.
//
// The cap is counted in the store, one counter per hour of registration:
// the clients pending now are those of the last TTL's hours, counted
// without reading a client. A registration adds one to its hour's counter
// in the transaction that stores the client, conditionally on the
// counter's version, so concurrent registrations (on any instance) cannot
// overshoot; a client leaving the pending state takes one off its hour's
// counter in the transaction that clears its TTL. Counters of a whole hour
// are kept one hour past the TTL, so the count errs on the side of
// refusing: a client that expired in the last hour may still be counted.

// Defaults of the pending clients.
const (
	DefaultMaxPendingClients = 1000
	DefaultPendingClientTTL  = 24 * time.Hour
)

// pendingHour is the count of pending clients registered in one hour.
type pendingHour struct {
	hour    int64 // Unix hours
	n       int
	expires int64
}

var pendingHours = table.Declare(table.Schema[pendingHour]{
	Entity:  "pending OAuth clients of an hour",
	Global:  true,
	Primary: table.Key{PK: "OAUTHPENDING", SK: "{hour}", Pattern: "count of clients registered in an hour that have not completed an authorization", Note: "conditional counter for the cap of pending clients; `<hour>` is Unix hours, 10 digits; TTL one hour past the clients'"},
	Fields:  func(p pendingHour) table.Values { return table.Values{"hour": fmt.Sprintf("%010d", p.hour)} },
	Encode:  func(p pendingHour) ([]byte, error) { return json.Marshal(p.n) },
	Expires: func(p pendingHour) int64 { return p.expires },
})

func hourOf(ms int64) int64 { return ms / time.Hour.Milliseconds() }

func (s *Server) pendingHourItem(hour int64, n int) store.Item {
	exp := time.UnixMilli((hour + 1) * time.Hour.Milliseconds()).Add(s.pending.ttl + time.Hour).Unix()
	return itemOf(pendingHours, pendingHour{hour: hour, n: n, expires: exp})
}

// pendingCount returns how many clients are pending now, and the counter
// of the current hour (zero Version: none yet) with its count.
func (s *Server) pendingCount(ctx context.Context) (total int, cur store.Item, curN int, err error) {
	now := s.nowMS()
	from := hourOf(now - s.pending.ttl.Milliseconds())
	q := pendingHours.Query("", store.Primary, nil)
	q.SKFrom = fmt.Sprintf("%010d", from)
	rows, err := records.QueryAll(ctx, s.st, q, 10_000)
	if err != nil {
		return 0, cur, 0, err
	}
	curHour := fmt.Sprintf("%010d", hourOf(now))
	for _, it := range rows {
		var n int
		if err := json.Unmarshal(it.Data, &n); err != nil {
			return 0, cur, 0, err
		}
		total += n
		if it.Key.SK == curHour {
			cur, curN = it, n
		}
	}
	return total, cur, curN, nil
}

// errPendingCap is the refusal of a client past the cap.
func (s *Server) errPendingCap(op string) error {
	return vp.Errorf(op, vp.KindRateLimited, "client_id",
		"the server already holds %d clients that have not completed an authorization, the limit of %d pending clients; unused clients expire %s after registration: retry later",
		s.pending.max, s.pending.max, s.pending.ttl)
}

// admitPending makes c pending and returns the write that counts it, or a
// KindRateLimited error past the cap. The write is conditional on the
// counter: a concurrent registration makes the caller's transaction fail
// with ErrConditionFailed, and the caller retries.
func (s *Server) admitPending(ctx context.Context, op string, c *Client) (store.Op, error) {
	total, cur, n, err := s.pendingCount(ctx)
	if err != nil {
		return store.Op{}, vp.Wrap(op, vp.KindUnavailable, err)
	}
	if total >= s.pending.max {
		return store.Op{}, s.errPendingCap(op)
	}
	c.PendingUntil = c.CreatedAt + s.pending.ttl.Milliseconds()
	cond := store.IfNotExists
	if cur.Version != 0 {
		cond = store.IfVersion(cur.Version)
	}
	return store.Put(s.pendingHourItem(hourOf(s.nowMS()), n+1), cond), nil
}

// leavePending clears c's TTL (the caller writes c) and returns the write
// that takes it off its hour's counter, if that counter is still there.
func (s *Server) leavePending(ctx context.Context, c *Client) ([]store.Op, error) {
	if c.PendingUntil == 0 {
		return nil, nil
	}
	c.PendingUntil = 0
	hour := hourOf(c.CreatedAt)
	it, err := s.st.Get(ctx, pendingHours.KeyOf("", table.Values{"hour": fmt.Sprintf("%010d", hour)}))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var n int
	if err := json.Unmarshal(it.Data, &n); err != nil {
		return nil, err
	}
	it.Data, _ = json.Marshal(max(0, n-1))
	return []store.Op{store.Put(it, store.IfVersion(it.Version))}, nil
}

// settleOps are the writes that take a pending client out of the pending
// state when a person approves an authorization for it: none when it is
// not pending (or is gone).
func (s *Server) settleOps(ctx context.Context, id string) ([]store.Op, error) {
	c, it, err := s.loadClient(ctx, id)
	if vp.IsKind(err, vp.KindNotFound) {
		return nil, nil
	}
	if err != nil || c.PendingUntil == 0 {
		return nil, err
	}
	ops, err := s.leavePending(ctx, &c)
	if err != nil {
		return nil, err
	}
	c.AuthorizedAt = s.nowMS()
	return append(ops, store.Put(s.clientItem(c), store.IfVersion(it.Version))), nil
}
