package message_test

import (
	"errors"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/storetest"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestMarkReadEndsWhenEveryWriteLoses: marking a receipt whose every write
// loses (the batch's, then the receipt's own) ends with a conflict naming
// receiptIds after a bounded number of attempts, instead of rereading the
// receipt for ever.
func TestMarkReadEndsWhenEveryWriteLoses(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := &storetest.LosingWrites{Store: b.Open(t, nil)}
		svc := newServices(t, st, nil)
		alice, bob := as("acme", "alice"), as("acme", "bob")
		if _, err := svc.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: "schema merged"}); err != nil {
			t.Fatal(err)
		}
		in, err := svc.Check(ctx(), bob, message.CheckInput{})
		if err != nil || in.Count != 1 {
			t.Fatalf("inbox %+v %v", in, err)
		}
		st.Armed.Store(true)
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := svc.MarkRead(ctx(), bob, []string{in.Messages[0].ID})
			done <- result{n, err}
		}()
		select {
		case r := <-done:
			var ve *vp.Error
			if r.n != 0 || !errors.As(r.err, &ve) || ve.Kind != vp.KindConflict || ve.Field != "receiptIds" {
				t.Fatalf("every write lost: marked %d, %v; want 0 and a conflict on receiptIds", r.n, r.err)
			}
			if n := st.Lost.Load(); n != 1+table.MaxUpdateAttempts {
				t.Fatalf("%d writes lost, want %d (the batch's, then the bound)", n, 1+table.MaxUpdateAttempts)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("MarkRead still rereading after %d lost writes: the loop has no bound", st.Lost.Load())
		}
	})
}
