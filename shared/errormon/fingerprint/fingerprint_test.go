package fingerprint_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

func TestOfParts(t *testing.T) {
	cases := []struct {
		name string
		in   source.Event
		want fingerprint.Fingerprint // Hash and Version not compared
	}{
		{"type apart",
			source.Event{Function: "messages:send", Type: "TypeError", Message: "x is undefined"},
			fingerprint.Fingerprint{Function: "messages:send", Type: "TypeError", Message: "x is undefined"}},
		{"type in the message",
			source.Event{Function: "messages:send", Message: "TypeError: x is undefined"},
			fingerprint.Fingerprint{Function: "messages:send", Type: "TypeError", Message: "x is undefined"}},
		{"uncaught",
			source.Event{Message: "Uncaught ConvexError: limit 5 reached"},
			fingerprint.Fingerprint{Type: "ConvexError", Message: "limit <int> reached"}},
		{"given type stripped from the message",
			source.Event{Type: "Error", Message: "Uncaught Error: boom"},
			fingerprint.Fingerprint{Type: "Error", Message: "boom"}},
		{"another type in the message is kept",
			source.Event{Type: "Error", Message: "ConvexError: boom"},
			fingerprint.Fingerprint{Type: "Error", Message: "ConvexError: boom"}},
		{"dotted type",
			source.Event{Message: "requests.exceptions.ConnectionError: refused"},
			fingerprint.Fingerprint{Type: "requests.exceptions.ConnectionError", Message: "refused"}},
		{"go panic",
			source.Event{Message: "panic: assignment to entry in nil map"},
			fingerprint.Fingerprint{Type: "panic", Message: "assignment to entry in nil map"}},
		{"go fatal error",
			source.Event{Message: "fatal error: concurrent map writes"},
			fingerprint.Fingerprint{Type: "fatal error", Message: "concurrent map writes"}},
		{"a prefix that is no type",
			source.Event{Message: "failed to connect: refused"},
			fingerprint.Fingerprint{Message: "failed to connect: refused"}},
		{"lower-case prefix is no type",
			source.Event{Message: "pq: duplicate key"},
			fingerprint.Fingerprint{Message: "pq: duplicate key"}},
		{"route ids and query",
			source.Event{Function: "GET /users/123/posts/550e8400-e29b-41d4-a716-446655440000?page=2#top", Message: "x"},
			fingerprint.Fingerprint{Function: "GET /users/<int>/posts/<uuid>", Message: "x"}},
		{"stack after the message",
			source.Event{Message: "Error: boom\n    at f (../convex/a.ts:1:2)"},
			fingerprint.Fingerprint{Type: "Error", Message: "boom", Frame: "f (../convex/a.ts)"}},
		{"stack apart wins",
			source.Event{Message: "Error: boom\n    at f (../convex/a.ts:1:2)", Stack: "    at g (../convex/b.ts:1:2)"},
			fingerprint.Fingerprint{Type: "Error", Message: "boom", Frame: "g (../convex/b.ts)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fingerprint.Of(c.in)
			if got.Version != fingerprint.Version || len(got.Hash) != 32 {
				t.Errorf("Version %q Hash %q", got.Version, got.Hash)
			}
			got.Hash, got.Version = "", ""
			if got != c.want {
				t.Errorf("Of(%+v)\n got  %+v\n want %+v", c.in, got, c.want)
			}
		})
	}
}

// TestOfGroups: the same cause reported differently, or with other
// variable parts, has one hash; one changed part gives another.
func TestOfGroups(t *testing.T) {
	same := []source.Event{
		{Function: "users:get", Type: "Error", Message: "User 42 not found", Stack: "Error: x\n    at get (../convex/users.ts:10:3)"},
		{Function: "users:get", Message: "Uncaught Error: User 7 not found\n    at get (../convex/users.ts:12:9)"},
		{Function: "users:get", Message: "Error: User   9001 not found", Stack: "    at get (../convex/users.ts:99:1)\n    at x (node_modules/y.js:1:1)"},
	}
	h := fingerprint.Of(same[0]).Hash
	for _, e := range same[1:] {
		if got := fingerprint.Of(e).Hash; got != h {
			t.Errorf("%+v: hash %s, want %s", e, got, h)
		}
	}
	other := []source.Event{
		{Function: "users:list", Type: "Error", Message: "User 42 not found", Stack: "    at get (../convex/users.ts:10:3)"},
		{Function: "users:get", Type: "ConvexError", Message: "User 42 not found", Stack: "    at get (../convex/users.ts:10:3)"},
		{Function: "users:get", Type: "Error", Message: "Team 42 not found", Stack: "    at get (../convex/users.ts:10:3)"},
		{Function: "users:get", Type: "Error", Message: "User 42 not found", Stack: "    at load (../convex/users.ts:10:3)"},
		{Function: "users:get", Type: "Error", Message: "User 42 not found"},
	}
	seen := map[string]int{h: -1}
	for i, e := range other {
		got := fingerprint.Of(e).Hash
		if j, dup := seen[got]; dup {
			t.Errorf("other[%d] has the hash of %d", i, j)
		}
		seen[got] = i
	}
}

