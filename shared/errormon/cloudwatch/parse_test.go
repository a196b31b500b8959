package cloudwatch

import (
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	const rid = "3f0c1a2b-1111-2222-3333-444455556666"
	tests := []struct {
		name, msg        string
		skip             bool
		typ, message, fn string
		stackStart       string
	}{
		{name: "lambda node invoke error",
			msg: "2024-05-01T12:00:00.000Z\t" + rid + "\tERROR\tInvoke Error \t" + `{"errorType":"TypeError","errorMessage":"Cannot read properties of undefined (reading 'id')","stack":["TypeError: Cannot read properties of undefined (reading 'id')","    at Runtime.handler (file:///var/task/index.mjs:3:22)"]}`,
			typ: "TypeError", message: "Cannot read properties of undefined (reading 'id')", stackStart: "TypeError: Cannot read"},
		{name: "lambda node console.error",
			msg:     "2024-05-01T12:00:00.000Z\t" + rid + "\tERROR\tpayment failed: Error: card declined\n    at charge (/var/task/pay.js:10:5)",
			message: "payment failed: Error: card declined", stackStart: "    at charge"},
		{name: "lambda node info", msg: "2024-05-01T12:00:00.000Z\t" + rid + "\tINFO\tno error here", skip: true},
		{name: "lambda platform START", msg: "START RequestId: " + rid + " Version: $LATEST", skip: true},
		{name: "lambda platform REPORT", msg: "REPORT RequestId: " + rid + "\tDuration: 2.00 ms", skip: true},
		{name: "lambda python unhandled",
			msg: "[ERROR] KeyError: 'user_id'\nTraceback (most recent call last):\n  File \"/var/task/app.py\", line 12, in handler\n    uid = event['user_id']",
			typ: "KeyError", message: "'user_id'", stackStart: "Traceback (most recent call last):"},
		{name: "lambda python logging", msg: "[ERROR]\t2024-05-01T12:00:00.000Z\t" + rid + "\tdatabase unavailable", message: "database unavailable"},
		{name: "lambda python logging info", msg: "[INFO]\t2024-05-01T12:00:00.000Z\t" + rid + "\tall good", skip: true},
		{name: "lambda JSON format, python",
			msg: `{"timestamp":"2024-05-01T12:00:00Z","level":"ERROR","message":"boom","logger":"root","requestId":"` + rid + `","errorType":"ValueError","errorMessage":"boom","stackTrace":["  File \"/var/task/app.py\", line 3, in handler\n    raise ValueError(\"boom\")\n"]}`,
			typ: "ValueError", message: "boom", stackStart: "  File \"/var/task/app.py\""},
		{name: "lambda JSON format, node error object",
			msg: `{"timestamp":"2024-05-01T12:00:00Z","level":"ERROR","requestId":"` + rid + `","message":{"errorType":"Error","errorMessage":"boom","stackTrace":["Error: boom","    at x (/var/task/a.js:1:1)"]}}`,
			typ: "Error", message: "boom", stackStart: "Error: boom"},
		{name: "slog JSON", msg: `{"time":"2024-05-01T12:00:00Z","level":"ERROR","msg":"upload failed","err":"open /tmp/x: no such file or directory","route":"POST /api/upload"}`,
			message: "upload failed: open /tmp/x: no such file or directory", fn: "POST /api/upload"},
		{name: "slog JSON info", msg: `{"time":"2024-05-01T12:00:00Z","level":"INFO","msg":"error budget fine"}`, skip: true},
		{name: "logfmt", msg: `time=2024-05-01T12:00:00Z level=ERROR msg="charge failed" err="stripe: card_declined" handler=billing.Charge`,
			message: "charge failed: stripe: card_declined", fn: "billing.Charge"},
		{name: "logfmt debug", msg: `time=2024-05-01T12:00:00Z level=DEBUG msg="retrying after error"`, skip: true},
		{name: "go panic",
			msg: "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a]\n\ngoroutine 1 [running]:\nmain.handler()\n\t/app/main.go:12 +0x1d",
			typ: "panic", message: "runtime error: invalid memory address or nil pointer dereference", stackStart: "[signal SIGSEGV"},
		{name: "node stack", msg: "TypeError: x is not a function\n    at y (/app/z.js:1:1)", typ: "TypeError", message: "x is not a function", stackStart: "    at y"},
		{name: "lambda timeout", msg: "2024-05-01T12:00:00.000Z " + rid + " Task timed out after 3.00 seconds", message: "Task timed out after 3.00 seconds"},
		{name: "nested error object", msg: `{"level":"error","message":"request failed","function":"checkout","error":{"kind":"TimeoutError","message":"upstream timed out","stack":"TimeoutError: upstream timed out\n    at f (a.js:1:1)"}}`,
			typ: "TimeoutError", message: "request failed: upstream timed out", fn: "checkout", stackStart: "TimeoutError: upstream"},
		{name: "pino", msg: `{"level":50,"time":1714564800000,"msg":"db error","err":{"type":"Error","message":"connect ECONNREFUSED 10.0.0.1:5432","stack":"Error: connect ECONNREFUSED\n    at TCPConnectWrap"}}`,
			typ: "Error", message: "db error: connect ECONNREFUSED 10.0.0.1:5432", stackStart: "Error: connect"},
		{name: "pino info", msg: `{"level":30,"msg":"error count 0"}`, skip: true},
		{name: "datadog flattened", msg: `{"status":"error","error.kind":"KeyError","error.message":"'x'","error.stack":"Traceback ..."}`, typ: "KeyError", message: "'x'", stackStart: "Traceback"},
		{name: "plain level prefix", msg: "ERROR: something broke", message: "something broke"},
		{name: "java", msg: "java.lang.IllegalStateException: closed\n\tat com.x.Y.z(Y.java:10)", typ: "java.lang.IllegalStateException", message: "closed", stackStart: "\tat com.x"},
		{name: "JSON without an error", msg: `{"level":"error"}`, skip: true},
		{name: "not JSON after all", msg: "{not json} failed", message: "{not json} failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := parseMessage(tt.msg)
			if ok == tt.skip {
				t.Fatalf("ok = %v, want %v (%+v)", ok, !tt.skip, p)
			}
			if tt.skip {
				return
			}
			if p.Type != tt.typ || p.Message != tt.message || p.Function != tt.fn {
				t.Fatalf("parsed %+v\nwant type %q message %q function %q", p, tt.typ, tt.message, tt.fn)
			}
			if !strings.HasPrefix(p.Stack, tt.stackStart) || (tt.stackStart == "" && p.Stack != "") {
				t.Fatalf("stack %q, want it to start with %q", p.Stack, tt.stackStart)
			}
		})
	}
}

func TestLambdaFunction(t *testing.T) {
	for group, want := range map[string]string{
		"/aws/lambda/checkout-api": "checkout-api",
		"arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/worker:*": "worker",
		"/ecs/web": "",
		"app-logs": "",
	} {
		if got := lambdaFunction(group); got != want {
			t.Errorf("lambdaFunction(%q) = %q, want %q", group, got, want)
		}
	}
}
