package fingerprint

import "strings"

// Bounds on TopFrame: a stack is read up to maxStack bytes (the top
// frames are first, or for Python last, within any plausible trace), and
// the frame written is at most maxFrame bytes.
const (
	maxStack = 64 << 10
	maxFrame = 256
)

// frame is one parsed stack frame.
type frame struct {
	fn, file string
	app      bool // in-app: not a dependency, runtime or builtin
}

// TopFrame returns the top in-app frame of a stack trace as
// "function (file)", without line and column numbers, with query strings
// and bundler hashes taken out of the file name; "" when stack holds no
// frame. It reads V8 (JavaScript, TypeScript, Convex), Firefox and
// Safari, Go panics, Python tracebacks and Java. In-app means not
// node_modules, node: or V8 internals, the Go runtime, standard library
// or module cache, Python's site-packages or standard library, the JDK or
// a well-known framework, or Convex's own bundled code. A stack with no
// in-app frame gives its top frame: a dependency's frame still tells two
// causes apart.
func TopFrame(stack string) string {
	stack = cut(stack, maxStack)
	var first, last, app frame
	var found, python bool
	goFn, goCreated := "", false
	for len(stack) > 0 {
		line := stack
		if nl := strings.IndexByte(stack, '\n'); nl >= 0 {
			line, stack = stack[:nl], stack[nl+1:]
		} else {
			stack = ""
		}
		line = strings.TrimRight(line, "\r")
		t := strings.TrimSpace(line)
		var f frame
		var ok bool
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "at "):
			f, ok = v8Frame(t[3:])
		case strings.HasPrefix(t, `File "`):
			f, ok = pythonFrame(t)
			python = python || ok
		case line[0] == '\t' && goFn != "" && strings.Contains(t, ".go:"):
			f, ok = goFrame(goFn, t)
			ok = ok && !goCreated
			goFn = ""
		case strings.HasPrefix(t, "created by "):
			goFn, goCreated = t, true
			continue
		case goFuncLine(t):
			goFn, goCreated = t, false
			continue
		default:
			f, ok = firefoxFrame(t)
		}
		// In a Python traceback each frame is followed by its source
		// line, which may read like a frame of another language.
		if !ok || (python && !strings.HasPrefix(t, `File "`)) {
			continue
		}
		if first.fn == "" && first.file == "" {
			first = f
		}
		last = f
		if f.app && (!found || python) {
			app, found = f, true
			if !python {
				break // innermost first: nothing below is nearer the throw
			}
		}
	}
	switch {
	case found:
		return app.String()
	case python:
		// Python prints the innermost frame last.
		return last.String()
	}
	return first.String()
}

// String writes a frame as "function (file)", or the one it has.
func (f frame) String() string {
	var s string
	switch {
	case f.fn != "" && f.file != "":
		s = f.fn + " (" + f.file + ")"
	case f.fn != "":
		s = f.fn
	default:
		s = f.file
	}
	return cut(s, maxFrame)
}

// v8Frame parses what follows "at " in a V8 or Java frame:
// "fn (file:line:col)", "file:line:col", "async fn (...)",
// "com.x.Y.m(Y.java:12)".
func v8Frame(s string) (frame, bool) {
	s = strings.TrimPrefix(s, "async ")
	fn, loc := "", s
	if strings.HasSuffix(s, ")") {
		depth, open := 0, -1
		for k := len(s) - 1; k >= 0; k-- {
			if s[k] == ')' {
				depth++
			} else if s[k] == '(' {
				depth--
				if depth == 0 {
					open = k
					break
				}
			}
		}
		if open > 0 {
			fn, loc = strings.TrimSpace(s[:open]), s[open+1:len(s)-1]
		}
	}
	if fn == "" && loc == "" {
		return frame{}, false
	}
	java := fn != "" && !strings.ContainsRune(fn, ' ') && s[len(fn)] == '('
	file, hasLine := stripLineCol(loc)
	f := frame{fn: fn}
	switch {
	case java:
		f.file = file
		f.app = !javaDependency(fn)
	case !hasLine:
		// native, <anonymous>, "index 0", "eval at ...": V8 builtins.
		if fn == "" {
			return frame{}, false
		}
	default:
		f.file = normFile(file)
		f.app = !jsDependency(file)
	}
	return f, true
}

