package relay

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
)

// TestDoorbellReplacesAgedConnections: a connection is replaced when it
// reaches MaxConnAge (API Gateway ends one at 2 hours; here 300 ms), the
// new one is announced, and a send after the replacement still rings.
func TestDoorbellReplacesAgedConnections(t *testing.T) {
	f := newFixture(t)
	c := *f.ac
	c.MaxConnAge, c.PingEvery = 300*time.Millisecond, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var connects atomic.Int32
	rings := make(chan int64, 100)
	done := make(chan error, 1)
	go func() { done <- c.Doorbell(ctx, func() { connects.Add(1) }, func(s int64) { rings <- s }) }()
	deadline := time.After(10 * time.Second)
	for connects.Load() < 3 {
		select {
		case err := <-done:
			t.Fatalf("the doorbell ended after %d connections: %v", connects.Load(), err)
		case <-deadline:
			t.Fatalf("%d connections in 10 s, want 3 (replaced every 300 ms)", connects.Load())
		case <-time.After(10 * time.Millisecond):
		}
	}
	f.request(t, "r1", "c1", "x")
	for {
		select {
		case s := <-rings:
			if s == 1 {
				cancel()
				if err := <-done; err == nil || ctx.Err() == nil {
					t.Fatalf("doorbell end: %v", err)
				}
				return
			}
		case err := <-done:
			t.Fatalf("the doorbell ended: %v", err)
		case <-deadline:
			t.Fatal("no ring after the replacements")
		}
	}
}

// TestDoorbellCredentialInTheQuery: a browser's WebSocket cannot set
// headers: the embedded doorbell takes the device credential as
// ?access_token=, as the WebSocket API's $connect does, and refuses a
// bad one.
func TestDoorbellCredentialInTheQuery(t *testing.T) {
	f := newFixture(t)
	f.request(t, "r1", "c1", "x")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	base := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/pacerelle/v1/doorbell?agent=bot&access_token="
	c := &relayclient.Client{WSURL: base + "agent-tok"}
	got := make(chan int64, 1)
	go func() { _ = c.Doorbell(ctx, func() {}, func(s int64) { got <- s }) }()
	select {
	case s := <-got:
		if s != 1 {
			t.Fatalf("head %d, want 1", s)
		}
	case <-ctx.Done():
		t.Fatal("no ring with the credential in the query")
	}
	bad := &relayclient.Client{WSURL: base + "nope"}
	var ae *relayclient.APIError
	if err := bad.Doorbell(ctx, func() { t.Error("connected with a bad token") }, func(int64) {}); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("bad token in the query: %v", err)
	}
}
