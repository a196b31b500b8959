package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The crash tests of the effects the binary runs after a commit: a child
// process built with openApp (the binary's wiring) commits a change and is
// SIGKILLed right after the commit, before the effect that follows it;
// after a restart and one outbox drain the effect has happened, once.

const (
	effectsCrashModeEnv = "VP_EFFECTS_CRASH_MODE" // "mission" or "index"
	effectsCrashDirEnv  = "VP_EFFECTS_CRASH_DIR"
)

var crashAdmin = vp.Principal{Tenant: "default", Orchestrators: []string{"*"}, Admin: true,
	ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}

// crashAfterCommit is the store the child's services write through: once
// armed, a Write that commits an outbox job of topic prints COMMITTED and
// blocks, so the parent kills the process between the commit and the
// effect.
type crashAfterCommit struct {
	store.Store
	topic string
	armed bool
}

func (c *crashAfterCommit) Write(ctx context.Context, ops ...store.Op) error {
	if err := c.Store.Write(ctx, ops...); err != nil || !c.armed {
		return err
	}
	for _, op := range ops {
		var rec struct {
			Topic string `json:"topic"`
		}
		if op.Kind == store.OpPut && strings.Contains(op.Item.Key.PK, "#OB#") && op.Item.Key.SK == "JOB" &&
			json.Unmarshal(op.Item.Data, &rec) == nil && rec.Topic == c.topic && len(ops) > 1 {
			fmt.Println("COMMITTED")
			time.Sleep(time.Hour)
		}
	}
	return nil
}

