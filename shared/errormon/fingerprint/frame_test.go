package fingerprint_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
)

// frameCases are also fuzz seeds.
var frameCases = []struct{ name, stack, want string }{
	{"empty", "", ""},
	{"no frames", "Error: boom\nsomething else", ""},
	{"v8 convex", `Error: User not found
    at resolveEntity (../convex/lib/entities.ts:14:11)
    at async handler (../convex/entities.ts:33:17)
    at async invokeFunction (../../node_modules/convex/dist/esm/server/impl/registration_impl.js:80:11)`,
		"resolveEntity (../convex/lib/entities.ts)"},
	{"v8 skips dependencies", `TypeError: x
    at JSON.parse (<anonymous>)
    at Object.parse (/app/node_modules/zod/lib/types.js:160:23)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at new Promise (<anonymous>)
    at async Promise.all (index 0)
    at handleWebhook (/app/src/webhooks.ts:41:9)`,
		"handleWebhook (/app/src/webhooks.ts)"},
	{"v8 async", "    at async complete (../convex/ai.ts:8:3)", "complete (../convex/ai.ts)"},
	{"v8 anonymous", "    at /var/task/index.js:12:5", "/var/task/index.js"},
	{"v8 object anonymous", "    at Object.<anonymous> (/app/src/main.js:3:1)", "Object.<anonymous> (/app/src/main.js)"},
	{"convex deps", "    at x (../convex/_generated/server.js:1:2)\n    at y (_deps/node/foo.js:1:2)\n    at z (../convex/files.ts:7:7)", "z (../convex/files.ts)"},
	{"bundle hash and query", "    at n (https://app.acme.io/assets/chunk-3f2a9c.js?v=12#x:1:23456)", "n (/assets/chunk-<hash>.js)"},
	{"next chunk", "    at __webpack_require__.f.j (https://preview-17.vercel.app/_next/static/chunks/webpack-0a1b2c3d4e5f6a7b.js:1:3211)", "__webpack_require__.f.j (/_next/static/chunks/webpack-<hash>.js)"},
	{"vite hash", "    at render (https://acme.io/assets/index-DqHkzWbQ.js:40:2)", "render (/assets/index-<hash>.js)"},
	{"camel case is no hash", "    at render (/app/src/UserList.tsx:4:2)", "render (/app/src/UserList.tsx)"},
	{"ids in a path", "    at run (/tmp/build-1234/550e8400/app.js:1:2)", "run (/tmp/build-<hash>/<hash>/app.js)"},
	{"firefox", "handler@https://acme.io/static/js/main.3f2a9c1b.chunk.js:1:2345\n@https://acme.io/x.js:1:1", "handler (/static/js/main.<hash>.chunk.js)"},
	{"go panic", `panic: runtime error: index out of range [5] with length 3

goroutine 7 [running]:
panic({0x8f3e20?, 0xc000012345?})
	/usr/local/go/src/runtime/panic.go:770 +0x132
runtime.goPanicIndex(0x5, 0x3)
	/usr/local/go/src/runtime/panic.go:115 +0x74
github.com/acme/shop/handlers.(*Server).ListItems(0xc0000a6000, {0x9a4d60, 0xc0001e2000})
	/build/handlers/orders.go:88 +0x1d
net/http.HandlerFunc.ServeHTTP(0x0?, {0x9a4d60?, 0xc0001e2000?}, 0x0?)
	/usr/local/go/src/net/http/server.go:2166 +0x29
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3285 +0x4b4`,
		"github.com/acme/shop/handlers.(*Server).ListItems (orders.go)"},
	{"go main", "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\n", "main.main (main.go)"},
	{"go module cache", "goroutine 1 [running]:\ngithub.com/lib/pq.(*conn).Exec(...)\n\t/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go:100 +0x1\nmyapp/store.Save(0x1)\n\t/src/store/save.go:9 +0x2\n", "myapp/store.Save (save.go)"},
	{"go trimpath dependency", "goroutine 1 [running]:\ngopkg.in/yaml.v3.unmarshal(0x1)\n\tgopkg.in/yaml.v3@v3.0.1/yaml.go:161 +0x1\ngithub.com/acme/cfg.Load()\n\tgithub.com/acme/cfg/load.go:20 +0x2\n", "github.com/acme/cfg.Load (load.go)"},
	{"go only created by", "goroutine 5 [running]:\ncreated by main.start in goroutine 1\n\t/app/main.go:30 +0x1\n", ""},
	{"python", `Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/django/core/handlers/exception.py", line 55, in inner
    response = get_response(request)
  File "/app/api/views.py", line 31, in get_user
    return extract(payload)
  File "/app/api/payload.py", line 8, in extract
    return payload["user_id"]
  File "/usr/local/lib/python3.12/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
KeyError: 'user_id'`,
		"extract (/app/api/payload.py)"},
	{"python source lines", "Traceback (most recent call last):\n  File \"/app/a.py\", line 3, in f\n    at (x)\n  File \"/app/b.py\", line 9, in g\n    at foo (bar.js:1:2)\nValueError: x", "g (/app/b.py)"},
	{"python frozen", "Traceback (most recent call last):\n  File \"<frozen importlib._bootstrap>\", line 1, in _find\n", "_find (<frozen importlib._bootstrap>)"},
	{"java", `java.lang.NullPointerException: x
	at java.base/java.util.Objects.requireNonNull(Objects.java:233)
	at com.acme.billing.InvoiceService.total(InvoiceService.java:42)
	at org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:883)
	... 23 more`,
		"com.acme.billing.InvoiceService.total (InvoiceService.java)"},
	{"only dependencies", "    at a (node_modules/x/a.js:1:2)\n    at b (node_modules/x/b.js:3:4)", "a (node_modules/x/a.js)"},
	{"crlf", "Error: x\r\n    at f (/app/a.js:1:2)\r\n", "f (/app/a.js)"},
}

func TestTopFrame(t *testing.T) {
	for _, c := range frameCases {
		t.Run(c.name, func(t *testing.T) {
			if got := fingerprint.TopFrame(c.stack); got != c.want {
				t.Errorf("TopFrame\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

// TestTopFrameLineNumbers: the same frames at other lines and columns, in
// another build, are the same frame.
func TestTopFrameLineNumbers(t *testing.T) {
	a := fingerprint.TopFrame("    at f (https://a.example.com/assets/index-1a2b3c4d.js:10:20)\n")
	for _, other := range []string{
		"    at f (https://b.example.com/assets/index-9f8e7d6c.js:99:7)\n",
		"    at f (https://b.example.com/assets/index-93817264.js:1:1)\n", // a hash without a letter
	} {
		if b := fingerprint.TopFrame(other); a != b {
			t.Errorf("%q != %q", a, b)
		}
	}
}
