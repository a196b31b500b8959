package webhooks

import (
	"errors"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// seenFor is how long a delivery id is remembered: GitHub redelivers a
// delivery up to 30 days after it was first sent.
const seenFor = 30 * 24 * time.Hour

// seenRecord is what remembers a delivery. The key is what matters; the
// data says what the delivery was, for whoever reads the table.
type seenRecord struct {
	ID         string `json:"-"`
	Event      string `json:"event"`
	Action     string `json:"action,omitempty"`
	HookID     string `json:"hookId,omitempty"`
	ReceivedAt int64  `json:"receivedAt"` // Unix ms
	ExpiresAt  int64  `json:"-"`
}

var seen = table.Declare(table.Schema[seenRecord]{
	Entity: "GitHub webhook delivery",
	Primary: table.Key{PK: "GHDELIVERY#{id}", SK: "SEEN", Pattern: "webhook delivery id (dedup of redeliveries)",
		Note: "TTL: 30 days after receipt (GitHub redelivers up to 30 days back); written with what the delivery changed"},
	Fields:  func(r seenRecord) table.Values { return table.Values{"id": r.ID} },
	Expires: func(r seenRecord) int64 { return r.ExpiresAt },
})

// Tables declares the package's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{seen.Doc()} }

// Seen is the write that records d as handled: a put of its dedup record
// under store.IfNotExists, expiring 30 days after d.ReceivedAt. Commit it
// in the same store.Write as what the delivery changes; that Write then
// fails with a *store.ConditionError on this op when d was handled before
// (IsRedelivery), and nothing is written twice.
//
// A Delivery built by hand (a test, a replay) may have no ReceivedAt: the
// record then expires 30 days from now, which is all the window needs.
func (d Delivery) Seen() (store.Op, error) {
	const op = "webhooks.Seen"
	if !vp.ValidTenant(d.Tenant) {
		return store.Op{}, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", d.Tenant)
	}
	if !validDeliveryID(d.ID) {
		return store.Op{}, vp.Errorf(op, vp.KindInvalid, "id", "%q is not a GitHub delivery id", d.ID)
	}
	at := d.ReceivedAt
	if at.IsZero() {
		at = time.Now()
	}
	it, err := seen.Item(op, d.Tenant, seenRecord{ID: d.ID, Event: d.Event, Action: d.Action, HookID: d.HookID,
		ReceivedAt: at.UnixMilli(), ExpiresAt: at.Add(seenFor).Unix()})
	if err != nil {
		return store.Op{}, err
	}
	return store.Put(it, store.IfNotExists), nil
}

// IsRedelivery reports whether err is the failed condition of d.Seen()'s
// op: d was handled before. A condition that failed on another item of
// the same Write is not a redelivery (it is the Dispatcher's own conflict).
func IsRedelivery(err error, d Delivery) bool {
	var ce *store.ConditionError
	if !errors.As(err, &ce) || d.Tenant == "" || d.ID == "" {
		return false
	}
	return ce.Key == seen.KeyOf(d.Tenant, table.Values{"id": d.ID})
}
