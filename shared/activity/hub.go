package activity

import (
	"context"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// Hub counts the commits this process knows of and wakes whoever waits
// for the next one. A waiter reads Version before it checks the store and
// waits on Changed(version) after: a commit between the two is never lost.
type Hub struct {
	mu      sync.Mutex
	version uint64
	next    chan struct{} // closed at the next Bump
}

// NewHub returns a Hub at version 0.
func NewHub() *Hub { return &Hub{next: make(chan struct{})} }

// Version is the number of commits seen so far.
func (h *Hub) Version() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version
}

// Bump records a commit and wakes every waiter.
func (h *Hub) Bump() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.version++
	close(h.next)
	h.next = make(chan struct{})
}

// Changed returns a channel closed once the version is past v (already
// closed when it is).
func (h *Hub) Changed(v uint64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.version != v {
		return closedChan
	}
	return h.next
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Notifying returns st with every successful write told to h: the store the
// modules built after the activity module write through, so that a
// send_message or a task change wakes this process's waiters at once,
// without polling. It keeps st's LargeTransactor (store.AsLargeTransactor).
func Notifying(st store.Store, h *Hub) store.Store {
	n := notifying{Store: st, hub: h}
	if lt, ok := store.AsLargeTransactor(st); ok {
		return notifyingLarge{notifying: n, lt: lt}
	}
	return n
}

type notifying struct {
	store.Store
	hub *Hub
}

func (n notifying) Write(ctx context.Context, ops ...store.Op) error {
	err := n.Store.Write(ctx, ops...)
	if err == nil {
		n.hub.Bump()
	}
	return err
}

type notifyingLarge struct {
	notifying
	lt store.LargeTransactor
}

func (n notifyingLarge) TransactLarge(ctx context.Context, ops []store.Op) error {
	err := n.lt.TransactLarge(ctx, ops)
	if err == nil {
		n.hub.Bump()
	}
	return err
}
