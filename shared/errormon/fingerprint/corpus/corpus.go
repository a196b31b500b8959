// Package corpus generates a labelled corpus of error events for
// measuring grouping: occurrences of known causes, as Convex, Node, Go,
// Python, Java and plain log lines print them, with their ids, numbers,
// e-mails, URLs, timestamps, durations, quoted values, stack line numbers
// and dependency versions varied, and near-misses (causes that differ by
// one field name, function, type, frame or status code) that a grouping
// must keep apart.
//
// It is generated in memory from a seed, so it is the same in every run
// and needs no data file (nor a test that the file is up to date). The
// fingerprint tests score precision and recall on it and benchmark on it;
// it is a package, not a test file, so that a benchmark of the whole
// error monitor can read the same stream of events.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// Event is one occurrence and the cause it is an occurrence of.
type Event struct {
	Label string
	source.Event
}

// cause is one labelled cause and how to print an occurrence of it.
type cause struct {
	label string
	gen   func(g *gen) source.Event
}

// Labels lists the corpus's causes.
func Labels() []string {
	out := make([]string, len(causes))
	for i, c := range causes {
		out[i] = c.label
	}
	return out
}

// Generate returns about perCause occurrences of each cause (between half
// and one and a half times as many, so that groups differ in size, as
// they do), shuffled, the same for the same seed.
func Generate(seed uint64, perCause int) []Event {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var out []Event
	for _, c := range causes {
		n := perCause/2 + g.r.IntN(perCause+1)
		for range n {
			e := c.gen(g)
			e.ID = fmt.Sprintf("evt-%06d", len(out))
			e.Time = base.Add(time.Duration(g.r.Int64N(int64(72 * time.Hour))))
			out = append(out, Event{Label: c.label, Event: e})
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// gen draws the variable parts of an occurrence.
type gen struct{ r *rand.Rand }

func (g *gen) n(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	base32 = "0123456789abcdefghjkmnpqrstvwxyz" // Convex document ids
	base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	hexes  = "0123456789abcdef"
)

// convexID: a Convex document id, 32 characters of base32.
func (g *gen) convexID() string { return g.chars(base32, 32) }

func (g *gen) hex(n int) string { return g.chars(hexes, n) }

func (g *gen) uuid() string {
	return g.hex(8) + "-" + g.hex(4) + "-4" + g.hex(3) + "-" + g.pick("8", "9", "a", "b") + g.hex(3) + "-" + g.hex(12)
}

// stripeID: a Stripe object id (cus_NffrFeUfNV2Hib).
func (g *gen) stripeID(prefix string) string { return prefix + "_" + g.chars(base62, g.n(14, 24)) }

func (g *gen) email() string {
	user := g.pick("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy")
	switch g.r.IntN(4) {
	case 0:
		user += fmt.Sprint(g.n(1, 9999))
	case 1:
		user += "." + g.pick("smith", "jones", "nguyen", "garcia", "muller")
	case 2:
		user += "+" + g.pick("test", "billing", "dev")
	}
	return user + "@" + g.pick("example.com", "gmail.com", "acme.io", "mail.example.co.uk", "corp.internal")
}

func (g *gen) ip() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("10.%d.%d.%d", g.n(0, 255), g.n(0, 255), g.n(1, 254))
	case 1:
		return fmt.Sprintf("%d.%d.%d.%d", g.n(1, 223), g.n(0, 255), g.n(0, 255), g.n(1, 254))
	}
	return fmt.Sprintf("2001:db8:%x::%x", g.n(1, 0xffff), g.n(1, 0xffff))
}

func (g *gen) host() string {
	return g.pick("db", "api", "cache", "inventory", "billing") + fmt.Sprint(g.n(1, 9)) + "." +
		g.pick("internal", "example.com", "svc.cluster.local", "eu-west-1.rds.amazonaws.com")
}

// ts: a timestamp as RFC 3339 with milliseconds.
func (g *gen) ts() string { return g.time().Format("2006-01-02T15:04:05.000Z07:00") }

func (g *gen) time() time.Time {
	return time.Date(2026, time.Month(g.n(1, 12)), g.n(1, 28), g.n(0, 23), g.n(0, 59), g.n(0, 59), g.n(0, 999)*1e6, time.UTC)
}

// dur: a duration as programs print them: 1532ms, 1.53s, 2m3s.
func (g *gen) dur() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%dms", g.n(1, 99999))
	case 1:
		return fmt.Sprintf("%.2fs", float64(g.n(1, 9999))/100)
	}
	return (time.Duration(g.n(1, 7200)) * time.Second).String()
}

