package fingerprint_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
)

// messageCases are also the fuzz seeds.
var messageCases = []struct{ name, in, want string }{
	// identifiers
	{"convex id", "User not found: k57ejhd9x8wv0d7kz0rxm0bf8s6wd3r1", "User not found: <id>"},
	{"uuid", "job 550e8400-e29b-41d4-a716-446655440000 failed", "job <uuid> failed"},
	{"uuid upper", "job 550E8400-E29B-41D4-A716-446655440000 failed", "job <uuid> failed"},
	{"uuid in a word", "req-550e8400-e29b-41d4-a716-446655440000", "<id>"},
	{"traceparent", "trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 lost", "trace <traceparent> lost"},
	{"sha1", "blob 3f2a9c1b8e7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 missing", "blob <hex> missing"},
	{"md5", "etag d41d8cd98f00b204e9800998ecf8427e mismatch", "etag <hex> mismatch"},
	{"0x", "fault at 0x7f3a2b1c", "fault at <hex>"},
	{"git sha", "deployed abc1234 to prod", "deployed <hex> to prod"},
	{"hex word without digit", "defaced cafe", "defaced cafe"},
	{"stripe id", "charge cus_NffrFeUfNV2Hib failed", "charge <id> failed"},
	{"nanoid", "token V1StGXR8_Z5jdHi6B-myT expired", "token <id> expired"},
	{"words with numbers", "[pool-3-thread-17] x86_64 utf8mb4 Float64Array sha256", "[pool-<int>-thread-<int>] x86_<int> utf8mb4 Float64Array sha256"},
	{"number glued to a word", "user42 v2 http2", "user42 v2 http2"},

	// addresses
	{"email", "no account for alice+billing@mail.example.co.uk.", "no account for <email>."},
	{"url", "GET https://api.stripe.com/v1/charges?limit=3&x=%20 failed", "GET <url> failed"},
	{"url in parens", "(see https://x.example.com/a/b).", "(see <url>)."},
	{"hostname", "getaddrinfo ENOTFOUND db-1.eu-west-1.rds.amazonaws.com", "getaddrinfo ENOTFOUND <hostname>"},
	{"dotted code is no hostname", "user.name os.path.join index.js", "user.name os.path.join index.js"},
	{"ipv4 and port", "connect ECONNREFUSED 10.0.3.17:5432", "connect ECONNREFUSED <ip>"},
	{"ipv6", "from fe80::1ff:fe23:4567:890a and ::1", "from <ip> and <ip>"},
	{"ipv6 and port unbracketed", "connect ECONNREFUSED 2001:db8:1a::2b:5432", "connect ECONNREFUSED <ip>"},
	{"ipv6 bracketed", "dial tcp [2001:db8::1]:443: i/o timeout", "dial tcp <ip>: i/o timeout"},
	{"host and port", "dial cache3.internal:6379", "dial <hostname>"},
	{"file path with ids", "open /var/data/uploads/550e8400-e29b-41d4-a716-446655440000/12.png: no such file", "open /var/data/uploads/<uuid>/<int>.png: no such file"},
	{"route", "/users/123/posts/98765", "/users/<int>/posts/<int>"},

	// time
	{"rfc3339", "at 2024-05-01T12:00:00.123Z and 2024-05-01T12:00:00+02:00", "at <date> and <date>"},
	{"date and time", "2024-05-01 12:00:00,123 ERROR x", "<date> <time>,<int> ERROR x"},
	{"date alone", "expires 2024-05-01.", "expires <date>."},
	{"rfc1123", "expires on Mon, 02 Jan 2006 15:04:05 GMT", "expires on <date>, <int> <date> <int> <time> GMT"},
	{"ansic", "at Mon Jan  2 15:04:05 2006", "at <date> <date> <int> <time> <int>"},
	{"month as a word", "May not be empty", "May not be empty"},
	{"bare clock is ints", "at line 12:34", "at line <int>:<int>"},
	{"durations", "took 150ms, then 2.5s, then 1h2m3.5s, then 3m, 250µs", "took <duration>, then <duration>, then <duration>, then <duration>, <duration>"},

	// numbers
	{"int and float", "got 42 rows in 0.25 of 1e9", "got <int> rows in <float> of <float>"},
	{"negative", "balance -5 below (-12)", "balance <int> below (<int>)"},
	{"hyphen is no sign", "item-42 and 5-3", "item-<int> and <int>-<int>"},
	{"units", "used 512MB of 2.5GiB, 3x", "used <int>MB of <float>GiB, <int>x"},
	{"percent and money", "at 95% for $12.50 order #12345", "at <int>% for $<float> order #<int>"},
	{"version", "node v18.17.0 and 1.2.3", "node v18.<float> and <float>.<int>"},
	{"index", "index out of range [5] with length 3", "index out of range [<int>] with length <int>"},

	// codes kept
	{"status", "failed with status 404", "failed with status 404"},
	{"status other", "failed with status 500", "failed with status 500"},
	{"status colon", `status: 503, "statusCode":502, status_code=404`, `status: 503, "statusCode":502, status_code=404`},
	{"http", "HTTP 503 Service Unavailable", "HTTP 503 Service Unavailable"},
	{"reason phrase", "upstream returned 404 Not Found", "upstream returned 404 Not Found"},
	{"not a status", "status 42 and code 7777", "status <int> and code <int>"},
	{"count is no status", "returned 404 rows", "returned <int> rows"},
	{"errno", "[Errno 111] Connection refused", "[Errno 111] Connection refused"},
	{"sqlstate", "SQLSTATE 23505", "SQLSTATE 23505"},
	{"exit status", "exit status 137; exit code 1; killed by signal 9", "exit status 137; exit code 1; killed by signal 9"},

	// quoted strings
	{"quoted identifier kept", "Cannot read properties of undefined (reading 'map')", "Cannot read properties of undefined (reading 'map')"},
	{"quoted constraint kept", `violates unique constraint "users_email_key"`, `violates unique constraint "users_email_key"`},
	{"backticks kept", "missing the required field `email`.", "missing the required field `email`."},
	{"java method kept", `Cannot invoke "String.length()" because "<local1>" is null`, `Cannot invoke "String.length()" because <quoted_str> is null`},
	{"module path kept", "Cannot find module '@convex-dev/auth/server'", "Cannot find module '@convex-dev/auth/server'"},
	{"quoted value with id", `Document with ID "k57ejhd9x8wv0d7kz0rxm0bf8s6wd3r1" does not exist`, "Document with ID <quoted_str> does not exist"},
	{"quoted phrase", `expected "end of input" but found "x y"`, "expected <quoted_str> but found <quoted_str>"},
	{"quoted after colon", "invalid literal for int() with base 10: 'abc'", "invalid literal for int() with base <int>: <quoted_str>"},
	{"quoted after equals", "host='api.example.com', port=443", "host=<quoted_str>, port=<int>"},
	{"quoted number", "parsing '12a': bad", "parsing <quoted_str>: bad"},
	{"apostrophes", "can't find user's 'profile' don't", "can't find user's 'profile' don't"},
	{"unclosed quote", "it said 'hello", "it said 'hello"},
	{"json", `payload {"id":"evt_1","n":3,"ok":true}`, `payload {"id":<quoted_str>,"n":<int>,"ok":<bool>}`},
	{"booleans", "retry=true done=False must be true", "retry=<bool> done=<bool> must be true"},

	// logfmt
	{"logfmt", `level=error ts=2024-05-01T12:00:00Z caller=worker.go:42 msg="job failed" id=7`, "level=error ts=<date> caller=worker.go:<int> msg=<quoted_str> id=<int>"},

	// text
	{"whitespace", "  a \t b\n\nc  ", "a b c"},
	{"case and punctuation kept", "Not Found!? (Really.)", "Not Found!? (Really.)"},
	{"unicode", "échec de la requête 42 für Benutzer", "échec de la requête <int> für Benutzer"},
	{"empty", "", ""},
	{"blob", "data " + strings.Repeat("QUJD", 80) + " end", "data <blob> end"},
}

func TestMessage(t *testing.T) {
	for _, c := range messageCases {
		t.Run(c.name, func(t *testing.T) {
			got := fingerprint.Message(c.in)
			if got != c.want {
				t.Errorf("Message(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
			if again := fingerprint.Message(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

// TestMessageBounded: a huge message is cut, at a word.
func TestMessageBounded(t *testing.T) {
	in := strings.Repeat("word 12 ", 2000)
	got := fingerprint.Message(in)
	if len(got) > 1024 || strings.HasSuffix(got, " ") || !strings.HasPrefix(got, "word <int> word") {
		t.Fatalf("Message of %d bytes: %d bytes, %q...", len(in), len(got), got[:40])
	}
}
