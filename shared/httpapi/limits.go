package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// bodyDeadline gives every request with a body d to deliver it: a read
// deadline on the connection from the moment the headers are in. It never
// cuts a slow handler's response nor the next request on the connection:
// net/http lifts the deadline itself once the body is read (to watch for
// the client going away) and between requests. A body that misses it
// fails its read (jsonrpcErrors answers 408) and the connection closes.
// Where the connection takes no deadline (Lambda) the gateway in front
// bounds the upload.
func bodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)) // ErrNotSupported: nothing to bound here
		}
		next.ServeHTTP(w, r)
	})
}

// drainBody reads and discards what the handler left of the request body,
// up to max bytes, after flushing its answer. A body refused unread (over
// the limit: 413; without a token: 401) would otherwise still be on its
// way when the server closes the connection: the close resets it, and a
// client still writing gets that reset instead of the answer (most
// clients give up on a failed write and never read the 413). Past max the
// connection is closed as before; the body read deadline (bodyDeadline)
// bounds the time spent. A client that asked for 100-continue has sent
// nothing yet and sends nothing after a final answer: it is not waited for.
func drainBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.Body
		next.ServeHTTP(w, r)
		if body == nil || body == http.NoBody || strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			return
		}
		var one [1]byte
		if n, _ := body.Read(one[:]); n == 0 {
			return // read to the end (or closed) by the handler: nothing left
		}
		_ = http.NewResponseController(w).Flush()
		_, _ = io.CopyN(io.Discard, body, max-1)
	})
}

// isTimeout reports a body read cut by bodyDeadline.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// inFlight counts each token's requests in flight.
type inFlight struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newInFlight(max int) *inFlight { return &inFlight{max: max, n: map[string]int{}} }

// acquire takes one of key's slots; release gives it back.
func (f *inFlight) acquire(key string) (release func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= f.max {
		return nil, false
	}
	f.n[key]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n[key]--; f.n[key] == 0 {
			delete(f.n, key)
		}
	}, true
}
