package cloudwatch

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/internal/errtext"
)

// parsed is what a log line says about an error.
type parsed struct {
	Type, Message, Stack, Function string
}

// parseMessage reads an error out of a log event's message: a JSON line
// (Lambda's JSON log format, slog, pino, winston, Datadog-style fields), a
// logfmt line, Lambda's text format ("<time>\t<request id>\tERROR\t...",
// Python's "[ERROR] ..."), a Go panic, or a bare stack trace. ok is false
// for a line that is not an error although a broad filter pattern matched
// it: Lambda's START/END/REPORT lines, and lines whose level is debug or
// info.
func parseMessage(msg string) (parsed, bool) {
	text := strings.TrimSpace(strings.ReplaceAll(msg, "\r\n", "\n"))
	if text == "" || isPlatformLine(text) {
		return parsed{}, false
	}
	level, body := stripPrefix(text)
	if quiet(level) {
		return parsed{}, false
	}
	// Lambda's Node.js runtime: "Invoke Error \t{...}", "Uncaught
	// Exception \t{...}", "Unhandled Promise Rejection \t{...}".
	if i := strings.Index(body, "\t{"); i > 0 && i < 40 {
		if p, ok, isJSON := fromJSONText(body[i+1:]); isJSON {
			return p, ok
		}
	}
	if strings.HasPrefix(body, "{") {
		if p, ok, isJSON := fromJSONText(body); isJSON {
			return p, ok
		}
	}
	if m, ok := logfmt(body); ok {
		return fromFields(m)
	}
	parts := errtext.Split(body)
	if parts.Message == "" {
		parts.Message = errtext.Clip(errtext.FirstLine(text), errtext.MaxMessageBytes)
	}
	return parsed{Type: parts.Type, Message: parts.Message, Stack: parts.Stack}, true
}