func TestEffectsExactlyOnceAcrossKill9(t *testing.T) {
	if mode := os.Getenv(effectsCrashModeEnv); mode != "" {
		effectsCrashChild(mode, os.Getenv(effectsCrashDirEnv))
		return
	}
	if testing.Short() {
		t.Skip("-short: runs child processes")
	}
	ctx := context.Background()

	t.Run("mission auto-completion", func(t *testing.T) {
		dir := t.TempDir()
		runEffectsChild(t, "mission", dir)
		a, err := openApp(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		m := onlyMission(t, a, dir)
		if m.Status == vp.MissionComplete {
			t.Fatal("the mission completed before the restart: the child was not killed between the commit and the effect")
		}
		tasks := m.Tasks
		if len(tasks) != 1 || tasks[0].Status != vp.TaskDone {
			t.Fatalf("the committed completion is gone: %+v", tasks)
		}
		// One pass of the outbox job, as the scheduler runs it, once the
		// dead writer's lease on the delivery has ended.
		ob := pastTheLease(t, a)
		if err := jobs.OutboxDrain(ob, nil)(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		m = onlyMission(t, a, dir)
		if m.Status != vp.MissionComplete || !m.AutoCompleted || m.CompletedAt == nil {
			t.Fatalf("after the drain the mission is %s (autoCompleted %v)", m.Status, m.AutoCompleted)
		}
		// Exactly once: nothing is left to run, and the event delivered
		// again changes nothing.
		it, err := a.store.Get(ctx, mission.Key("default", m.ID))
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := ob.Drain(ctx); n != 0 {
			t.Fatalf("a second drain ran %d jobs", n)
		}
		payload, _ := json.Marshal(task.Finished{Tenant: "default", TaskID: tasks[0].ID, MissionID: m.ID, OldStatus: vp.TaskInProgress, NewStatus: vp.TaskDone})
		if err := a.Missions.OnTaskFinished(ctx, outbox.Job{ID: "again", Tenant: "default", Topic: task.TopicFinished, Payload: payload}); err != nil {
			t.Fatal(err)
		}
		again, _ := a.store.Get(ctx, mission.Key("default", m.ID))
		if again.Version != it.Version {
			t.Fatalf("a redelivered event rewrote the mission (version %d -> %d)", it.Version, again.Version)
		}
		if *onlyMission(t, a, dir).CompletedAt != *m.CompletedAt {
			t.Fatal("the completion time moved")
		}
	})

	t.Run("index write", func(t *testing.T) {
		dir := t.TempDir()
		runEffectsChild(t, "index", dir)
		a, err := openApp(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		search := func() int {
			res, err := a.Keyword.SearchMessages(ctx, crashAdmin, keyword.SearchMessagesInput{Query: "zebrafinch"})
			if err != nil {
				t.Fatal(err)
			}
			return res.Count
		}
		if n := search(); n != 0 {
			t.Fatalf("found %d messages before the drain: the child was not killed before the index write", n)
		}
		ob := pastTheLease(t, a)
		if err := jobs.OutboxDrain(ob, nil)(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if n := search(); n != 1 {
			t.Fatalf("after the drain the message is found %d times, want 1", n)
		}
		if n, _ := ob.Drain(ctx); n != 0 {
			t.Fatalf("a second drain ran %d jobs", n)
		}
	})
}

// pastTheLease is the outbox of a restarted process, wired as openApp
// wires it, whose clock is past the dead writer's lease: the jobs and
// deliveries a writer runs itself are committed leased to it and are due
// when that lease ends (outbox.DefaultLease, a minute), and the test does
// not wait that minute.
func pastTheLease(t *testing.T, a *app) *outbox.Outbox {
	t.Helper()
	ob, err := outbox.New(outbox.Options{Store: a.store, Now: func() time.Time { return time.Now().Add(outbox.DefaultLease + time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	restarted := *a.Services
	restarted.Outbox = ob
	if err := vpapp.WireOutbox(&restarted); err != nil {
		t.Fatal(err)
	}
	return ob
}

// onlyMission reads the mission the child created (it left its id in the
// data dir).
func onlyMission(t *testing.T, a *app, dir string) mission.MissionView {
	t.Helper()
	id, err := os.ReadFile(filepath.Join(dir, "mission.id"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Missions.GetMission(context.Background(), crashAdmin, mission.MissionRef{MissionID: string(id)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runEffectsChild runs the child in mode on dir and SIGKILLs it when it
// says COMMITTED.
func runEffectsChild(t *testing.T, mode, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEffectsExactlyOnceAcrossKill9$")
	cmd.Env = append(os.Environ(), effectsCrashModeEnv+"="+mode, effectsCrashDirEnv+"="+dir,
		"VP_MASTER_TOKEN="+strings.Repeat("ab", 32))
	killAtLine(t, cmd, "COMMITTED")
}

// killAtLine starts the child cmd and SIGKILLs it as soon as it prints the
// line want on stdout; the child failing or staying silent for a minute
// fails the test.
func killAtLine(t *testing.T, cmd *exec.Cmd, want string) {
	t.Helper()
	testproc.DieWithParent(cmd)
	var stderr testproc.Output
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == want {
				said <- true
				return
			}
		}
		said <- false
	}()
	select {
	case ok := <-said:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("child exited before %s; stderr:\n%s", want, stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		t.Fatalf("child never said %s; stderr:\n%s", want, stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// effectsCrashChild opens the data dir as the binary does and commits the
// change of mode through a store that stops right after the commit.
func effectsCrashChild(mode, dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	crash := &crashAfterCommit{}
	servicesStore = func(st *sqlite.Store) store.Store { crash.Store = st; return crash }
	ctx := context.Background()
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		fail(err)
	}
	switch mode {
	case "mission":
		m, err := a.Missions.CreateMission(ctx, crashAdmin, mission.CreateMissionInput{Name: "crash", Project: "web", Priority: "high", Pilot: "alice", CreatedBy: "alice"})
		if err != nil {
			fail(err)
		}
		tk, err := a.Tasks.CreateTask(ctx, crashAdmin, task.CreateTaskInput{Title: "last step", AssignedTo: "alice", Priority: "high",
			MissionID: m.ID, CreatedBy: "alice", Status: vp.TaskInProgress})
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mission.id"), []byte(m.ID), 0o600); err != nil {
			fail(err)
		}
		crash.topic, crash.armed = task.TopicFinished, true
		_, err = a.Tasks.CompleteTask(ctx, crashAdmin, task.CompleteTaskInput{TaskID: tk.ID, CompletionNote: "done, see PR #1", CallerOrchestrator: "alice"})
		fail(fmt.Errorf("complete_task returned (%v): the crash hook did not fire", err))
	case "index":
		// A first search backfills the tenant and leaves the index's
		// marker: the parent's search then reads the index as it is,
		// without a backfill that would index the message for it.
		if _, err := a.Keyword.SearchMessages(ctx, crashAdmin, keyword.SearchMessagesInput{Query: "warmup"}); err != nil {
			fail(err)
		}
		crash.topic, crash.armed = search.IndexTopic, true
		_, err := a.Messages.Send(ctx, crashAdmin, message.SendInput{From: "alice", Channel: "bob", Content: "the zebrafinch migrates at dawn"})
		fail(fmt.Errorf("send_message returned (%v): the crash hook did not fire", err))
	}
	fail(fmt.Errorf("unknown mode %q", mode))
}
