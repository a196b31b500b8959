// Package dynamotest starts DynamoDB Local for tests.
//
// DynamoDB Local (1.25.1) comes from the npm tarball
// amplify-dynamodb-simulator@2.9.30, installed by scripts/dynamodb-local.sh
// into VP_DYNAMODB_LOCAL_DIR (default <repo>/.cache/dynamodb-local). It needs
// java on PATH (or in JAVA_HOME).
//
// Share one emulator across a test binary:
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) }
//
//	func TestX(t *testing.T) {
//		client := dynamotest.Client(t) // skips (or fails when CI=true) without java
//		...
//	}
//
// Without Main, Endpoint and Client start an emulator per test.
//
// When the emulator cannot start (no java, no jar and no npm) tests are
// skipped with a loud message, except when CI=true: then they fail.
package dynamotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// EnvDir overrides the folder holding DynamoDBLocal.jar.
const EnvDir = "VP_DYNAMODB_LOCAL_DIR"

// ErrUnavailable is wrapped by Launch's error when a prerequisite (java, the
// jar, npm to fetch it) is missing, as opposed to a start that failed.
var ErrUnavailable = errors.New("dynamotest: DynamoDB Local unavailable")

// Server is a running DynamoDB Local.
type Server struct {
	// Endpoint is its base URL, http://127.0.0.1:PORT.
	Endpoint string
	// StartedIn is how long it took to answer its first request.
	StartedIn time.Duration

	cmd  *exec.Cmd
	done chan struct{}
	log  *testproc.Output
	once sync.Once
}

// Launch installs DynamoDB Local when needed and starts it in memory on a
// free port, returning once it answers requests.
func Launch(ctx context.Context) (*Server, error) {
	if ep := os.Getenv(EnvEndpoint); ep != "" {
		return external(ctx, ep)
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	dir, err := ensureInstalled(ctx)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 3; try++ { // a free port can be taken before java binds it
		s, err := start(ctx, java, dir)
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

func start(ctx context.Context, java, dir string) (*Server, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	cmd := exec.Command(java, "-Djava.library.path=./DynamoDBLocal_lib", "-Xmx256m",
		"-jar", "DynamoDBLocal.jar", "-inMemory", "-disableTelemetry", "-port", strconv.Itoa(port))
	cmd.Dir = dir
	log := &testproc.Output{Limit: 1 << 20}
	cmd.Stdout, cmd.Stderr = log, log
	testproc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dynamotest: start java: %w", err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{}), log: log}
	go func() { _ = cmd.Wait(); close(s.done) }()

	if err := s.waitReady(ctx, 3*time.Minute); err != nil {
		s.Stop()
		return nil, fmt.Errorf("dynamotest: DynamoDB Local on port %d: %w\n%s", port, err, log.String())
	}
	s.StartedIn = time.Since(began)
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	addr := s.Endpoint[len("http://"):]
	client := NewClient(ctx, s.Endpoint)
	for {
		select {
		case <-s.done:
			return errors.New("exited before accepting connections")
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			_ = c.Close()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = client.ListTables(cctx, &dynamodb.ListTablesInput{})
			cancel()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", max)
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
		if s.cmd == nil {
			return // one this package did not start (EnvEndpoint)
		}
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
}

// Output is what the emulator printed so far ("" for one this package did
// not start).
func (s *Server) Output() string {
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// EnvEndpoint names a DynamoDB Local that is already running: make test
// starts one for the whole run, and Launch then uses it instead of starting
// a Java virtual machine in each of the ~27 test binaries that need one
// (each start costs seconds of CPU on a 2-core machine). Every test makes
// tables of its own (random names, deleted at cleanup), so they share it.
const EnvEndpoint = "VP_DYNAMODB_LOCAL_ENDPOINT"

// external returns the running DynamoDB Local at endpoint once it answers.
func external(ctx context.Context, endpoint string) (*Server, error) {
	s := &Server{Endpoint: strings.TrimSuffix(endpoint, "/"), done: make(chan struct{})}
	began := time.Now()
	if !strings.HasPrefix(s.Endpoint, "http://") {
		return nil, fmt.Errorf("dynamotest: %s=%q: want http://HOST:PORT", EnvEndpoint, endpoint)
	}
	if err := s.waitReady(ctx, 30*time.Second); err != nil {
		return nil, fmt.Errorf("dynamotest: the DynamoDB Local of %s=%s: %w", EnvEndpoint, endpoint, err)
	}
	s.StartedIn = time.Since(began)
	return s, nil
}

// NewClient returns a DynamoDB client for a local endpoint: static dummy
// credentials, us-east-1, no response checksum validation.
func NewClient(ctx context.Context, endpoint string) *dynamodb.Client {
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")),
	)
	if err != nil {
		// Only a malformed shared config file can get here; the options
		// above need nothing from the environment.
		cfg = aws.Config{Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.DisableValidateResponseChecksum = true
	})
}

// ---- test entry points ----

var shared = &testproc.Shared[*Server]{
	Launch: Launch,
	Ready: func(s *Server) string {
		return fmt.Sprintf("dynamotest: DynamoDB Local ready at %s in %s", s.Endpoint, s.StartedIn.Round(time.Millisecond))
	},
}

// Main runs the package's tests with one emulator shared by all of them,
// started on first use and stopped when they end. Call it from TestMain.
func Main(m *testing.M) { shared.Main(m) }

// Endpoint returns the endpoint of a running DynamoDB Local: the shared one under
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
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	return NewClient(context.Background(), Endpoint(t))
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("DynamoDB Local must run in CI (CI=true): %v", err)
	}
	msg := "\n" +
		"################################################################\n" +
		"## SKIPPING DynamoDB conformance: %v\n" +
		"## Install java 17 and npm (scripts/dynamodb-local.sh) to run it.\n" +
		"################################################################"
	fmt.Fprintf(os.Stderr, msg+"\n", err)
	t.Skipf(msg, err)
}

// ---- installation ----

func findJava() (string, error) {
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: java not found (PATH or JAVA_HOME)", ErrUnavailable)
}

// RepoRoot returns the repository's root folder (the one holding go.mod).
func RepoRoot() (string, error) { return testproc.RepoRoot() }

// Dir returns the folder that holds (or will hold) DynamoDBLocal.jar.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "dynamodb-local"), nil
}

func ensureInstalled(ctx context.Context) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("%w: %s/DynamoDBLocal.jar missing and npm not found to fetch it", ErrUnavailable, dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "dynamodb-local.sh")
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), EnvDir+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("dynamotest: %s: %w\n%s", script, err, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
		return "", fmt.Errorf("dynamotest: %s ran but %s/DynamoDBLocal.jar is missing\n%s", script, dir, out.String())
	}
	return dir, nil
}