// firefoxFrame parses "fn@file:line:col" (Firefox, Safari, JavaScriptCore).
func firefoxFrame(t string) (frame, bool) {
	at := strings.IndexByte(t, '@')
	if at < 0 || strings.ContainsAny(t, " \t") {
		return frame{}, false
	}
	file, hasLine := stripLineCol(t[at+1:])
	if !hasLine {
		return frame{}, false
	}
	return frame{fn: t[:at], file: normFile(file), app: !jsDependency(file)}, true
}

// stripLineCol removes up to two trailing ":<digits>" from a location.
func stripLineCol(loc string) (string, bool) {
	had := false
	for n := 0; n < 2; n++ {
		k := strings.LastIndexByte(loc, ':')
		if k < 0 || k == len(loc)-1 || digitsAt(loc, k+1) != len(loc) {
			break
		}
		loc, had = loc[:k], true
	}
	return loc, had
}

// jsDependency: a JavaScript frame from a package, the runtime or
// Convex's own bundled code rather than the application.
func jsDependency(file string) bool {
	for _, prefix := range [...]string{"node:", "internal/", "ext:", "bun:", "deno:", "chrome-extension:", "moz-extension:", "webpack/bootstrap", "_deps/"} {
		if strings.HasPrefix(file, prefix) {
			return true
		}
	}
	for _, part := range [...]string{"node_modules/", "/_deps/", "convex/dist/", "/_generated/", "<anonymous>"} {
		if strings.Contains(file, part) {
			return true
		}
	}
	return false
}

// javaDependency: a JVM frame from the JDK or a well-known library.
func javaDependency(fn string) bool {
	for _, prefix := range [...]string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.",
		"org.springframework.", "org.apache.", "org.hibernate.", "org.junit.", "io.netty.", "reactor.",
		"okhttp3.", "com.fasterxml.", "org.eclipse.jetty.", "com.google.common.", "io.micronaut.", "io.quarkus."} {
		if strings.HasPrefix(fn, prefix) {
			return true
		}
	}
	return false
}

// pythonFrame parses `File "path", line 12, in fn`.
func pythonFrame(t string) (frame, bool) {
	rest := t[len(`File "`):]
	q := strings.IndexByte(rest, '"')
	if q < 0 {
		return frame{}, false
	}
	file := rest[:q]
	fn := ""
	if k := strings.LastIndex(rest, ", in "); k > q {
		fn = strings.TrimSpace(rest[k+len(", in "):])
	}
	dep := strings.HasPrefix(file, "<") || strings.Contains(file, "site-packages/") ||
		strings.Contains(file, "dist-packages/") || strings.Contains(file, "/lib/python")
	return frame{fn: fn, file: normFile(file), app: !dep}, true
}

// goFuncLine: a Go panic's function line, "pkg.fn(args)" or
// "pkg.(*T).m(...)", which the file line that follows belongs to.
func goFuncLine(t string) bool {
	k := strings.LastIndexByte(t, '(')
	return k > 0 && strings.HasSuffix(t, ")") && strings.ContainsRune(t[:k], '.') &&
		!strings.ContainsAny(t[:k], " \t")
}

// goFrame pairs a function line with its "\t/path/file.go:123 +0x1d".
func goFrame(fnLine, fileLine string) (frame, bool) {
	fn := fnLine
	if k := strings.LastIndexByte(fn, '('); k > 0 {
		fn = fn[:k]
	}
	file := fileLine
	if k := strings.Index(file, ".go:"); k >= 0 {
		file = file[:k+3]
	}
	dep := strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "/vendor/") ||
		strings.Contains(file, "@v") || goStd(fn)
	// The function is fully qualified; the file's directory is the
	// build machine's, so only its name is kept.
	return frame{fn: fn, file: file[strings.LastIndexByte(file, '/')+1:], app: !dep}, true
}

