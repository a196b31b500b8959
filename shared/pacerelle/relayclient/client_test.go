package relayclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

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
