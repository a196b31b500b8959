package message_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// recordingWork is a Work that records what check_messages asks of it.
type recordingWork struct {
	tenant, caller string
	after          time.Duration
	calls          int
}

func (w *recordingWork) StuckWork(_ context.Context, tenant, caller string, after time.Duration) (vp.StuckWork, error) {
	w.tenant, w.caller, w.after = tenant, caller, after
	w.calls++
	return vp.StuckWork{StuckInProgress: []vp.StuckTask{{TaskID: "tsk_a", Title: "migrate", Status: vp.TaskInProgress, AssignedTo: caller, IdleHours: 6}},
		PeersStuckOnYou: []vp.StuckTask{{TaskID: "tsk_b", Title: "client", Status: vp.TaskBlocked, AssignedTo: "carol", WaitsOn: []string{"tsk_x"}}}}, nil
}

// TestCheckMessagesReportsStuckWork: check_messages asks the recipient's
// stuck work with stuckAfterHours (4 when omitted), refuses a value
// outside 1–168 naming the field and the bound before reading anything,
// and returns both lists beside the messages; without tasks wired it
// reports messages only.
func TestCheckMessagesReportsStuckWork(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		p := as("acme", "alice", "bob")
		inbox, err := svc.Check(ctx(), p, message.CheckInput{Recipient: "bob"})
		if err != nil || inbox.StuckInProgress != nil || inbox.PeersStuckOnYou != nil {
			t.Fatalf("without tasks wired: %v %+v", err, inbox)
		}
		w := &recordingWork{}
		svc.UseWork(w)
		inbox, err = svc.Check(ctx(), p, message.CheckInput{Recipient: "bob"})
		if err != nil || w.tenant != "acme" || w.caller != "bob" || w.after != 4*time.Hour {
			t.Fatalf("default: %v; asked %s/%s after %s, want acme/bob after 4h", err, w.tenant, w.caller, w.after)
		}
		b, _ := json.Marshal(inbox)
		if !strings.Contains(string(b), `"stuckInProgress":[{"taskId":"tsk_a"`) || !strings.Contains(string(b), `"peersStuckOnYou":[{"taskId":"tsk_b"`) {
			t.Fatalf("inbox JSON: %s", b)
		}
		h := 12
		if _, err := svc.Check(ctx(), p, message.CheckInput{Recipient: "bob", StuckAfterHours: &h}); err != nil || w.after != 12*time.Hour {
			t.Fatalf("stuckAfterHours 12: %v, asked after %s", err, w.after)
		}
		calls := w.calls
		for _, bad := range []int{0, -3, message.MaxStuckAfterHours + 1} {
			_, err := svc.Check(ctx(), p, message.CheckInput{StuckAfterHours: &bad})
			wantKind(t, err, vp.KindInvalid, "stuckAfterHours")
			if !strings.Contains(err.Error(), "168") {
				t.Fatalf("refusal does not state the bound: %v", err)
			}
		}
		if w.calls != calls {
			t.Fatalf("a refused call read the tasks")
		}
	})
}