// goStd: the function is in the Go runtime or standard library, whose
// import paths have no dot in their first element (main, which has none
// either, is the application).
func goStd(fn string) bool {
	if strings.HasPrefix(fn, "panic") || strings.HasPrefix(fn, "runtime.") {
		return true
	}
	pkg := fn
	slash := strings.LastIndexByte(pkg, '/')
	if k := strings.IndexByte(pkg[slash+1:], '.'); k >= 0 {
		pkg = pkg[:slash+1+k]
	}
	top := pkg
	if k := strings.IndexByte(pkg, '/'); k >= 0 {
		top = pkg[:k]
	}
	switch top {
	case "archive", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto", "database",
		"debug", "embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash", "html", "image",
		"index", "internal", "io", "iter", "log", "maps", "math", "mime", "net", "os", "path", "plugin",
		"reflect", "regexp", "runtime", "slices", "sort", "strconv", "strings", "sync", "syscall",
		"testing", "text", "time", "unicode", "unique", "unsafe", "weak":
		return true
	}
	return false
}

// normFile takes out of a file name what changes between builds and
// deployments of the same code: a URL's scheme and host, a query string
// or fragment (cache busters), and ids and bundler hashes in its path
// (chunk-3f2a9c.js is chunk-<hash>.js, /tmp/build-1234/ is
// /tmp/build-<hash>/).
func normFile(file string) string {
	file = strings.TrimPrefix(file, "file://")
	if k := strings.Index(file, "://"); k >= 0 {
		rest := file[k+3:]
		if s := strings.IndexByte(rest, '/'); s >= 0 {
			file = rest[s:]
		} else {
			file = ""
		}
	}
	if k := strings.IndexAny(file, "?#"); k >= 0 {
		file = file[:k]
	}
	if !needsNorm(file) {
		return file
	}
	b := make([]byte, 0, len(file)+8)
	start := 0
	for i := 0; i <= len(file); i++ {
		if i < len(file) && file[i] != '/' && file[i] != '.' && file[i] != '-' && file[i] != '_' {
			continue
		}
		part := file[start:i]
		switch {
		case part == "":
		case allDigits(part) || hashLike(part):
			// A number in a file name is a chunk id, a build
			// number, or a hash that happens to have no letter:
			// generated, like a hash, and written the same.
			b = append(b, phHash...)
		default:
			b = append(b, part...)
		}
		if i < len(file) {
			b = append(b, file[i])
		}
		start = i + 1
	}
	return string(b)
}

// needsNorm: the file name has a digit or an upper-case letter, without
// which none of its parts is an id or a hash; most names have neither,
// and are returned without a copy.
func needsNorm(file string) bool {
	for i := 0; i < len(file); i++ {
		if isDigit(file[i]) || isUpper(file[i]) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// hashLike: a part of a file name that a bundler or build generated:
// six or more hex digits with a digit among them (webpack, esbuild), or
// eight or more letters and digits with both (Vite's base64url), or eight
// letters of mixed case that are not a CamelCase word (a Vite hash that
// happens to have no digit).
func hashLike(p string) bool {
	sh := shapeOf(p)
	if sh.other > 0 {
		return false
	}
	if sh.allHex && sh.digits > 0 && len(p) >= 6 {
		return true
	}
	if sh.digits > 0 && sh.letters > 0 && len(p) >= 8 {
		return true
	}
	if len(p) == 8 && sh.digits == 0 {
		upper, lower := 0, 0
		for i := 1; i < len(p); i++ {
			if isUpper(p[i]) {
				upper++
			} else if isLower(p[i]) {
				lower++
			}
		}
		return upper >= 3 && lower >= 3
	}
	return false
}
