// Package lambda_test runs the Lambda functions' bootstrap binaries (built
// for this machine) under the Lambda Runtime Interface Emulator, against
// DynamoDB Local and fauxqs, with real API Gateway v2 (HTTP API), SQS and
// EventBridge event payloads, and compares the mcp function with the
// embedded server (functions/vantagepeers serve).
//
// Prerequisites (scripts/test-deps.sh installs them): .cache/bin/aws-lambda-rie,
// java for DynamoDB Local, node for fauxqs. Without them the tests skip
// loudly, or fail when CI=true.
package lambda_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/queue/sqs/sqstest"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// masterToken is the master token of both servers under test.
const masterToken = "1a2b3c4d1a2b3c4d1a2b3c4d1a2b3c4d1a2b3c4d1a2b3c4d1a2b3c4d1a2b3c4d"

// functions are the Lambda functions of the one table (awsenv.Functions).
var functions = awsenv.FunctionNames()

var (
	repoRoot string
	binDir   string // the built bootstraps and the embedded binary
	rieBin   string
	ddbOnce  sync.Once
	ddb      *dynamotest.Server
	ddbErr   error
	sqsOnce  sync.Once
	sqsSrv   *sqstest.Server
	sqsErr   error
	// sqsEndpoint is fauxqs's, once sqsClient started it.
	sqsEndpoint string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if repoRoot, err = dynamotest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, "lambda:", err)
		return 1
	}
	if binDir, err = os.MkdirTemp("", "vp-lambda-"); err != nil {
		fmt.Fprintln(os.Stderr, "lambda:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	code := m.Run()
	if ddb != nil {
		ddb.Stop()
	}
	if sqsSrv != nil {
		sqsSrv.Stop()
	}
	return code
}

// skipOrFail skips the test, or fails it when CI=true.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required with CI=true)", msg)
	}
	fmt.Fprintf(os.Stderr, "\n#### SKIPPING %s: %s\n", t.Name(), msg)
	t.Skip(msg)
}

var (
	buildMu sync.Mutex
	built   = map[string]bool{}
)

// binaries builds the named functions (functions/<name>; "vantagepeers" is
// the embedded binary) as the Makefile does, but for this machine (the
// deployed arm64 binaries cannot run here), each once per run; with no
// name, every function and the embedded binary. A test that runs one
// function links only that one.
func binaries(t testing.TB, names ...string) {
	t.Helper()
	if len(names) == 0 {
		names = append(slices.Clone(functions), "vantagepeers")
	}
	buildMu.Lock()
	var missing []string
	for _, n := range names {
		if !built[n] && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		// Not -trimpath nor CGO_ENABLED=0 as make lambdas: either changes
		// every package's build id, so the test would compile the whole
		// dependency graph a second time (about 2 CPU-minutes) for
		// binaries that only run here; make lambdas keeps the deployed flags.
		args := []string{"build", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", binDir + string(os.PathSeparator)}
		for _, n := range missing {
			args = append(args, "./functions/"+n)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			buildMu.Unlock()
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for _, n := range missing {
			built[n] = true
		}
	}
	rieBin = filepath.Join(repoRoot, ".cache", "bin", "aws-lambda-rie")
	buildMu.Unlock()
	if _, err := os.Stat(rieBin); err != nil {
		skipOrFail(t, "the Lambda Runtime Interface Emulator is not installed at %s (run scripts/test-deps.sh)", rieBin)
	}
}

// table creates a fresh table on DynamoDB Local, as the CDK stack defines
// it (dynamo.TableInput), and returns the endpoint and the table name.
func table(t testing.TB) (endpoint, name string) {
	t.Helper()
	ddbOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ddb, ddbErr = dynamotest.Launch(ctx)
	})
	if ddbErr != nil {
		if errors.Is(ddbErr, dynamotest.ErrUnavailable) {
			skipOrFail(t, "DynamoDB Local: %v", ddbErr)
		}
		t.Fatal(ddbErr)
	}
	name = fmt.Sprintf("vp-lambda-%d", time.Now().UnixNano())
	st, err := dynamo.New(context.Background(), dynamo.Options{Client: dynamotest.NewClient(context.Background(), ddb.Endpoint), Table: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ddb.Endpoint, name
}

// sqsClient starts fauxqs (once per run) and returns a client for it.
func sqsClient(t testing.TB) *awssqs.Client {
	t.Helper()
	sqsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sqsSrv, sqsErr = sqstest.Launch(ctx)
	})
	if sqsErr != nil {
		if errors.Is(sqsErr, sqstest.ErrUnavailable) {
			skipOrFail(t, "fauxqs: %v", sqsErr)
		}
		t.Fatal(sqsErr)
	}
	sqsEndpoint = sqsSrv.Endpoint
	return sqstest.NewClient(sqsSrv.Endpoint)
}