// TestStableHashes pins the hashes of fixed events. A change to the
// algorithm that moves any of them must come with a new Version, so that
// stored groups are not compared with hashes of another algorithm: bump
// Version, then update these.
func TestStableHashes(t *testing.T) {
	if fingerprint.Version != "fp1" {
		t.Fatalf("Version %q: update the pinned hashes below for it", fingerprint.Version)
	}
	cases := []struct {
		in   source.Event
		hash string
	}{
		{source.Event{Function: "messages:send", Type: "TypeError", Message: "Cannot read properties of undefined (reading 'map')",
			Stack: "    at formatList (../convex/lib/format.ts:14:11)\n    at handler (../convex/messages.ts:3:1)"}, "3409727fec5da8dcbfafd686471ccabf"},
		{source.Event{Function: "GET /v1/orders/123/items", Message: "panic: runtime error: index out of range [5] with length 3",
			Stack: "goroutine 1 [running]:\ngithub.com/acme/shop/handlers.(*Server).ListItems(0x1)\n\t/build/handlers/orders.go:88 +0x1d\n"}, "12a0f58145acc534733346a0e4c35ea0"},
		{source.Event{Function: "GET /api/users/7", Message: "KeyError: 'user_id'",
			Stack: "Traceback (most recent call last):\n  File \"/app/api/views.py\", line 31, in get_user\n    x\nKeyError: 'user_id'"}, "7516f499358e1f06327a1a9e09933c14"},
		{source.Event{Message: `level=error ts=2024-05-01T12:00:00Z msg="job failed" job_id=550e8400-e29b-41d4-a716-446655440000 took=150ms status=503 user=alice@example.com url=https://x.example.com/a?b=1`}, "484eb12e895da654341273f887bf50f0"},
		{source.Event{}, "df8d21437302ca0e9542a04f70ed6d16"},
		// every kind of variable part, and the rules around them
		{source.Event{Function: "GET /t/550e8400-e29b-41d4-a716-446655440000?x=1", Message: "Uncaught Error: " +
			"k57ejhd9x8wv0d7kz0rxm0bf8s6wd3r1 cus_NffrFeUfNV2Hib 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 " +
			"3f2a9c1b8e7d 0x7f3a abc1234 a@b.example.com https://x.io/a db1.internal:5432 10.0.0.1:80 fe80::1 [::1]:443 " +
			"2024-05-01T12:00:00Z 12:00:01 Mon, 02 Jan 2006 150ms 1h2m 2.5 -3 512MB 95% #7 item-42 pool-3-thread-4 " +
			"status 404 HTTP 503 Service Unavailable exit status 137 [Errno 111] 'map' \"a b\" x='y' ok=true \"n\":false " +
			strings.Repeat("QUJD", 60)}, "a9616e4880f1fe80d4607562a3d86072"},
		{source.Event{Stack: "    at n (https://a.io/assets/chunk-3f2a9c.js?v=1:1:2)\n"}, "da31196340eff1cdd518d85773c0c71a"},
		{source.Event{Stack: "    at r (https://a.io/_next/static/chunks/93817264.js:1:2)\n"}, "cf52579fd9c435a5b7cccc29d23b7284"},
		{source.Event{Stack: "handler@https://a.io/static/js/main.DqHkzWbQ.js:1:2\n"}, "a8345cd3acee60a0ac64bb2a07c4622e"},
		{source.Event{Stack: "\tat com.acme.A.b(A.java:12)\n\tat java.lang.Thread.run(Thread.java:833)\n"}, "959fe21eb79682f555d41194a068b00b"},
	}
	for i, c := range cases {
		if got := fingerprint.Of(c.in).Hash; got != c.hash {
			t.Errorf("case %d: hash %s, pinned %s", i, got, c.hash)
		}
	}
}