// quotedValue: a value a user typed, as it ends up quoted in a message.
func (g *gen) quotedValue() string {
	switch g.r.IntN(5) {
	case 0:
		return fmt.Sprint(g.n(-999, 99999))
	case 1:
		return g.email()
	case 2:
		return g.pick("hello world", "N/A", "", "two words", "ümlaut text") + fmt.Sprint(g.n(0, 9))
	case 3:
		return g.convexID()
	}
	return g.pick("abc", "x", "true", "null") + "-" + fmt.Sprint(g.n(0, 999))
}

// line, col: a stack frame's position, which moves with every deploy.
func (g *gen) line() int { return g.n(1, 900) }
func (g *gen) col() int  { return g.n(1, 80) }

// v8 prints V8 frames, innermost first: fn and file pairs ("" fn for an
// anonymous frame), then the runtime frames under them.
func (g *gen) v8(frames ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(frames); i += 2 {
		fn, file := frames[i], frames[i+1]
		if fn == "" {
			fmt.Fprintf(&b, "    at %s:%d:%d\n", file, g.line(), g.col())
		} else {
			fmt.Fprintf(&b, "    at %s (%s:%d:%d)\n", fn, file, g.line(), g.col())
		}
	}
	return b.String()
}

// convexTail: the frames of Convex's own runtime under a handler; the
// bundled package's path carries its version.
func (g *gen) convexTail() string {
	v := fmt.Sprintf("1.%d.%d", g.n(10, 17), g.n(0, 9))
	return g.v8("async invokeFunction", "../../node_modules/.pnpm/convex@"+v+"/node_modules/convex/dist/esm/server/impl/registration_impl.js",
		"async invokeQuery", "../../node_modules/.pnpm/convex@"+v+"/node_modules/convex/dist/esm/server/impl/registration_impl.js")
}

// nodeTail: Node's own frames under application code.
func (g *gen) nodeTail() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return fmt.Sprintf("    at process.processTicksAndRejections (node:internal/process/task_queues:%d:%d)\n", g.n(60, 105), g.n(1, 9))
}

// convexEvent reports a Convex failure the ways sources do: the type apart
// or left in the message (with "Uncaught "), the stack apart or after the
// message.
func (g *gen) convexEvent(fn, typ, msg, stack string) source.Event {
	e := source.Event{Function: fn}
	switch g.r.IntN(3) {
	case 0:
		e.Type, e.Message = typ, msg
	case 1:
		e.Message = "Uncaught " + typ + ": " + msg
	default:
		e.Message = typ + ": " + msg
	}
	if g.r.IntN(3) == 0 {
		e.Message += "\n" + stack
	} else {
		e.Stack = typ + ": " + msg + "\n" + stack
	}
	return e
}

// goPanic prints a Go panic's goroutine trace: the runtime's frames, then
// fn in file, then net/http's.
func (g *gen) goPanic(runtimeFrames, fn, file string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goroutine %d [running]:\n", g.n(1, 9000))
	b.WriteString(runtimeFrames)
	fmt.Fprintf(&b, "%s(0xc%09x, {0x%x, 0xc%09x})\n\t%s:%d +0x%x\n", fn, g.r.Int64N(1<<36), g.r.Int64N(1<<24), g.r.Int64N(1<<36), file, g.line(), g.n(16, 4096))
	fmt.Fprintf(&b, "net/http.HandlerFunc.ServeHTTP(0x%x, {0x%x, 0xc%09x}, 0xc%09x)\n\t/usr/local/go/src/net/http/server.go:%d +0x29\n", g.r.Int64N(1<<24), g.r.Int64N(1<<24), g.r.Int64N(1<<36), g.r.Int64N(1<<36), g.n(2100, 2200))
	fmt.Fprintf(&b, "created by net/http.(*Server).Serve in goroutine %d\n\t/usr/local/go/src/net/http/server.go:%d +0x4b4\n", g.n(1, 50), g.n(3200, 3300))
	return b.String()
}

// pyTraceback prints a Python traceback, outermost first: the framework's
// frames, then the application's (file, fn pairs).
func (g *gen) pyTraceback(last string, frames ...string) string {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	py := g.pick("3.11", "3.12")
	fmt.Fprintf(&b, "  File \"/usr/local/lib/python%s/site-packages/django/core/handlers/exception.py\", line %d, in inner\n    response = get_response(request)\n", py, g.n(50, 60))
	for i := 0; i+1 < len(frames); i += 2 {
		fmt.Fprintf(&b, "  File \"%s\", line %d, in %s\n    pass\n", frames[i], g.line(), frames[i+1])
	}
	b.WriteString(last)
	return b.String()
}
