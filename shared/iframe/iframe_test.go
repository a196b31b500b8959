package iframe_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// iframeClock is a settable clock for the expiry tests.
type iframeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *iframeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *iframeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// eachBackendClock is eachBackend with a service on a test clock.
func eachBackendClock(t *testing.T, fn func(t *testing.T, svc *iframe.Service, clk *iframeClock)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		clk := &iframeClock{t: time.Now().Truncate(time.Millisecond)}
		fn(t, iframe.New(iframe.Options{Store: b.Open(t, nil), Now: clk.now}), clk)
	})
}

func TestIframeSessionLifecycle(t *testing.T) {
	eachBackendClock(t, func(t *testing.T, svc *iframe.Service, clk *iframeClock) {
		p := as("acme", "alice")
		p.TokenID = "tok_1"
		exp := clk.now().Add(30 * time.Minute).UnixMilli()
		in := iframe.CreateInput{SessionID: "4b6f1c1e-7d7a-4a53-9f1e-0c1d2e3f4a5b", Origin: "https://App.Example.com", TenantID: "workspace-1", UserID: "user_2abc", ExpiresAt: exp}
		is, err := svc.CreateIframeSession(ctx(), p, in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(is.ID, "ifs_") || is.Origin != "https://app.example.com" || is.Revoked || is.LastSeenAt != is.CreatedAt || is.CreatedBy != "tok_1" {
			t.Fatalf("created %+v", is)
		}
		_, err = svc.CreateIframeSession(ctx(), p, in)
		wantKind(t, err, vp.KindConflict, "sessionId")

		got, err := svc.GetIframeSession(ctx(), p, in.SessionID)
		if err != nil || got == nil || *got != is {
			t.Fatalf("get: %+v %v", got, err)
		}
		// touch moves lastSeenAt only.
		clk.add(time.Minute)
		if ok, err := svc.TouchIframeSession(ctx(), p, in.SessionID); !ok || err != nil {
			t.Fatal(ok, err)
		}
		got, _ = svc.GetIframeSession(ctx(), p, in.SessionID)
		if got.LastSeenAt != clk.now().UnixMilli() || got.ExpiresAt != exp || got.CreatedAt != is.CreatedAt {
			t.Fatalf("after touch: %+v", got)
		}
		// Another tenant sees nothing, and may use the same id.
		b := as("other", "alice")
		if g, _ := svc.GetIframeSession(ctx(), b, in.SessionID); g != nil {
			t.Fatal("visible from another tenant")
		}
		for name, fn := range map[string]func(context.Context, vp.Principal, string) (bool, error){"touch": svc.TouchIframeSession, "revoke": svc.RevokeIframeSession} {
			if ok, err := fn(ctx(), b, in.SessionID); ok || err != nil {
				t.Fatalf("%s from another tenant: %v %v", name, ok, err)
			}
		}
		if _, err := svc.CreateIframeSession(ctx(), b, in); err != nil {
			t.Fatalf("same id in another tenant: %v", err)
		}
		// revoke keeps the row; the session is gone for get and touch.
		if ok, err := svc.RevokeIframeSession(ctx(), p, in.SessionID); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if ok, _ := svc.RevokeIframeSession(ctx(), p, in.SessionID); !ok {
			t.Fatal("second revoke is false")
		}
		if g, _ := svc.GetIframeSession(ctx(), p, in.SessionID); g != nil {
			t.Fatal("revoked session returned")
		}
		if ok, _ := svc.TouchIframeSession(ctx(), p, in.SessionID); ok {
			t.Fatal("touched a revoked session")
		}
		_, err = svc.CreateIframeSession(ctx(), p, in)
		wantKind(t, err, vp.KindConflict, "sessionId") // the row is kept
		// Unknown ids.
		for name, fn := range map[string]func(context.Context, vp.Principal, string) (bool, error){"touch": svc.TouchIframeSession, "revoke": svc.RevokeIframeSession} {
			if ok, err := fn(ctx(), p, "nope"); ok || err != nil {
				t.Fatalf("%s unknown: %v %v", name, ok, err)
			}
		}
		// Expiry: at expiresAt the session is gone; touch is false.
		in2 := in
		in2.SessionID = "second"
		if _, err := svc.CreateIframeSession(ctx(), p, in2); err != nil {
			t.Fatal(err)
		}
		clk.add(time.Duration(exp-clk.now().UnixMilli()) * time.Millisecond)
		if g, _ := svc.GetIframeSession(ctx(), p, "second"); g != nil {
			t.Fatal("expired session returned (expiresAt <= now)")
		}
		if ok, _ := svc.TouchIframeSession(ctx(), p, "second"); ok {
			t.Fatal("touched an expired session")
		}
		if ok, _ := svc.RevokeIframeSession(ctx(), p, "second"); !ok {
			t.Fatal("revoke of an expired (existing) session is false")
		}
	})
}

func TestIframeSessionValidation(t *testing.T) {
	clk := &iframeClock{t: time.Now()}
	svc := iframe.New(iframe.Options{Store: teststores.All[0].Open(t, nil), Now: clk.now})
	p := as("acme", "alice")
	ok := iframe.CreateInput{SessionID: "s1", Origin: "https://app.example.com", ExpiresAt: clk.now().Add(time.Hour).UnixMilli()}
	cases := []struct {
		name  string
		mod   func(*iframe.CreateInput)
		kind  vp.Kind
		field string
	}{
		{"no session id", func(in *iframe.CreateInput) { in.SessionID = "" }, vp.KindInvalid, "sessionId"},
		{"session id with #", func(in *iframe.CreateInput) { in.SessionID = "a#b" }, vp.KindInvalid, "sessionId"},
		{"long session id", func(in *iframe.CreateInput) { in.SessionID = strings.Repeat("a", 65) }, vp.KindTooLarge, "sessionId"},
		{"no origin", func(in *iframe.CreateInput) { in.Origin = "" }, vp.KindInvalid, "origin"},
		{"origin with a path", func(in *iframe.CreateInput) { in.Origin = "https://app.example.com/embed" }, vp.KindInvalid, "origin"},
		{"origin with a query", func(in *iframe.CreateInput) { in.Origin = "https://app.example.com?x=1" }, vp.KindInvalid, "origin"},
		{"ftp origin", func(in *iframe.CreateInput) { in.Origin = "ftp://app.example.com" }, vp.KindInvalid, "origin"},
		{"http origin", func(in *iframe.CreateInput) { in.Origin = "http://app.example.com" }, vp.KindInvalid, "origin"},
		{"not a URL", func(in *iframe.CreateInput) { in.Origin = "app.example.com" }, vp.KindInvalid, "origin"},
		{"expiry in the past", func(in *iframe.CreateInput) { in.ExpiresAt = clk.now().Add(-time.Second).UnixMilli() }, vp.KindInvalid, "expiresAt"},
		{"expiry too far", func(in *iframe.CreateInput) { in.ExpiresAt = clk.now().Add(31 * 24 * time.Hour).UnixMilli() }, vp.KindInvalid, "expiresAt"},
		{"user id with a comma", func(in *iframe.CreateInput) { in.UserID = "a,b" }, vp.KindInvalid, "userId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			c.mod(&in)
			_, err := svc.CreateIframeSession(ctx(), p, in)
			wantKind(t, err, c.kind, c.field)
		})
	}
	local := ok
	local.Origin = "http://localhost:5173"
	if is, err := svc.CreateIframeSession(ctx(), p, local); err != nil || is.Origin != "http://localhost:5173" {
		t.Fatalf("localhost origin: %+v %v", is, err)
	}
	_, err := svc.CreateIframeSession(ctx(), vp.Principal{}, ok)
	wantKind(t, err, vp.KindUnauthorized, "")
}

