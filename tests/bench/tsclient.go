package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// trStdioTS is the binary's stdio driven by the official MCP TypeScript SDK
// client, which is what the MCP hosts people use run (Claude Code, Claude
// Desktop, Cursor, the MCP Inspector); trStdio drives it with the Go SDK's.
// The latency is measured inside Node, around callTool.
const trStdioTS = "stdio-ts"

// tsTarget talks to tests/clients/bench-stdio.mjs, one JSON line per call.
type tsTarget struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	pid    int // the vantagepeers process, Node's child
	exited chan error
	logf   *os.File
}

func startStdioTS(ctx context.Context, bin, dataDir, master, logPath string) (target, error) {
	script, err := tsDriver()
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%s needs Node 20 or later on PATH: %w", trStdioTS, err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, script, bin, dataDir)
	cmd.Env = serverEnv(master)
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	t := &tsTarget{cmd: cmd, in: in, out: bufio.NewScanner(stdout), exited: make(chan error, 1), logf: logf}
	t.out.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var hello struct {
		ServerPid int `json:"serverPid"`
	}
	if err := t.read(&hello); err != nil || hello.ServerPid == 0 {
		_ = t.close()
		return nil, fmt.Errorf("starting the TypeScript client: %v (log: %s)", err, logPath)
	}
	t.pid = hello.ServerPid
	if err := waitWarm(ctx, logPath); err != nil {
		_ = t.close()
		return nil, err
	}
	return t, nil
}

// tsDriver returns tests/clients/bench-stdio.mjs, checking that the
// TypeScript SDK is installed next to it.
func tsDriver() (string, error) {
	root, err := testproc.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%s: run the benchmark from the repository: %w", trStdioTS, err)
	}
	sdk := filepath.Join(root, "tests", "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err != nil {
		return "", fmt.Errorf("%s needs the TypeScript SDK in tests/node_modules: run `bash scripts/test-deps.sh clients`", trStdioTS)
	}
	return filepath.Join(root, "tests", "clients", "bench-stdio.mjs"), nil
}

func (t *tsTarget) read(v any) error {
	if !t.out.Scan() {
		if err := t.out.Err(); err != nil {
			return err
		}
		return io.ErrUnexpectedEOF
	}
	return json.Unmarshal(t.out.Bytes(), v)
}

// call makes one tool call through Node and returns the latency Node measured.
func (t *tsTarget) call(_ context.Context, tool string, args map[string]any, out any) (time.Duration, error) {
	line, err := json.Marshal(map[string]any{"tool": tool, "arguments": args})
	if err != nil {
		return 0, err
	}
	if _, err := t.in.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("%s: writing to the TypeScript client: %w", tool, err)
	}
	var answer struct {
		MS     float64         `json:"ms"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := t.read(&answer); err != nil {
		return 0, fmt.Errorf("%s: reading from the TypeScript client: %w", tool, err)
	}
	d := time.Duration(answer.MS * float64(time.Millisecond))
	if answer.Error != "" {
		return d, fmt.Errorf("%s: %s", tool, answer.Error)
	}
	if out != nil {
		if err := json.Unmarshal(answer.Result, out); err != nil {
			return d, fmt.Errorf("%s: decoding result: %w", tool, err)
		}
	}
	return d, nil
}

func (t *tsTarget) send(ctx context.Context) (time.Duration, string, error) { return sendVia(ctx, t) }

func (t *tsTarget) check(ctx context.Context) (time.Duration, int, error) { return checkVia(ctx, t) }

func (t *tsTarget) markRead(ctx context.Context, ids []string) error { return markReadVia(ctx, t, ids) }

func (t *tsTarget) cpu() (time.Duration, bool) { return processCPU(t.pid) }

// close ends stdin; the driver then closes its client, which stops the server.
func (t *tsTarget) close() error {
	_ = t.in.Close()
	go func() { t.exited <- t.cmd.Wait() }()
	var err error
	select {
	case err = <-t.exited:
	case <-time.After(15 * time.Second):
		_ = t.cmd.Process.Kill()
		err = fmt.Errorf("the TypeScript client did not stop within 15s: %v", <-t.exited)
	}
	return errors.Join(err, t.logf.Close())
}
