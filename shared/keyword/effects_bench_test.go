package keyword_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// BenchmarkTaskEffects measures what the effects cost the task verbs on
// SQLite: checkout_task (its index job, no event) and complete_task of a
// mission's only task (its index job and the task.finished event run
// before it returns, completing the mission), each wired three ways —
// nothing, an index written directly after the commit (no outbox), and the
// binaries' wiring (outbox).
//
//	go test ./shared/keyword -run '^$' -bench TaskEffects -benchtime 300x
func BenchmarkTaskEffects(b *testing.B) {
	for _, wiring := range []string{"none", "direct", "outbox", "outbox-batched"} {
		for _, verb := range []string{"checkout", "complete-last"} {
			b.Run(wiring+"/"+verb, func(b *testing.B) {
				st, err := sqlite.Open(ctx(), sqlite.Options{Path: b.TempDir() + "/vp.db"})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				idx := openIndex(&testing.T{})
				var ts *task.Service
				var ms *mission.Service
				switch wiring {
				case "none":
					ts = task.New(task.Options{Store: st})
					ms = mission.New(mission.Options{Store: st, Tasks: ts})
					ts.UseMissions(ms)
				case "direct":
					ts = task.New(task.Options{Store: st, Search: &search.Writer{Index: idx}})
					ms = mission.New(mission.Options{Store: st, Tasks: ts})
					ts.UseMissions(ms)
				case "outbox":
					w := wire(&testing.T{}, st, idx)
					ts, ms = w.tasks, w.missions
				case "outbox-batched": // as the binaries wire it
					w := wireWith(&testing.T{}, st, idx, outbox.Options{RemovalBatch: 20 * time.Millisecond})
					defer w.ob.Close()
					ts, ms = w.tasks, w.missions
				}
				alice := as("acme", "alice")
				ids := make([]string, b.N)
				for i := range ids {
					in := newTaskIn(fmt.Sprintf("step %d", i), "alice")
					if verb == "complete-last" {
						m, err := ms.CreateMission(ctx(), alice, mission.CreateMissionInput{Name: fmt.Sprintf("m%d", i), Project: "web", Priority: "high"})
						if err != nil {
							b.Fatal(err)
						}
						in.MissionID, in.Status = m.ID, vp.TaskInProgress
					}
					tk, err := ts.CreateTask(ctx(), alice, in)
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = tk.ID
				}
				b.ResetTimer()
				for i := range b.N {
					if verb == "checkout" {
						if r, err := ts.CheckoutTask(ctx(), alice, task.CheckoutInput{TaskID: ids[i]}); err != nil || !r.Claimed {
							b.Fatal(r, err)
						}
						continue
					}
					if _, err := ts.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: ids[i], CompletionNote: "done"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
