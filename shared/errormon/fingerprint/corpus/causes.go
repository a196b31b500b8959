package corpus

import (
	"fmt"
	"net"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// The causes. Labels that share a prefix before the last '/' are a
// near-miss pair: the same template or message with one thing changed
// that makes it another cause.
var causes = []cause{
	// --- Convex functions (TypeScript, V8 stacks) ---

	// Same function, frame and template; the entity differs.
	{"convex/not-found/user", func(g *gen) source.Event {
		return g.convexEvent("entities:get", "Error", "User not found: "+g.convexID(),
			g.v8("resolveEntity", "../convex/lib/entities.ts", "handler", "../convex/entities.ts")+g.convexTail())
	}},
	{"convex/not-found/team", func(g *gen) source.Event {
		return g.convexEvent("entities:get", "Error", "Team not found: "+g.convexID(),
			g.v8("resolveEntity", "../convex/lib/entities.ts", "handler", "../convex/entities.ts")+g.convexTail())
	}},
	// Same message, type and top frame (a shared helper); the function
	// differs.
	{"convex/map-undefined/messages:list", func(g *gen) source.Event {
		return g.convexEvent("messages:list", "TypeError", "Cannot read properties of undefined (reading 'map')",
			g.v8("formatList", "../convex/lib/format.ts", "handler", "../convex/messages.ts")+g.convexTail())
	}},
	{"convex/map-undefined/channels:list", func(g *gen) source.Event {
		return g.convexEvent("channels:list", "TypeError", "Cannot read properties of undefined (reading 'map')",
			g.v8("formatList", "../convex/lib/format.ts", "handler", "../convex/channels.ts")+g.convexTail())
	}},
	// Same function, frame and message; the error type differs.
	{"convex/rate-limit/ConvexError", func(g *gen) source.Event {
		return g.convexEvent("messages:send", "ConvexError", fmt.Sprintf("Rate limit exceeded for %s, retry in %dms", g.email(), g.n(100, 60000)),
			g.v8("checkRateLimit", "../convex/lib/rateLimit.ts", "handler", "../convex/messages.ts")+g.convexTail())
	}},
	{"convex/rate-limit/Error", func(g *gen) source.Event {
		return g.convexEvent("messages:send", "Error", fmt.Sprintf("Rate limit exceeded for %s, retry in %dms", g.email(), g.n(100, 60000)),
			g.v8("checkRateLimit", "../convex/lib/rateLimit.ts", "handler", "../convex/messages.ts")+g.convexTail())
	}},
	// Same route, type and message; thrown from two different places.
	{"convex/invalid-argument/validateInput", func(g *gen) source.Event {
		return g.convexEvent("POST /api/messages", "Error", fmt.Sprintf("Invalid argument: %q", g.quotedValue()),
			g.v8("validateInput", "../convex/lib/validate.ts", "", "../convex/http.ts")+g.convexTail())
	}},
	{"convex/invalid-argument/parseBody", func(g *gen) source.Event {
		return g.convexEvent("POST /api/messages", "Error", fmt.Sprintf("Invalid argument: %q", g.quotedValue()),
			g.v8("parseBody", "../convex/http.ts", "", "../convex/http.ts")+g.convexTail())
	}},
	// Same everything but the upstream status.
	{"convex/stripe-status/404", func(g *gen) source.Event {
		return g.convexEvent("billing:syncCustomer", "Error", fmt.Sprintf("Request to https://api.stripe.com/v1/customers/%s?expand[]=subscriptions failed with status 404", g.stripeID("cus")),
			g.v8("stripeFetch", "../convex/lib/stripe.ts", "async handler", "../convex/billing.ts")+g.convexTail())
	}},
	{"convex/stripe-status/500", func(g *gen) source.Event {
		return g.convexEvent("billing:syncCustomer", "Error", fmt.Sprintf("Request to https://api.stripe.com/v1/customers/%s?expand[]=subscriptions failed with status 500", g.stripeID("cus")),
			g.v8("stripeFetch", "../convex/lib/stripe.ts", "async handler", "../convex/billing.ts")+g.convexTail())
	}},
	{"convex/openai-timeout", func(g *gen) source.Event {
		return g.convexEvent("ai:complete", "Error", fmt.Sprintf("fetch to https://api.openai.com/v1/chat/completions timed out after %dms (attempt %d of 3)", g.n(10000, 60000), g.n(1, 3)),
			g.v8("withTimeout", "../convex/lib/http.ts", "async complete", "../convex/ai.ts")+g.nodeTail())
	}},
	{"convex/document-missing", func(g *gen) source.Event {
		return g.convexEvent("messages:edit", "Error", fmt.Sprintf(`Document with ID "%s" does not exist in table "messages"`, g.convexID()),
			g.v8("handler", "../convex/messages.ts")+g.convexTail())
	}},
	{"convex/too-many-reads", func(g *gen) source.Event {
		return g.convexEvent("reports:monthly", "Error", "Too many reads in a single function execution (limit: 4096). Consider using smaller limits in your queries, paginating your queries, or using indexed queries with a selective index range expressions.",
			g.v8("handler", "../convex/reports.ts")+g.convexTail())
	}},
	{"convex/missing-field", func(g *gen) source.Event {
		return g.convexEvent("users:create", "ArgumentValidationError", "Object is missing the required field `email`. Consider wrapping the field validator in `v.optional(...)` if this is expected.",
			g.convexTail())
	}},
	{"browser/chunk-load", func(g *gen) source.Event {
		host := g.pick("https://app.acme.io", fmt.Sprintf("https://acme-git-feat-%d-acme.vercel.app", g.n(1, 500)))
		build := g.hex(16)
		n := g.n(100, 9999)
		return source.Event{
			Type:    "ChunkLoadError",
			Message: fmt.Sprintf("Loading chunk %d failed. (error: %s/_next/static/chunks/%d.%s.js)", n, host, n, g.hex(8)),
			Stack: fmt.Sprintf("ChunkLoadError: Loading chunk %d failed.\n", n) +
				g.v8("__webpack_require__.f.j", host+"/_next/static/chunks/webpack-"+build+".js?v="+fmt.Sprint(g.n(1, 99)), "", host+"/_next/static/chunks/webpack-"+build+".js"),
		}
	}},
	{"node/json-parse", func(g *gen) source.Event {
		return g.convexEvent("webhooks:github", "SyntaxError", fmt.Sprintf("Unexpected token < in JSON at position %d", g.n(0, 4000)),
			"    at JSON.parse (<anonymous>)\n"+g.v8("handleWebhook", "../convex/webhooks.ts")+g.convexTail())
	}},
	{"node/econnrefused", func(g *gen) source.Event {
		return source.Event{
			Function: "POST /api/upload/" + g.uuid(),
			Type:     "Error",
			Message:  fmt.Sprintf("connect ECONNREFUSED %s:%d", g.ip(), g.pickInt(5432, 6379, 443)),
			Stack: fmt.Sprintf("Error: connect ECONNREFUSED\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:%d:%d)\n", g.n(1500, 1600), g.n(1, 20)) +
				g.v8("uploadToS3", "/var/task/src/storage.js", "async handler", "/var/task/src/index.js"),
		}
	}},
	{"node/zod-parse", func(g *gen) source.Event {
		v := fmt.Sprintf("3.%d.%d", g.n(20, 23), g.n(0, 9))
		return g.convexEvent("settings:update", "ZodError", `Expected number, received string at "settings.limit"`,
			g.v8("ZodObject.parse", "../../node_modules/.pnpm/zod@"+v+"/node_modules/zod/lib/types.js", "handler", "../convex/settings.ts")+g.convexTail())
	}},

	// --- Go services ---

	// Same route and message; the panic is in another function.
	{"go/index-out-of-range/ListItems", func(g *gen) source.Event {
		return g.indexPanic("github.com/acme/shop/handlers.(*Server).ListItems", "/build/handlers/orders.go")
	}},
	{"go/index-out-of-range/firstItem", func(g *gen) source.Event {
		return g.indexPanic("github.com/acme/shop/handlers.firstItem", "/build/handlers/items.go")
	}},
	{"go/nil-pointer", func(g *gen) source.Event {
		return source.Event{
			Function: fmt.Sprintf("GET /v1/invoices/%s", g.uuid()),
			Message:  "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x" + g.hex(6) + "]",
			Stack:    g.goPanic("", "github.com/acme/shop/billing.(*Invoicer).Total", g.pick("/build/billing/invoice.go", "/home/runner/work/shop/shop/billing/invoice.go")),
		}
	}},
	{"go/nil-map", func(g *gen) source.Event {
		return source.Event{
			Function: "worker:warm-cache",
			Message:  "panic: assignment to entry in nil map",
			Stack:    g.goPanic("", "github.com/acme/shop/cache.(*Store).Put", "/build/cache/store.go"),
		}
	}},
	// Same route and template; another constraint, another bug.
	{"go/unique/users_email_key", func(g *gen) source.Event {
		return source.Event{Function: "POST /v1/signup", Message: `pq: duplicate key value violates unique constraint "users_email_key"`}
	}},
	{"go/unique/teams_slug_key", func(g *gen) source.Event {
		return source.Event{Function: "POST /v1/signup", Message: `pq: duplicate key value violates unique constraint "teams_slug_key"`}
	}},
	{"go/dial-refused", func(g *gen) source.Event {
		return source.Event{Function: "worker:sync-inventory", Message: fmt.Sprintf("dial tcp %s: connect: connection refused", net.JoinHostPort(g.ip(), fmt.Sprint(g.pickInt(5432, 8080, 9200))))}
	}},
	{"go/client-timeout", func(g *gen) source.Event {
		return source.Event{
			Function: fmt.Sprintf("GET /api/orders/%d?include=items", g.n(1, 1e6)),
			Message:  fmt.Sprintf(`Get "https://%s/api/items/%d?page=%d": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, g.host(), g.n(1, 1e5), g.n(1, 40)),
		}
	}},
	{"go/json-unmarshal", func(g *gen) source.Event {
		return source.Event{Function: "POST /api/orders", Message: "json: cannot unmarshal string into Go struct field Order.amount of type int64"}
	}},
	{"go/logfmt-job-failed", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf(`level=error ts=%s caller=worker.go:%d msg="job failed" job_id=%s attempt=%d retry=%t err="stripe: card declined (request req_%s)"`,
			g.ts(), g.n(40, 60), g.uuid(), g.n(1, 5), g.r.IntN(2) == 0, g.hex(14))}
	}},
	// What users type into a numeric field. A quoted bare word ("abc")
	// reads like an identifier and is kept, so this cause splits by
	// such values: the known cost of not merging "field 'email'" with
	// "field 'name'".
	{"go/atoi", func(g *gen) source.Event {
		v := g.pick("", "1,000", "12a", "1.5", "$5", "-", " 7", "0x1G", "2e", fmt.Sprint(g.n(1, 99))+"kg", "abc", "N/A")
		return source.Event{Function: "POST /api/cart/items", Message: fmt.Sprintf("strconv.Atoi: parsing %q: invalid syntax", v)}
	}},
	{"go/open-upload", func(g *gen) source.Event {
		return source.Event{Function: "POST /api/avatars", Message: fmt.Sprintf("open /var/data/uploads/%s/%s.png: no such file or directory", g.uuid(), g.convexID())}
	}},
	// Same job and template; the exit status is the cause (OOM kill or
	// a failure).
	{"go/exit/137", func(g *gen) source.Event {
		return source.Event{Function: "jobs:reindex", Message: fmt.Sprintf("worker %d exited after %s: exit status 137", g.n(1, 64), g.dur())}
	}},
	{"go/exit/1", func(g *gen) source.Event {
		return source.Event{Function: "jobs:reindex", Message: fmt.Sprintf("worker %d exited after %s: exit status 1", g.n(1, 64), g.dur())}
	}},

	// --- Python (Django) ---

	// Same view and frame; another missing key.
	{"python/key-error/user_id", func(g *gen) source.Event {
		return source.Event{Function: "GET /api/users/" + fmt.Sprint(g.n(1, 1e6)), Message: "KeyError: 'user_id'",
			Stack: g.pyTraceback("KeyError: 'user_id'", "/app/api/views.py", "get_user", "/app/api/payload.py", "extract")}
	}},
	{"python/key-error/team_id", func(g *gen) source.Event {
		return source.Event{Function: "GET /api/users/" + fmt.Sprint(g.n(1, 1e6)), Message: "KeyError: 'team_id'",
			Stack: g.pyTraceback("KeyError: 'team_id'", "/app/api/views.py", "get_user", "/app/api/payload.py", "extract")}
	}},
	{"python/invalid-literal", func(g *gen) source.Event {
		v := g.quotedValue()
		return source.Event{Function: "POST /api/import", Type: "ValueError", Message: fmt.Sprintf("invalid literal for int() with base 10: '%s'", v),
			Stack: g.pyTraceback("ValueError: invalid literal for int() with base 10: '"+v+"'", "/app/importer/rows.py", "parse_row")}
	}},
	{"python/connection-pool", func(g *gen) source.Event {
		return source.Event{Function: "tasks.sync_contacts", Message: fmt.Sprintf("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='%s', port=443): Max retries exceeded with url: /v1/contacts/%d?page=%d (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x%s>: Failed to establish a new connection: [Errno 111] Connection refused'))",
			g.host(), g.n(1, 1e6), g.n(1, 99), g.hex(12))}
	}},
	{"python/timeout", func(g *gen) source.Event {
		return source.Event{Function: "tasks.render_pdf", Type: "TimeoutError", Message: fmt.Sprintf("Operation timed out after %.1f seconds", float64(g.n(100, 3000))/10),
			Stack: g.pyTraceback("TimeoutError", "/app/reports/pdf.py", "render")}
	}},
	{"python/zero-division", func(g *gen) source.Event {
		return source.Event{Function: "GET /api/stats", Message: "ZeroDivisionError: division by zero",
			Stack: g.pyTraceback("ZeroDivisionError: division by zero", "/app/api/stats.py", "get_stats", "/app/api/metrics.py", "compute_ratio")}
	}},
	// Same view; another attribute of the missing object.
	{"python/none-attribute/email", func(g *gen) source.Event {
		return source.Event{Function: "POST /api/invite", Type: "AttributeError", Message: "'NoneType' object has no attribute 'email'",
			Stack: g.pyTraceback("AttributeError: 'NoneType' object has no attribute 'email'", "/app/api/invites.py", "send_invite")}
	}},
	{"python/none-attribute/name", func(g *gen) source.Event {
		return source.Event{Function: "POST /api/invite", Type: "AttributeError", Message: "'NoneType' object has no attribute 'name'",
			Stack: g.pyTraceback("AttributeError: 'NoneType' object has no attribute 'name'", "/app/api/invites.py", "send_invite")}
	}},

	// --- JVM ---

	{"java/npe", func(g *gen) source.Event {
		return source.Event{Function: "GET /invoices/{id}", Message: `java.lang.NullPointerException: Cannot invoke "String.length()" because "<local1>" is null`,
			Stack: fmt.Sprintf("java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"<local1>\" is null\n\tat com.acme.billing.InvoiceService.total(InvoiceService.java:%d)\n\tat com.acme.billing.InvoiceController.get(InvoiceController.java:%d)\n\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:%d)\n\t... %d more\n",
				g.line(), g.line(), g.n(800, 900), g.n(20, 60))}
	}},

	// --- Plain log lines (no function, type or stack) ---

	{"log/slow-query", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("[%s] worker-%d WARN slow query took %s (threshold 500ms): SELECT * FROM orders WHERE id = %d AND status = 'pending'", g.ts(), g.n(1, 32), g.dur(), g.n(1, 1e7))}
	}},
	{"log/order-failed", func(g *gen) source.Event {
		t := g.time()
		return source.Event{Message: fmt.Sprintf("%s,%03d ERROR [pool-%d-thread-%d] c.a.OrderService - Failed to process order #%d for %s", t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.n(1, 8), g.n(1, 200), g.n(1, 1e6), g.email())}
	}},
	{"log/nginx-upstream-timeout", func(g *gen) source.Event {
		t := g.time()
		n := g.n(1, 1e5)
		return source.Event{Message: fmt.Sprintf(`%s [error] %d#%d: *%d upstream timed out (110: Connection timed out) while reading response header from upstream, client: %s, server: %s, request: "GET /api/items/%d HTTP/1.1", upstream: "http://%s:%d/api/items/%d", host: "%s"`,
			t.Format("2006/01/02 15:04:05"), g.n(1, 99), g.n(0, 9), g.n(1, 1e6), g.ip(), g.host(), n, g.ip(), g.n(3000, 9000), n, g.host())}
	}},
	{"log/oom-kill", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("Out of memory: Killed process %d (node) total-vm:%dkB, anon-rss:%dkB, file-rss:0kB, shmem-rss:0kB, UID:%d pgtables:%dkB oom_score_adj:0",
			g.n(100, 99999), g.n(1e6, 9e6), g.n(1e5, 9e6), g.n(0, 1000), g.n(100, 9000))}
	}},
	// Same template; the upstream's status differs.
	{"log/upstream/503", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("Request %s failed: HTTP 503 Service Unavailable after %d retries (%s)", g.uuid(), g.n(1, 5), g.dur())}
	}},
	{"log/upstream/502", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("Request %s failed: HTTP 502 Bad Gateway after %d retries (%s)", g.uuid(), g.n(1, 5), g.dur())}
	}},
	{"log/webhook-rejected", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf(`webhook rejected: signature mismatch for payload {"id":"evt_%s","type":"%s","created":%d,"livemode":%t}`,
			g.chars(base62, 24), g.pick("invoice.paid", "customer.updated", "charge.refunded"), g.n(1.7e9, 1.8e9), g.r.IntN(2) == 0)}
	}},
	{"log/cert-expiry", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("Certificate for %s expires on %s", g.host(), g.time().Format("Mon, 02 Jan 2006 15:04:05 GMT"))}
	}},
	{"log/disk-usage", func(g *gen) source.Event {
		return source.Event{Message: fmt.Sprintf("disk usage at %d%% on /dev/nvme0n1p1 (%.1f GiB free) on host %s", g.n(90, 99), float64(g.n(1, 200))/10, g.host())}
	}},
}

// indexPanic: an index out of range in fn, under GET /v1/orders/{id}/items.
func (g *gen) indexPanic(fn, file string) source.Event {
	return source.Event{
		Function: fmt.Sprintf("GET /v1/orders/%d/items", g.n(1, 1e6)),
		Message:  fmt.Sprintf("panic: runtime error: index out of range [%d] with length %d", g.n(1, 50), g.n(0, 1)),
		Stack: g.goPanic(fmt.Sprintf("panic({0x%x?, 0xc%09x?})\n\t/usr/local/go/src/runtime/panic.go:%d +0x132\nruntime.goPanicIndex(0x%x, 0x%x)\n\t/usr/local/go/src/runtime/panic.go:115 +0x74\n", g.r.Int64N(1<<24), g.r.Int64N(1<<36), g.n(770, 791), g.n(1, 50), g.n(0, 1)),
			fn, file),
	}
}

// pickInt is pick for numbers (ports).
func (g *gen) pickInt(xs ...int) int { return xs[g.r.IntN(len(xs))] }
