package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/requester"
)

// TestEndToEnd: vantagepeers serve (the relay, a subprocess) + this bridge
// driven by the official MCP TypeScript client over stdio + the requester:
// 200 requests over 3 conversations, with the relay restarted and the
// bridge SIGKILLed midway. Every request reaches the model and is answered
// exactly once, processed state survives, a checkpoint is resumed by the
// next session, and no plaintext reaches the relay's files or logs.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: not with -short")
	}
	testsDir, _ := filepath.Abs("../../tests")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(testsDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		t.Skipf("needs node and tests/node_modules (bash scripts/test-deps.sh clients): %v", err)
	}
	tmp := t.TempDir()
	vpBin, bridgeBin := filepath.Join(tmp, "vantagepeers"), filepath.Join(tmp, "pacerelle")
	for bin, pkg := range map[string]string{vpBin: "../vantagepeers", bridgeBin: "."} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	_ = ln.Close()
	base := "http://" + addr
	dataDir := filepath.Join(tmp, "vp")
	master := strings.Repeat("ab", 32)
	var relayLog bytes.Buffer
	relayProc := startRelay(t, vpBin, dataDir, addr, master, &relayLog)
	defer func() { stopRelay(relayProc) }()
	agentTok := createToken(t, vpBin, dataDir, master, "bot")
	annTok := createToken(t, vpBin, dataDir, master, "ann")

	storeRoot, devDir := filepath.Join(tmp, "mcp"), filepath.Join(tmp, "devices")
	doneFile := filepath.Join(tmp, "done")
	sessionCfg := map[string]any{"bin": bridgeBin, "doneFile": doneFile, "longTask": "req-0000", "env": map[string]string{
		"PACERELLE_AGENT_ID": "bot", "PACERELLE_AGENT_TOKEN": agentTok, "PACERELLE_STORE_ROOT": storeRoot,
		"PACERELLE_BASE_URL": base, "PATH": os.Getenv("PATH"), "HOME": tmp}}
	s1 := runSession(t, node, testsDir, sessionCfg)

	// Pair with the command line once the bridge has registered.
	var code string
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := exec.Command(vpBin, "pacerelle", "pair", "--base-url", base, "--token", annTok, "--agent", "bot", "--person", "ann", "--yes", "--state-dir", devDir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if cmd.Run() == nil {
			var out map[string]any
			_ = json.Unmarshal(stdout.Bytes(), &out)
			code, _ = out["code"].(string)
			break
		}
		if time.Now().After(deadline) || strings.Contains(stderr.String(), "already paired") {
			t.Fatalf("pacerelle pair: %s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	dev, err := requester.Open(devDir, "ann", "bot")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()

	const n = 200
	ctx := context.Background()
	var ids []string
	var s1sum sessionSummary
	var replies []requester.Reply
	// caughtUp waits until the model has answered about all requests sent so
	// far, so that the restart and the kill land while it is working.
	// Two minutes: CI once saw no reply within one while make test's three
	// streams loaded the machine; the session's own account, when it has
	// ended, says why.
	caughtUp := func(want int) {
		wctx, cancel := context.WithTimeout(ctx, 120*time.Second)
		defer cancel()
		got, err := dev.Wait(wctx, func(rs []requester.Reply) bool { return len(replies)+len(rs) >= want })
		replies = append(replies, got...)
		if err != nil {
			session := "still running"
			select {
			case sum := <-s1:
				session = fmt.Sprintf("ended (%s) after processing %d", sum.Ended, len(sum.Processed))
			default:
			}
			t.Fatalf("%d replies, waiting for %d: %v; the bridge session: %s", len(replies), want, err, session)
		}
	}
	for i := range n {
		if i == 70 || i == 140 {
			caughtUp(i - 10)
		}
		switch i {
		case 70: // the relay restarts
			stopRelay(relayProc)
			relayProc = startRelay(t, vpBin, dataDir, addr, master, &relayLog)
		case 140: // the bridge is killed
			pid := lockHolder(t, storeRoot)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %d: %v", pid, err)
			}
			s1sum = <-s1
			t.Logf("session 1 ended (%s) after processing %d", s1sum.Ended, len(s1sum.Processed))
			s1 = runSession(t, node, testsDir, sessionCfg)
		}
		id := fmt.Sprintf("req-%04d", i)
		ids = append(ids, id)
		if _, err := dev.Send(ctx, fmt.Sprintf("conv-%d", i%3), id, fmt.Sprintf("PCR-CANARY-%04d please do it", i)); err != nil {
			t.Fatalf("send %s: %v", id, err)
		}
	}
	if err := os.WriteFile(doneFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s2sum := <-s1
	t.Logf("session 2 ended (%s): processed %d, skipped replies %d, resumed %v", s2sum.Ended, len(s2sum.Processed), len(s2sum.SkippedReplies), s2sum.Resumed)
	if s2sum.Ended != "done" {
		t.Fatalf("session 2: %s\n%s", s2sum.Ended, s2sum.StderrTail)
	}

	// The person receives exactly one reply to each request.
	caughtUp(n)
	time.Sleep(500 * time.Millisecond)
	more, _, _ := dev.Fetch(ctx)
	replies = append(replies, more...)
	byReq := map[string]int{}
	for _, r := range replies {
		byReq[r.ReplyTo]++
		if want := "re: PCR-CANARY-" + strings.TrimPrefix(r.ReplyTo, "req-") + " please do it"; r.Text != want {
			t.Errorf("reply to %s: %q", r.ReplyTo, r.Text)
		}
	}
	if len(replies) != n || len(byReq) != n {
		t.Fatalf("%d replies to %d requests, want %d and %d", len(replies), len(byReq), n, n)
	}
	for _, id := range ids {
		if byReq[id] != 1 {
			t.Errorf("%s answered %d times", id, byReq[id])
		}
	}
	// Nothing processed twice; the checkpoint left by session 1 resumed.
	for _, id := range s1sum.Processed {
		if slices.Contains(s2sum.Processed, id) {
			t.Errorf("%s processed in both sessions", id)
		}
	}
	if !slices.Contains(s2sum.StartCheckpoints, "req-0000") || !slices.Contains(s2sum.Resumed, "req-0000") {
		t.Errorf("session 2 did not resume the checkpoint of req-0000: checkpoints %v, resumed %v", s2sum.StartCheckpoints, s2sum.Resumed)
	}
	if len(s2sum.Pairings) != 1 || s2sum.Pairings[0].Code != code {
		t.Errorf("the bridge shows pairings %+v; the device showed code %s", s2sum.Pairings, code)
	}
	wantTools := []string{"get_checkpoints", "get_history", "get_status", "mark_processed", "save_checkpoint", "send_message", "send_widget", "wait_for_messages"}
	if !slices.Equal(s2sum.Tools, wantTools) || !slices.Equal(s2sum.Resources, []string{"conversation://current", "widget://pending"}) {
		t.Errorf("tools %v resources %v", s2sum.Tools, s2sum.Resources)
	}
	// A third session finds nothing pending and no active checkpoint.
	s3sum := <-runSession(t, node, testsDir, sessionCfg)
	if s3sum.Ended != "done" || s3sum.StartPending != 0 || len(s3sum.StartCheckpoints) != 0 || len(s3sum.Processed) != 0 {
		t.Errorf("session 3: %+v", s3sum)
	}
	// The command line: send while this test holds the device is refused
	// (one owner); then send, a session answers, and wait prints the reply.
	cli := func(args ...string) (string, error) {
		cmd := exec.Command(vpBin, append([]string{"pacerelle"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stderr.String(), err
		}
		return stdout.String(), nil
	}
	sendArgs := []string{"send", "--agent", "bot", "--person", "ann", "--state-dir", devDir, "--conversation", "conv-cli", "--id", "cli-1", "hello", "cli"}
	if out, err := cli(sendArgs...); err == nil || !strings.Contains(out, "another process owns") {
		t.Errorf("send while the device is held: %v %s", err, out)
	}
	_ = dev.Close()
	if out, err := cli(sendArgs...); err != nil || !strings.Contains(out, `"duplicate":false`) {
		t.Fatalf("pacerelle send: %v %s", err, out)
	}
	s4 := runSession(t, node, testsDir, sessionCfg)
	out, err := cli("wait", "--agent", "bot", "--person", "ann", "--state-dir", devDir, "--reply-to", "cli-1", "--timeout", "30s")
	if err != nil || !strings.Contains(out, `"text":"re: hello cli"`) {
		t.Fatalf("pacerelle wait: %v %s", err, out)
	}
	if s := <-s4; s.Ended != "done" || !slices.Equal(s.Processed, []string{"cli-1"}) {
		t.Errorf("session 4: %+v", s)
	}
	// No plaintext in the relay's files, its logs, or the bridge's state.
	stopRelay(relayProc)
	relayProc = nil
	for _, dir := range []string{dataDir, storeRoot} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if bytes.Contains(b, []byte("PCR-CANARY")) {
				t.Errorf("%s contains plaintext", e.Name())
			}
			if bytes.Contains(b, []byte(agentTok)) {
				t.Errorf("%s contains the agent token", e.Name())
			}
		}
	}
	if bytes.Contains(relayLog.Bytes(), []byte("PCR-CANARY")) {
		t.Error("the relay's log contains plaintext")
	}
}

type sessionSummary struct {
	Processed        []string      `json:"processed"`
	Replied          []string      `json:"replied"`
	SkippedReplies   []string      `json:"skippedReplies"`
	Resumed          []string      `json:"resumed"`
	StartCheckpoints []string      `json:"startCheckpoints"`
	StartPending     int           `json:"startPending"`
	Pairings         []PairingInfo `json:"pairings"`
	Tools            []string      `json:"tools"`
	Resources        []string      `json:"resources"`
	Ended            string        `json:"ended"`
	StderrTail       string        `json:"stderrTail"`
}

func runSession(t *testing.T, node, dir string, cfg map[string]any) chan sessionSummary {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	ch := make(chan sessionSummary, 1)
	cmd := exec.Command(node, filepath.Join("clients", "pacerelle.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PACERELLE_E2E="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	// A failed test leaves no session behind (its bridge exits on EOF).
	// One that fails while the session still runs asks it first for its
	// account (SIGTERM: it prints its summary, the bridge's stderr with it).
	t.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		if t.Failed() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
				t.Logf("the session, stopped by the failure: %s", stdout.String())
				return
			case <-time.After(5 * time.Second):
			}
		}
		_ = cmd.Process.Kill()
		<-exited
	})
	go func() {
		err := cmd.Wait()
		close(exited)
		var s sessionSummary
		if jerr := json.Unmarshal(stdout.Bytes(), &s); jerr != nil {
			s.Ended = fmt.Sprintf("no summary (%v, %v): %s %s", err, jerr, stdout.String(), stderr.String())
		}
		ch <- s
	}()
	return ch
}

func startRelay(t *testing.T, bin, dataDir, addr, master string, log *bytes.Buffer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir, "--addr", addr, "--log-level", "debug")
	cmd.Env = append(os.Environ(), "VP_MASTER_TOKEN="+master)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay did not start: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stopRelay(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func createToken(t *testing.T, bin, dataDir, master, as string) string {
	t.Helper()
	cmd := exec.Command(bin, "token", "create", "--data-dir", dataDir, "--tenant", "default", "--as", as, "--read", "*", "--write", "*")
	cmd.Env = append(os.Environ(), "VP_MASTER_TOKEN="+master)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create --as %s: %v", as, err)
	}
	return strings.TrimSpace(string(out))
}

// lockHolder is the pid the bridge wrote into its state lock.
func lockHolder(t *testing.T, storeRoot string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(storeRoot, localstate.FileName("pacerelle-agent:bot")+".lock"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file %q: %v", b, err)
	}
	return pid
}