// baseEnv is the environment of a function under the emulator: dummy
// credentials (for the stand-ins only), no instance metadata probes.
func baseEnv(endpoint, tableName string) map[string]string {
	return map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_EC2_METADATA_DISABLED": "true",
		"VP_TABLE":                  tableName, "VP_DYNAMODB_ENDPOINT": endpoint,
		"VP_LOG_LEVEL": "info",
	}
}

func masterHash() string {
	h := sha256.Sum256([]byte(masterToken))
	return hex.EncodeToString(h[:])
}

// ---- the emulator ----

type rie struct {
	cmd     *exec.Cmd
	url     string
	out     *testproc.Output
	started time.Time
	done    chan struct{}
	// firstResponse is the time from starting the emulator and the
	// function to the first invocation's response (cold start).
	firstResponse time.Duration
}

// startRIE runs the function's bootstrap under the emulator on two free
// ports (the emulator's invoke API and its runtime API).
func startRIE(t testing.TB, fn string, env map[string]string) *rie {
	t.Helper()
	binaries(t, fn)
	p1, p2 := freePort(t), freePort(t)
	cmd := exec.Command(rieBin, "--runtime-interface-emulator-address", "127.0.0.1:"+strconv.Itoa(p1),
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(p2), filepath.Join(binDir, fn))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "TZ=UTC"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out := &testproc.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &rie{cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(p1) + "/2015-03-31/functions/function/invocations", out: out, done: make(chan struct{})}
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("%s under the emulator printed:\n%s", fn, out.String())
		}
	})
	return r
}

// stop kills the emulator and the function.
func (r *rie) stop() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
}

var invokeClient = &http.Client{Timeout: 60 * time.Second}

// invoke sends one event and returns the function's response payload,
// failing the test unless the emulator answers 200.
func (r *rie) invoke(t testing.TB, event any) []byte {
	t.Helper()
	status, b := r.invokeRaw(t, event)
	if status != http.StatusOK {
		t.Fatalf("invoke: HTTP %d: %s", status, b)
	}
	return b
}

// invokeRaw sends one event and returns the emulator's status and body. The
// first call waits for the emulator to listen and records the cold start.
func (r *rie) invokeRaw(t testing.TB, event any) (int, []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, b, err := r.post(event)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" && time.Now().Before(deadline) {
				select {
				case <-r.done:
					t.Fatalf("the emulator exited:\n%s", r.out.String())
				case <-time.After(2 * time.Millisecond):
				}
				continue
			}
			t.Fatal(err)
		}
		if r.firstResponse == 0 {
			r.firstResponse = time.Since(r.started)
		}
		return status, b
	}
}

