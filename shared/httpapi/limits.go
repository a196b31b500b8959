package httpapi

import (
	"errors"
	"net/http"
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