func TestIframeCleanup(t *testing.T) {
	eachBackendClock(t, func(t *testing.T, svc *iframe.Service, clk *iframeClock) {
		a, b := as("tenant-a", "alice"), as("tenant-b", "bob")
		start := clk.now()
		mk := func(p vp.Principal, id string, ttl time.Duration) {
			t.Helper()
			if _, err := svc.CreateIframeSession(ctx(), p, iframe.CreateInput{SessionID: id, Origin: "https://x.example", ExpiresAt: start.Add(ttl).UnixMilli()}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 105 { // more than one write
			mk(a, "short-"+strconv.Itoa(i), 10*time.Minute)
		}
		mk(b, "short-b", 10*time.Minute)
		mk(a, "revoked", 10*time.Minute)
		if ok, _ := svc.RevokeIframeSession(ctx(), a, "revoked"); !ok {
			t.Fatal("revoke")
		}
		mk(a, "long", 2*time.Hour)
		mk(b, "long", 2*time.Hour)
		if rep, err := svc.CleanupIframeSessions(ctx(), clk.now()); err != nil || rep.Deleted != 0 {
			t.Fatalf("nothing expired yet: %+v %v", rep, err)
		}
		clk.add(10 * time.Minute)
		rep, err := svc.CleanupIframeSessions(ctx(), clk.now())
		if err != nil || rep.Deleted != 107 || rep.More {
			t.Fatalf("cleanup: %+v %v", rep, err)
		}
		for _, p := range []vp.Principal{a, b} {
			if g, _ := svc.GetIframeSession(ctx(), p, "long"); g == nil {
				t.Fatal("a live session was cleaned up")
			}
		}
		// The rows are gone: the ids can be used again.
		mk(a, "short-7", 3*time.Hour)
		mk(a, "revoked", 3*time.Hour)
		if rep, _ := svc.CleanupIframeSessions(ctx(), clk.now()); rep.Deleted != 0 {
			t.Fatalf("second run deleted %d", rep.Deleted)
		}
	})
}

func TestIframeTouchRace(t *testing.T) {
	eachBackendClock(t, func(t *testing.T, svc *iframe.Service, clk *iframeClock) {
		p := as("acme", "alice")
		if _, err := svc.CreateIframeSession(ctx(), p, iframe.CreateInput{SessionID: "s", Origin: "https://x.example", ExpiresAt: clk.now().Add(time.Hour).UnixMilli()}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ok, err := svc.TouchIframeSession(ctx(), p, "s"); !ok || err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("a touch failed: %v", err)
		}
		if g, _ := svc.GetIframeSession(ctx(), p, "s"); g == nil || g.Revoked {
			t.Fatal("session lost")
		}
	})
}
