package oauth_test

import (
	"net/http"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// TestFailedAdminBearersAreLimitedPerAddress: /admin answers an address's
// refused tokens (each a store read) 401 thirty times a minute, then 429
// with Retry-After; the master token from that address is never slowed.
func TestFailedAdminBearersAreLimitedPerAddress(t *testing.T) {
	e := sqliteEnv(t, realLimits)
	statuses := map[int]int{}
	for range 40 {
		r := e.do(http.MethodGet, "/admin/oauth/clients", nil, map[string]string{"Authorization": "Bearer " + auth.NewSecret()})
		statuses[r.status]++
		if r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") == "" {
			t.Fatal("a 429 without Retry-After")
		}
	}
	if statuses[http.StatusUnauthorized] != 30 || statuses[http.StatusTooManyRequests] != 10 {
		t.Fatalf("40 unknown tokens on /admin from one address: %v, want 30 × 401 then 10 × 429", statuses)
	}
	if r := e.do(http.MethodGet, "/admin/oauth/clients", nil, map[string]string{"Authorization": "Bearer " + e.master}); r.status != http.StatusOK {
		t.Fatalf("the master token from the limited address: %d %s", r.status, r.body)
	}
}
