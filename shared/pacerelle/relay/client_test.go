package relay

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// TestDoorbellPingsASilentServer: against a WebSocket server that never
// sends anything (as API Gateway pushes nothing without a ring), the
// client pings every PingEvery, so that the API's 10-minute idle timeout
// never closes a quiet connection, and replaces the connection at its age.
func TestDoorbellPingsASilentServer(t *testing.T) {
	var pings, conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conns.Add(1)
		for {
			_, b, err := conn.Read(r.Context())
			if err != nil {
				return
			}
			if strings.Contains(string(b), "ping") {
				pings.Add(1)
			}
		}
	}))
	defer srv.Close()
	c := &Client{WSURL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: "t", PingEvery: 40 * time.Millisecond, MaxConnAge: 500 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	err := c.Doorbell(ctx, func() {}, func(int64) {})
	if ctx.Err() == nil {
		t.Fatalf("the doorbell ended before its context: %v", err)
	}
	// 1.2 s at one ping per 40 ms, and one at each connect: about 30.
	if n := pings.Load(); n < 15 {
		t.Errorf("%d pings in 1.2 s, want one every 40 ms", n)
	}
	if n := conns.Load(); n < 2 || n > 4 {
		t.Errorf("%d connections in 1.2 s with a 500 ms age, want 3", n)
	}
}

// TestDoorbellEndsOnAnUnknownConnection: a WebSocket API that answers a
// ping with an error (its row of the connection is gone) ends the
// connection, for the caller to reconnect; a message that is not a ring
// rings nothing.
func TestDoorbellEndsOnAnUnknownConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		if _, _, err := conn.Read(r.Context()); err != nil {
			return
		}
		_ = conn.Write(r.Context(), websocket.MessageText, []byte(`not json`))
		_ = conn.Write(r.Context(), websocket.MessageText, []byte(`{"seq":-1,"error":"unknown connection; reconnect"}`))
		_, _, _ = conn.Read(r.Context())
	}))
	defer srv.Close()
	c := &Client{WSURL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: "t"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rings atomic.Int32
	err := c.Doorbell(ctx, func() {}, func(int64) { rings.Add(1) })
	if err == nil || !strings.Contains(err.Error(), "unknown connection") || ctx.Err() != nil || rings.Load() != 0 {
		t.Fatalf("doorbell: %v (ctx %v), %d rings", err, ctx.Err(), rings.Load())
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
	c := &Client{WSURL: base + "agent-tok"}
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
	bad := &Client{WSURL: base + "nope"}
	var ae *APIError
	if err := bad.Doorbell(ctx, func() { t.Error("connected with a bad token") }, func(int64) {}); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("bad token in the query: %v", err)
	}
}