// post sends one event to the emulator once and returns its status and
// body. It needs no testing.T, so a gateway's handler goroutines use it.
func (r *rie) post(event any) (int, []byte, error) {
	body, err := json.Marshal(event)
	if err != nil {
		return 0, nil, err
	}
	resp, err := invokeClient.Post(r.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitLog returns the function's output once it contains s, or after 5 s:
// the output is read from a pipe, so an invocation's response can arrive
// before its last log lines.
func (r *rie) waitLog(s string) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := r.out.String()
		if strings.Contains(out, s) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logField is a number from the function's JSON log line msg.
func (r *rie) logField(msg, field string) string {
	re := regexp.MustCompile(`"msg":"` + regexp.QuoteMeta(msg) + `".*?"` + field + `":(\d+)`)
	if m := re.FindStringSubmatch(r.out.String()); m != nil {
		return m[1]
	}
	return "?"
}

// report is a duration the emulator reports, e.g. "INIT REPORT(durationMs: 12.3)".
func (r *rie) report(what string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(what) + `\(durationMs: ([0-9.]+)\)`)
	if m := re.FindStringSubmatch(r.out.String()); m != nil {
		return m[1]
	}
	return "?"
}

// ---- API Gateway HTTP API events (payload format 2.0) ----

const apiID = "a1b2c3d4e5"

// httpEvent is an API Gateway HTTP API request as a Lambda proxy
// integration receives it (payload format version 2.0).
func httpEvent(method, path, routeKey string, header map[string]string, body []byte) map[string]any {
	host := apiID + ".execute-api.us-east-1.amazonaws.com"
	now := time.Now().UTC()
	headers := map[string]string{
		"host": host, "user-agent": "claude-code/2.0 (lambda test)", "x-amzn-trace-id": "Root=1-67891233-abcdef012345678912345678",
		"x-forwarded-for": "203.0.113.7", "x-forwarded-port": "443", "x-forwarded-proto": "https",
	}
	for k, v := range header {
		headers[strings.ToLower(k)] = v
	}
	path, query, _ := strings.Cut(path, "?")
	ev := map[string]any{
		"version": "2.0", "routeKey": routeKey, "rawPath": path, "rawQueryString": query,
		"headers": headers,
		"requestContext": map[string]any{
			"accountId": "123456789012", "apiId": apiID, "domainName": host, "domainPrefix": apiID,
			"http":      map[string]any{"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": headers["user-agent"]},
			"requestId": fmt.Sprintf("JKJaXmPLvHcESHA=%d", now.UnixNano()), "routeKey": routeKey, "stage": "$default",
			"time": now.Format("02/Jan/2006:15:04:05 -0700"), "timeEpoch": now.UnixMilli(),
		},
		"isBase64Encoded": false,
	}
	if query != "" {
		q := map[string]string{}
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			q[k] = v
		}
		ev["queryStringParameters"] = q
	}
	if body != nil {
		headers["content-type"] = "application/json"
		headers["content-length"] = strconv.Itoa(len(body))
		ev["body"] = string(body)
	}
	return ev
}

// httpResponse is the function's answer to an HTTP API event.
type httpResponse struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
}

// ---- the embedded server ----

type embedded struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{}
	out  *testproc.Output
}

func startEmbedded(t testing.TB) *embedded {
	t.Helper()
	binaries(t, "vantagepeers")
	port := freePort(t)
	cmd := exec.Command(filepath.Join(binDir, "vantagepeers"), "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port), "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "VP_MASTER_TOKEN="+masterToken, "VP_LOG_LEVEL=warn")
	out := &testproc.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &embedded{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{}), out: out}
	go func() { _ = cmd.Wait(); close(e.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-e.done })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(e.url + "/health")
		if err == nil {
			resp.Body.Close()
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the embedded server did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// post sends a JSON-RPC body to the embedded server's /mcp.
func (e *embedded) post(t testing.TB, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+masterToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// ---- helpers ----

func freePort(t testing.TB) int {
	t.Helper()
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

var idRE = regexp.MustCompile(`^[a-z]{2,6}_[0-9a-z]{26}$`)

// normalize replaces what legitimately differs between two servers —
// generated ids and Unix-ms timestamps — so that results compare equal.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case string:
		if idRE.MatchString(v) {
			return "<id>"
		}
		// Text results carry the same JSON: normalize inside it too.
		var inner any
		if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &inner) == nil {
			b, _ := json.Marshal(normalize(inner))
			return string(b)
		}
		return v
	case float64:
		if v > 1e12 && v < 1e14 { // a Unix-ms timestamp (2001..5138)
			return "<ms>"
		}
		return v
	}
	return v
}
