package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadlineSparesSlowHandlers: once the body is in, a handler may
// take longer than the body deadline: its context is not cancelled and
// its answer arrives; the next request on the kept-alive connection too.
func TestBodyDeadlineSparesSlowHandlers(t *testing.T) {
	const d = 200 * time.Millisecond
	srv := httptest.NewServer(bodyDeadline(d, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		select {
		case <-time.After(3 * d):
		case <-r.Context().Done():
			http.Error(w, "cancelled", 500)
			return
		}
		_, _ = io.WriteString(w, "done")
	})))
	defer srv.Close()
	for i := range 2 {
		res, err := http.Post(srv.URL, "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != "done" {
			t.Fatalf("request %d: %d %s", i, res.StatusCode, b)
		}
		time.Sleep(2 * d) // idle past the deadline on the kept-alive connection
	}
}
