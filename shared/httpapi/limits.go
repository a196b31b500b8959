package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
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

// flights are the per-token budgets of requests: calls in flight, and
// calls waiting (wait_for_activity), counted apart.
type flights struct {
	calls, waits *inFlight
}

func newFlights(o Options) flights {
	return flights{calls: newInFlight(o.MaxConcurrentPerToken), waits: newInFlight(o.MaxWaitsPerToken)}
}

// waitSlot is one request's mcpserver.WaitSlot: Hold takes a waiting slot
// of its token and gives its request slot back, so that a call that holds
// for seconds does not count among the requests in flight.
type waitSlot struct {
	key     string
	waits   *inFlight
	mu      sync.Mutex
	release func() // the request slot, until handed back
}

func (w *waitSlot) Hold() (func(), error) {
	rel, ok := w.waits.acquire(w.key)
	if !ok {
		e := vp.Errorf("wait_for_activity", vp.KindRateLimited, "timeoutMs",
			"this token already has %d calls of wait_for_activity waiting, the limit of waiting calls per token: one waiter per agent is enough "+
				"(pass since from its answer); retry when one returns, or call with timeoutMs 0 to look without waiting", w.waits.max)
		e.RetryAfter = time.Second
		return nil, e
	}
	w.done()
	return rel, nil
}

// done gives the request slot back, once.
func (w *waitSlot) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.release != nil {
		w.release()
		w.release = nil
	}
}
