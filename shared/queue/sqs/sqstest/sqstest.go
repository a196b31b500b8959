// Package sqstest starts fauxqs (an SQS emulator on Node.js, npm package
// fauxqs@1.9.2) for tests of the SQS adapter.
//
// The package is installed with npm into VP_FAUXQS_DIR (default
// <repo>/.cache/fauxqs) on first use; it needs node (20+) and npm on PATH.
// Share one emulator across a test binary:
//
//	func TestMain(m *testing.M) { sqstest.Main(m) }
//
//	func TestX(t *testing.T) {
//		client := sqstest.Client(t) // skips (or fails when CI=true) without node
//		url := sqstest.NewQueue(t, client, nil)
//	}
//
// Without Main, Endpoint starts an emulator per test. When the emulator
// cannot start (no node or npm), tests are skipped with a loud message,
// except when CI=true: then they fail.
package sqstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// Package is the npm package and version this harness runs.
const Package = "fauxqs@1.9.2"

// EnvDir overrides the folder fauxqs is installed in.
const EnvDir = "VP_FAUXQS_DIR"

// ErrUnavailable is wrapped by Launch's error when node or npm is missing.
var ErrUnavailable = errors.New("sqstest: fauxqs unavailable")

// Server is a running fauxqs.
type Server struct {
	Endpoint  string
	StartedIn time.Duration

	cmd  *exec.Cmd
	done chan struct{}
	log  *testproc.Output
	once sync.Once
}

// Launch installs fauxqs when needed and starts it on a free port,
// returning once it answers SQS requests.
func Launch(ctx context.Context) (*Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node not found on PATH", ErrUnavailable)
	}
	dir, err := ensureInstalled(ctx)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 3; try++ { // a free port can be taken before node binds it
		s, err := start(ctx, node, dir)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, node, dir string) (*Server, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	cmd := exec.Command(node, filepath.Join("node_modules", "fauxqs", "dist", "cli.js"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FAUXQS_PORT="+strconv.Itoa(port), "FAUXQS_LOGGER=false")
	log := &testproc.Output{Limit: 1 << 20}
	cmd.Stdout, cmd.Stderr = log, log
	testproc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sqstest: start node: %w", err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{}), log: log}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("sqstest: fauxqs on port %d: %w\n%s", port, err, log.String())
	}
	s.StartedIn = time.Since(began)
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := NewClient(s.Endpoint)
	for {
		select {
		case <-s.done:
			return errors.New("exited before accepting connections")
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListQueues(cctx, &sqs.ListQueuesInput{})
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return errors.New("exited before accepting connections")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the emulator and waits for it to exit. Safe to call twice.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
}

// NewClient returns an SQS client for a local endpoint: static dummy
// credentials, us-east-1.
func NewClient(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// ---- test entry points ----

var shared = &testproc.Shared[*Server]{
	Launch: Launch,
	Ready: func(s *Server) string {
		return fmt.Sprintf("sqstest: fauxqs ready at %s in %s", s.Endpoint, s.StartedIn.Round(time.Millisecond))
	},
}

// Main runs the package's tests with one emulator shared by all of them,
// started on first use and stopped when they end. Call it from TestMain.
func Main(m *testing.M) { shared.Main(m) }

// Endpoint returns the endpoint of a running fauxqs: the shared one under
// Main, else one started for t and stopped at its cleanup. When none can
// start, t is skipped with a loud message, or failed when CI=true.
func Endpoint(t testing.TB) string {
	t.Helper()
	s, err := shared.Get(t)
	if err != nil {
		unavailable(t, err)
	}
	return s.Endpoint
}

// Client returns a client for Endpoint(t).
func Client(t testing.TB) *sqs.Client {
	t.Helper()
	return NewClient(Endpoint(t))
}

// NewQueue creates a queue with a unique name and the given attributes
// (for example a RedrivePolicy) and returns its URL.
func NewQueue(t testing.TB, client *sqs.Client, attrs map[string]string) string {
	t.Helper()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName: aws.String("vp-test-" + hex.EncodeToString(suffix)), Attributes: attrs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("fauxqs must run in CI (CI=true): %v", err)
	}
	msg := "\n" +
		"################################################################\n" +
		"## SKIPPING SQS adapter tests: %v\n" +
		"## Install node 20 and npm (fauxqs@1.9.2 is fetched on first use).\n" +
		"################################################################"
	fmt.Fprintf(os.Stderr, msg+"\n", err)
	t.Skipf(msg, err)
}

// ---- installation ----

// Dir returns the folder fauxqs is (or will be) installed in.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	root, err := testproc.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "fauxqs"), nil
}

func ensureInstalled(ctx context.Context) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	cli := filepath.Join(dir, "node_modules", "fauxqs", "dist", "cli.js")
	if _, err := os.Stat(cli); err == nil {
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%w: %s missing and npm not found to install %s", ErrUnavailable, cli, Package)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Serialise concurrent installs (go test runs packages in parallel).
	unlock, err := testproc.LockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(cli); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"fauxqs-cache","private":true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", Package)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("sqstest: npm install %s: %w\n%s", Package, err, out.String())
	}
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("sqstest: npm installed %s but %s is missing\n%s", Package, cli, out.String())
	}
	return dir, nil
}
