package outbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// A domain package publishes "task.completed" in the transaction that
// completes the task; wiring subscribes a capability to it; Kick runs the
// delivery right after the commit (PollInterval is an hour here, so only
// the Kick can have run it).
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	dir, _ := os.MkdirTemp("", "outbox-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vp.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	// Wiring (main): the mission capability observes task completions.
	ob, _ := outbox.New(outbox.Options{Store: st, PollInterval: time.Hour})
	delivered := make(chan outbox.Job, 1)
	_ = ob.Subscribe("task.completed", "mission.autocomplete", func(_ context.Context, j outbox.Job) error {
		delivered <- j
		return nil
	})
	done := make(chan error)
	go func() { done <- ob.Run(ctx) }()
	time.Sleep(50 * time.Millisecond) // let Run finish its first look

	// The domain: one transaction for the change and its event.
	task := store.Put(store.Item{Key: store.Key{PK: "T#acme#TASK#task_1", SK: "TASK"}, Data: []byte(`{"status":"done"}`)}, store.Always)
	ev, err := ob.Publish(ctx, "acme", "task.completed", "task_1", []byte(`{"task":"task_1"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Write(ctx, append([]store.Op{task}, ev.Ops()...)...); err != nil {
		fmt.Println(err)
		return
	}
	ob.Kick(ev)

	select {
	case j := <-delivered:
		fmt.Println(j.Tenant, j.Topic, j.Subscriber, string(j.Payload), j.Attempt)
	case <-time.After(10 * time.Second):
		fmt.Println("not delivered")
	}
	stop()
	fmt.Println(<-done)
	// Output:
	// acme task.completed mission.autocomplete {"task":"task_1"} 1
	// <nil>
}