// isPlatformLine: the lines Lambda writes around every invocation.
func isPlatformLine(s string) bool {
	for _, p := range []string{"START RequestId:", "END RequestId:", "REPORT RequestId:", "INIT_START ", "INIT_REPORT ", "EXTENSION ", "TELEMETRY "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var levels = map[string]bool{
	"TRACE": true, "DEBUG": true, "INFO": true, "NOTICE": true, "WARN": true, "WARNING": true,
	"ERROR": true, "ERR": true, "FATAL": true, "CRITICAL": true, "CRIT": true, "PANIC": true, "ALERT": true, "EMERGENCY": true,
}

// quiet: a level that says the line is not an error.
func quiet(level string) bool {
	switch strings.ToUpper(level) {
	case "TRACE", "DEBUG", "INFO", "NOTICE", "LOG":
		return true
	}
	return false
}

// stripPrefix removes the prefixes runtimes put before the message and
// returns the level among them, if any:
//
//	2024-05-01T12:00:00.000Z\t<request id>\tERROR\t<message>   (Lambda, Node.js)
//	[ERROR]\t2024-05-01T12:00:00.000Z\t<request id>\t<message> (Lambda, Python)
//	[ERROR] <message>
//	2024-05-01T12:00:00.000Z <request id> Task timed out after 3.00 seconds
//	ERROR: <message>, ERROR <message>
func stripPrefix(text string) (level, body string) {
	if f := strings.SplitN(text, "\t", 4); len(f) == 4 && isTime(f[0]) && levels[strings.ToUpper(f[2])] {
		return f[2], strings.TrimSpace(f[3])
	}
	if rest, ok := strings.CutPrefix(text, "["); ok {
		if lv, after, ok := strings.Cut(rest, "]"); ok && levels[strings.ToUpper(lv)] {
			after = strings.TrimLeft(after, " \t")
			if f := strings.SplitN(after, "\t", 3); len(f) == 3 && isTime(f[0]) {
				after = f[2]
			}
			return lv, strings.TrimSpace(after)
		}
	}
	if f := strings.SplitN(text, " ", 3); len(f) == 3 && isTime(f[0]) && looksLikeRequestID(f[1]) {
		return "", f[2]
	}
	if word, after, ok := strings.Cut(text, " "); ok {
		if lv := strings.TrimSuffix(word, ":"); levels[lv] {
			return lv, strings.TrimSpace(after)
		}
	}
	return "", text
}

func isTime(s string) bool {
	if len(s) < 20 || s[4] != '-' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// looksLikeRequestID: a UUID, as Lambda's request ids are.
func looksLikeRequestID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}

// fromJSONText parses a JSON object line. isJSON is false when it is not
// one (then the line is read as text).
func fromJSONText(s string) (p parsed, ok, isJSON bool) {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return parsed{}, false, false
	}
	p, ok = fromFields(m)
	return p, ok, true
}

// fromFields reads the fields of a structured log line.
func fromFields(m map[string]any) (parsed, bool) {
	if quiet(str(m, "level", "severity", "levelname", "log.level", "lvl", "loglevel")) {
		return parsed{}, false
	}
	if n, ok := m["level"].(float64); ok && n < 40 {
		// pino's numeric levels: 10 trace, 20 debug, 30 info, 40 warn,
		// 50 error, 60 fatal.
		return parsed{}, false
	}
	function := str(m, "function", "functionName", "function_name", "handler", "route", "http.route", "function.name", "function.path", "fn")
	// Lambda's JSON format puts a logged error object in "message".
	if inner, ok := m["message"].(map[string]any); ok {
		p, ok := fromFields(inner)
		if p.Function == "" {
			p.Function = function
		}
		return p, ok
	}
	typ := str(m, "errorType", "error_type", "exception_type", "error.type", "error.kind", "exception.type", "err.type", "exception.class", "error.name", "err.name")
	errText := str(m, "errorMessage", "error_message", "error.message", "err.message", "exception.message", "err", "error", "exception")
	summary := str(m, "msg", "message")
	stack := stackOf(m)
	if typ == "" {
		for _, k := range []string{"type", "name"} {
			if v := str(m, k); errtext.LooksLikeClass(v) {
				typ = v
				break
			}
		}
	}
	var p parsed
	switch {
	case errText != "":
		parts := errtext.Split(errText)
		p = parsed{Type: parts.Type, Message: parts.Message, Stack: parts.Stack}
		if summary != "" && summary != errText && !strings.HasPrefix(errText, summary) {
			// slog and friends: "msg" says what failed, "err" why.
			p.Message = errtext.Clip(errtext.FirstLine(summary)+": "+p.Message, errtext.MaxMessageBytes)
		}
	case summary != "":
		parts := errtext.Split(summary)
		p = parsed{Type: parts.Type, Message: parts.Message, Stack: parts.Stack}
	case stack != "":
		parts := errtext.Split(stack)
		p = parsed{Type: parts.Type, Message: parts.Message}
	default:
		return parsed{}, false
	}
	if typ != "" {
		p.Type = errtext.Clip(typ, errtext.MaxTypeBytes)
		p.Message = strings.TrimPrefix(p.Message, typ+": ")
	}
	if stack != "" {
		p.Stack = errtext.Clip(stack, errtext.MaxStackBytes)
		if p.Type == "" {
			// Node's error.stack starts with "TypeError: message".
			p.Type = errtext.Split(stack).Type
		}
	}
	p.Function = function
	return p, true
}

// stackOf finds a stack trace, as a string or as an array of frames.
func stackOf(m map[string]any) string {
	for _, k := range []string{"stack", "stackTrace", "stack_trace", "stacktrace", "error.stack", "err.stack", "error.stack_trace", "exception.stacktrace", "exception.stack_trace", "trace"} {
		switch v := lookup(m, k).(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		case []any:
			lines := make([]string, 0, len(v))
			for _, f := range v {
				if s, ok := f.(string); ok {
					lines = append(lines, s)
				}
			}
			if len(lines) > 0 {
				return strings.Join(lines, "\n")
			}
		}
	}
	return ""
}

// str returns the first non-empty string value among keys.
func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := lookup(m, k).(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// lookup finds a key as written ("error.message", as Datadog flattens
// it) or as a path through nested objects.
func lookup(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	head, rest, ok := strings.Cut(key, ".")
	if !ok {
		return nil
	}
	if inner, ok := m[head].(map[string]any); ok {
		return lookup(inner, rest)
	}
	return nil
}

// logfmt parses a "key=value key2=\"quoted value\"" line, as slog's text
// handler and logrus write them. ok needs a level and a msg key.
func logfmt(s string) (map[string]any, bool) {
	if !strings.Contains(s, "level=") || !strings.Contains(s, "msg=") || strings.Contains(s, "\n") {
		return nil, false
	}
	m := map[string]any{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimLeft(s, " ") {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.ContainsAny(s[:eq], " \"") {
			return nil, false
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			s = s[len(q):]
		} else {
			val, s, _ = strings.Cut(s, " ")
		}
		m[key] = val
	}
	_, hasLevel := m["level"]
	_, hasMsg := m["msg"]
	return m, hasLevel && hasMsg
}

// lambdaFunction is the function a Lambda log group belongs to.
func lambdaFunction(group string) string {
	if _, name, ok := strings.Cut(group, ":log-group:"); ok {
		group = strings.TrimSuffix(name, ":*")
	}
	name, _ := strings.CutPrefix(group, "/aws/lambda/")
	if name == group {
		return ""
	}
	return name
}
