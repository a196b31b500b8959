package errtext

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name, text           string
		typ, msg, stackStart string
	}{
		{"convex uncaught", "Uncaught Error: boom\n    at handler (../convex/messages.ts:12:9)\n    at async invoke", "Error", "boom", "    at handler"},
		{"type error", "Uncaught TypeError: Cannot read properties of undefined (reading 'id')", "TypeError", "Cannot read properties of undefined (reading 'id')", ""},
		{"in promise", "Uncaught (in promise) AbortError: aborted", "AbortError", "aborted", ""},
		{"convex error data", `Uncaught ConvexError: {"code":"NOT_FOUND"}`, "ConvexError", `{"code":"NOT_FOUND"}`, ""},
		{"sentence, no type", "Could not connect: connection refused", "", "Could not connect: connection refused", ""},
		{"no colon", "Your request timed out", "", "Your request timed out", ""},
		{"go panic", "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:9 +0x1d", "panic", "runtime error: index out of range [5] with length 3", "goroutine 1 [running]:"},
		{"go panic recovered", "panic: boom [recovered]", "panic", "boom", ""},
		{"java", "java.lang.IllegalStateException: closed\n\tat com.x.Y.z(Y.java:10)", "java.lang.IllegalStateException", "closed", "\tat com.x.Y.z"},
		{"bare class", "java.lang.NullPointerException", "java.lang.NullPointerException", "java.lang.NullPointerException", ""},
		{"python traceback", "Traceback (most recent call last):\n  File \"/var/task/app.py\", line 10, in handler\n    x = d['k']\nKeyError: 'k'\n", "KeyError", "'k'", "Traceback (most recent call last):"},
		{"lambda runtime error", "Runtime.ImportModuleError: Error: Cannot find module 'x'", "Runtime.ImportModuleError", "Error: Cannot find module 'x'", ""},
		{"crlf", "Error: a\r\n  at b", "Error", "a", "  at b"},
		{"empty", "  \n ", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Split(tt.text)
			if p.Type != tt.typ || p.Message != tt.msg {
				t.Fatalf("Split = type %q message %q, want %q %q", p.Type, p.Message, tt.typ, tt.msg)
			}
			if !strings.HasPrefix(p.Stack, tt.stackStart) || (tt.stackStart == "" && p.Stack != "") {
				t.Fatalf("stack %q, want it to start with %q", p.Stack, tt.stackStart)
			}
		})
	}
}

func TestPythonTracebackStackExcludesTheErrorLine(t *testing.T) {
	p := Split("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: bad")
	if strings.Contains(p.Stack, "ValueError") || !strings.HasSuffix(p.Stack, "in <module>") {
		t.Fatalf("stack %q", p.Stack)
	}
}

func TestLooksLikeClass(t *testing.T) {
	for s, want := range map[string]bool{
		"TypeError": true, "Error": true, "java.io.IOException": true, "KeyboardInterrupt": true,
		"Note": false, "Could not connect": false, "": false, "a..Error": false, "1Error": false,
		"Runtime.HandlerNotFound": false, "x-Error": false, strings.Repeat("A", 200) + "Error": false,
	} {
		if got := LooksLikeClass(s); got != want {
			t.Errorf("LooksLikeClass(%q) = %v", s, got)
		}
	}
}

func TestClipKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	for n := range 21 {
		c := Clip(s, n)
		if len(c) > n || !utf8.ValidString(c) {
			t.Fatalf("Clip(%d) = %q", n, c)
		}
	}
	if Clip("abc", 10) != "abc" {
		t.Fatal("short string changed")
	}
}

func TestBoundedParts(t *testing.T) {
	p := Split("Error: " + strings.Repeat("x", 5000) + "\n" + strings.Repeat("  at f\n", 10000))
	if len(p.Message) > MaxMessageBytes || len(p.Stack) > MaxStackBytes {
		t.Fatalf("message %d, stack %d bytes", len(p.Message), len(p.Stack))
	}
}

func TestSince(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	if got := Since(time.Time{}, now); !got.Equal(now.Add(-time.Hour)) {
		t.Fatalf("zero since = %v", got)
	}
	s := now.Add(-5 * time.Minute)
	if got := Since(s, now); !got.Equal(s) {
		t.Fatalf("since = %v", got)
	}
}
