package message_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestSendCheckMark(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice, bob := as("acme", "alice"), as("acme", "bob")
		res, err := svc.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: "schema merged"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Recipients) != 1 || res.Recipients[0].Orchestrator != "bob" {
			t.Fatalf("recipients %+v", res.Recipients)
		}
		in, err := svc.Check(ctx(), bob, message.CheckInput{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Count != 1 || in.Messages[0].Content != "schema merged" || in.Messages[0].From != "alice" || in.Messages[0].ReadAt != nil {
			t.Fatalf("inbox %+v", in)
		}
		// Reading someone else's inbox needs their identity.
		_, err = svc.Check(ctx(), alice, message.CheckInput{Recipient: "bob"})
		wantKind(t, err, vp.KindForbidden, "recipient")
		// Marking someone else's receipt likewise, and nothing changes.
		_, err = svc.MarkRead(ctx(), alice, []string{in.Messages[0].ID})
		wantKind(t, err, vp.KindForbidden, "receiptIds")
		n, err := svc.MarkRead(ctx(), bob, []string{in.Messages[0].ID, in.Messages[0].ID})
		if err != nil || n != 1 {
			t.Fatalf("mark: %d %v", n, err)
		}
		n, err = svc.MarkRead(ctx(), bob, []string{in.Messages[0].ID})
		if err != nil || n != 0 {
			t.Fatalf("second mark counted %d (%v), want 0", n, err)
		}
		in, _ = svc.Check(ctx(), bob, message.CheckInput{})
		if in.Count != 0 {
			t.Fatalf("read message still unread: %+v", in)
		}
		_, err = svc.MarkRead(ctx(), bob, []string{"rcp_doesnotexist"})
		wantKind(t, err, vp.KindNotFound, "receiptIds")
	})
}

func TestCheckSinceAndOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice, bob := as("acme", "alice"), as("acme", "bob")
		var created []int64
		for i := 0; i < 5; i++ {
			r, err := svc.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: fmt.Sprint("m", i)})
			if err != nil {
				t.Fatal(err)
			}
			created = append(created, r.CreatedAt)
		}
		in, _ := svc.Check(ctx(), bob, message.CheckInput{})
		for i, m := range in.Messages {
			if m.Content != fmt.Sprint("m", i) {
				t.Fatalf("message %d is %q: not chronological", i, m.Content)
			}
		}
		since := created[4]
		in, _ = svc.Check(ctx(), bob, message.CheckInput{Since: &since})
		for _, m := range in.Messages {
			if m.CreatedAt <= since {
				t.Fatalf("since=%d returned a message created at %d", since, m.CreatedAt)
			}
		}
		in, _ = svc.Check(ctx(), bob, message.CheckInput{Limit: 2})
		if in.Count != 2 || !in.HasMore {
			t.Fatalf("limit 2: count %d hasMore %v", in.Count, in.HasMore)
		}
	})
}

func TestBroadcastResolvesAtSendTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		root := admin("acme")
		for _, o := range []string{"alice", "bob", "carol"} {
			mustProfile(t, svc, root, o)
		}
		res, err := svc.Send(ctx(), as("acme", "alice"), message.SendInput{Channel: "broadcast", Content: "standup in 5"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Recipients {
			got = append(got, r.Orchestrator)
		}
		if fmt.Sprint(got) != "[bob carol]" && fmt.Sprint(got) != "[carol bob]" {
			t.Fatalf("broadcast reached %v, want bob and carol (not the sender)", got)
		}
		mustProfile(t, svc, root, "dave") // joins after the send
		in, _ := svc.Check(ctx(), as("acme", "dave"), message.CheckInput{})
		if in.Count != 0 {
			t.Fatalf("a profile created after the broadcast received it")
		}
		n, _ := svc.MarkRead(ctx(), as("acme", "bob"), []string{res.Recipients[0].ReceiptID, res.Recipients[1].ReceiptID}[:1])
		_ = n
		st, err := svc.BroadcastStatus(ctx(), root, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Receipts) != 2 || st.ReadCount+st.Unread != 2 || st.From != "alice" {
			t.Fatalf("status %+v", st)
		}
	})
}

func TestChannelListAndInstances(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		root := admin("acme")
		if _, err := svc.SetSummary(ctx(), root, "tau", "tau-laptop", "on it"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SetSummary(ctx(), root, "tau", "tau-vps", "idle"); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Send(ctx(), as("acme", "alice"), message.SendInput{Channel: " pi, phi,pi,tau-laptop", Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Recipients) != 3 {
			t.Fatalf("recipients %+v, want pi, phi and tau@tau-laptop", res.Recipients)
		}
		tau := as("acme", "tau")
		laptop, _ := svc.Check(ctx(), tau, message.CheckInput{InstanceID: "tau-laptop"})
		vps, _ := svc.Check(ctx(), tau, message.CheckInput{InstanceID: "tau-vps"})
		if laptop.Count != 1 || vps.Count != 0 {
			t.Fatalf("instance targeting: laptop %d, vps %d; want 1 and 0", laptop.Count, vps.Count)
		}
		// The instanceId argument restricts a role-wide send to one instance.
		if _, err := svc.Send(ctx(), as("acme", "alice"), message.SendInput{Channel: "tau", InstanceID: "tau-vps", Content: "y"}); err != nil {
			t.Fatal(err)
		}
		vps, _ = svc.Check(ctx(), tau, message.CheckInput{InstanceID: "tau-vps"})
		laptop, _ = svc.Check(ctx(), tau, message.CheckInput{InstanceID: "tau-laptop"})
		if vps.Count != 1 || laptop.Count != 1 {
			t.Fatalf("instanceId argument: vps %d laptop %d; want 1 and 1", vps.Count, laptop.Count)
		}
	})
}

func TestSendValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		cases := []struct {
			name  string
			in    message.SendInput
			kind  vp.Kind
			field string
		}{
			{"empty content", message.SendInput{Channel: "bob"}, vp.KindInvalid, "content"},
			{"empty channel", message.SendInput{Content: "x"}, vp.KindInvalid, "channel"},
			{"only commas", message.SendInput{Channel: " , ,", Content: "x"}, vp.KindInvalid, "channel"},
			{"oversize", message.SendInput{Channel: "bob", Content: strings.Repeat("x", vp.MaxMessageBytes+1)}, vp.KindTooLarge, "65536"},
			{"invalid utf-8", message.SendInput{Channel: "bob", Content: "\xff\xfe"}, vp.KindInvalid, "UTF-8"},
			{"hash in name", message.SendInput{Channel: "bob#x", Content: "x"}, vp.KindInvalid, "channel"},
			{"impersonation", message.SendInput{From: "bob", Channel: "carol", Content: "x"}, vp.KindForbidden, "from"},
			{"system needs admin", message.SendInput{From: "system", Channel: "carol", Content: "x"}, vp.KindForbidden, "from"},
			{"broadcast to nobody", message.SendInput{Channel: "broadcast", Content: "x"}, vp.KindInvalid, "broadcast"},
			{"wildcard channel", message.SendInput{Channel: "bob,*", Content: "x"}, vp.KindInvalid, "channel"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.Send(ctx(), alice, c.in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, err := svc.ListMessages(ctx(), admin("acme"), message.ListMessagesInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("refused sends stored %d messages (%v)", len(page.Items), err)
		}
		// Case and Unicode normalisation: "Alice" is alice.
		if _, err := svc.Send(ctx(), alice, message.SendInput{From: "ALICE", Channel: "Bob", Content: "x"}); err != nil {
			t.Fatalf("case-folded identity refused: %v", err)
		}
		in, _ := svc.Check(ctx(), as("acme", "bob"), message.CheckInput{})
		if in.Count != 1 || in.Messages[0].From != "alice" {
			t.Fatalf("normalised delivery: %+v", in)
		}
		// The channel filter folds case like delivery does.
		page, _ = svc.ListMessages(ctx(), admin("acme"), message.ListMessagesInput{Channel: "BOB"})
		if len(page.Items) != 1 {
			t.Fatalf("channel filter BOB found %d messages sent to Bob, want 1", len(page.Items))
		}
		// Reserved words are not orchestrators.
		for _, id := range []string{"broadcast", "BROADCAST", "*"} {
			_, err := svc.UpdateProfile(ctx(), admin("acme"), profile.Update{Orchestrator: id})
			wantKind(t, err, vp.KindInvalid, "orchestratorId")
			_, err = svc.Send(ctx(), admin("acme"), message.SendInput{From: id, Channel: "bob", Content: "x"})
			wantKind(t, err, vp.KindInvalid, "from")
		}
	})
}

func TestDeleteMessageCascades(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		root := admin("acme")
		for _, o := range []string{"alice", "bob", "carol"} {
			mustProfile(t, svc, root, o)
		}
		res, err := svc.Send(ctx(), as("acme", "alice"), message.SendInput{Channel: "broadcast", Content: "oops"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.DeleteMessage(ctx(), as("acme", "bob"), res.MessageID, "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		del, err := svc.DeleteMessage(ctx(), as("acme", "alice"), res.MessageID, "")
		if err != nil || !del.Deleted || del.ReceiptsDeleted != 2 {
			t.Fatalf("delete: %+v %v", del, err)
		}
		for _, o := range []string{"bob", "carol"} {
			if in, _ := svc.Check(ctx(), as("acme", o), message.CheckInput{}); in.Count != 0 {
				t.Fatalf("%s still sees a deleted message", o)
			}
		}
		_, err = svc.GetMessage(ctx(), root, res.MessageID)
		wantKind(t, err, vp.KindNotFound, "messageId")
		// system (admin only) may delete anyone's message.
		res, _ = svc.Send(ctx(), as("acme", "alice"), message.SendInput{Channel: "bob", Content: "x"})
		if _, err := svc.DeleteMessage(ctx(), root, res.MessageID, "system"); err != nil {
			t.Fatalf("system delete: %v", err)
		}
	})
}

func TestListMessagesContract(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		const n = 45
		alice, bob := as("acme", "alice"), as("acme", "bob")
		for i := 0; i < n; i++ {
			from := alice
			if i%3 == 0 {
				from = bob
			}
			if _, err := svc.Send(ctx(), from, message.SendInput{Channel: "carol", Content: fmt.Sprint("m", i)}); err != nil {
				t.Fatal(err)
			}
		}
		root := admin("acme")
		all := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListMessages(ctx(), root, message.ListMessagesInput{Params: listing.Params{Cursor: cursor}})
		})
		if len(all) != n {
			t.Fatalf("paged %d messages, want %d", len(all), n)
		}
		if all[0].(vp.Message).Content != fmt.Sprint("m", n-1) {
			t.Fatalf("not newest first: %v", all[0])
		}
		fromBob := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListMessages(ctx(), root, message.ListMessagesInput{From: "bob", Params: listing.Params{Cursor: cursor}})
		})
		if len(fromBob) != 15 {
			t.Fatalf("from bob: %d, want 15", len(fromBob))
		}
		byChannel := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListMessages(ctx(), root, message.ListMessagesInput{Channel: "carol", Params: listing.Params{Cursor: cursor}})
		})
		if len(byChannel) != n {
			t.Fatalf("by channel: %d, want %d", len(byChannel), n)
		}
		// A cursor is bound to its filters and its tenant.
		first, _ := svc.ListMessages(ctx(), root, message.ListMessagesInput{})
		_, err := svc.ListMessages(ctx(), root, message.ListMessagesInput{From: "bob", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListMessages(ctx(), admin("other"), message.ListMessagesInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, _ := svc.ListMessages(ctx(), root, message.ListMessagesInput{Params: listing.Params{Fields: "lite"}})
		row, _ := lite.Items[0].(map[string]json.RawMessage)
		if len(lite.Items) != 20 || row == nil {
			t.Fatalf("lite page: %d rows", len(lite.Items))
		}
		if _, has := row["content"]; has {
			t.Fatalf("lite row carries content: %v", row)
		}
		_, err = svc.ListMessages(ctx(), root, message.ListMessagesInput{Params: listing.Params{Fields: "medium"}})
		wantKind(t, err, vp.KindInvalid, "fields")
	})
}

// pageAll follows nextCursor to the end, checking the envelope on the way.
func pageAll(t *testing.T, page func(cursor string) (listing.Page[any], error)) []any {
	t.Helper()
	var all []any
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("pagination does not end")
		}
		p, err := page(cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Items...)
		if p.NextCursor == "" {
			return all
		}
		cursor = p.NextCursor
	}
}

func TestTenantIsolation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		a, b := admin("tenant-a"), admin("tenant-b")
		mustProfile(t, svc, a, "alice")
		mustProfile(t, svc, a, "bob")
		res, err := svc.Send(ctx(), a, message.SendInput{From: "alice", Channel: "bob", Content: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		peers, _ := svc.ListPeers(ctx(), b, listing.Params{})
		msgs, _ := svc.ListMessages(ctx(), b, message.ListMessagesInput{})
		inbox, _ := svc.Check(ctx(), b, message.CheckInput{Recipient: "bob"})
		if len(peers.Items)+len(msgs.Items)+inbox.Count != 0 {
			t.Fatalf("tenant b sees %d peers, %d messages, %d unread of tenant a", len(peers.Items), len(msgs.Items), inbox.Count)
		}
		_, err = svc.GetMessage(ctx(), b, res.MessageID)
		wantKind(t, err, vp.KindNotFound, "messageId")
		_, err = svc.MarkRead(ctx(), b, []string{res.Recipients[0].ReceiptID})
		wantKind(t, err, vp.KindNotFound, "receiptIds")
		_, err = svc.DeleteMessage(ctx(), b, res.MessageID, "system")
		wantKind(t, err, vp.KindNotFound, "messageId")
		_, err = svc.GetProfile(ctx(), b, "alice")
		wantKind(t, err, vp.KindNotFound, "orchestratorId")
		// Broadcast in b reaches nobody of a.
		mustProfile(t, svc, b, "zed")
		out, err := svc.Send(ctx(), b, message.SendInput{From: "yan", Channel: "broadcast", Content: "hi"})
		if err != nil || len(out.Recipients) != 1 || out.Recipients[0].Orchestrator != "zed" {
			t.Fatalf("broadcast in b: %+v %v", out, err)
		}
	})
}

// TestConcurrentAgents: 16 agents each send up to 100 messages to the others
// while polling and marking; every recipient gets every message exactly once.
func TestConcurrentAgents(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		svc := newServices(t, b.Open(t, nil), nil)
		// Sixteen racing agents are what it checks; the number of messages
		// only sets how long they race. DynamoDB Local serialises its
		// transactions in one Java process (~20 sends/s here), and the race
		// pass (-short, SQLite) slows every send tenfold.
		agents, perAgent := 16, 100
		switch {
		case b.Name == "dynamodb":
			perAgent = 40
		case testing.Short():
			perAgent = 50
		}
		name := func(i int) string { return fmt.Sprintf("agent%02d", i) }
		var sent sync.WaitGroup
		var sendersDone atomic.Int32
		received := make([]map[string]int, agents) // content -> times seen
		var wg sync.WaitGroup
		errs := make(chan error, agents*2)
		for i := 0; i < agents; i++ {
			received[i] = map[string]int{}
			sent.Add(1)
			wg.Add(2)
			go func(i int) { // sender
				defer wg.Done()
				defer sent.Done()
				defer sendersDone.Add(1)
				me := as("acme", name(i))
				for k := 0; k < perAgent; k++ {
					to := name((i + 1 + k%(agents-1)) % agents)
					if _, err := svc.Send(ctx(), me, message.SendInput{Channel: to, Content: fmt.Sprintf("%s>%s#%d", name(i), to, k)}); err != nil {
						errs <- err
						return
					}
				}
			}(i)
			go func(i int) { // receiver: poll, record, mark
				defer wg.Done()
				me := as("acme", name(i))
				for {
					done := int(sendersDone.Load()) == agents
					in, err := svc.Check(ctx(), me, message.CheckInput{Limit: 500})
					if err != nil {
						errs <- err
						return
					}
					ids := make([]string, 0, len(in.Messages))
					for _, m := range in.Messages {
						ids = append(ids, m.ID)
					}
					for len(ids) > 0 {
						chunk := ids[:min(len(ids), 100)]
						ids = ids[len(chunk):]
						n, err := svc.MarkRead(ctx(), me, chunk)
						if err != nil {
							errs <- err
							return
						}
						if n != len(chunk) {
							errs <- fmt.Errorf("%s: marked %d of %d fresh receipts", name(i), n, len(chunk))
							return
						}
					}
					for _, m := range in.Messages {
						received[i][m.Content]++
					}
					if done && in.Count == 0 {
						return
					}
					if len(in.Messages) == 0 {
						// An idle receiver yields to the senders: sixteen
						// empty polls in a loop only burn the CPU the
						// senders race on.
						time.Sleep(5 * time.Millisecond)
					}
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		total := 0
		for i := 0; i < agents; i++ {
			for content, times := range received[i] {
				if times != 1 {
					t.Fatalf("%s received %q %d times", name(i), content, times)
				}
				if !strings.HasSuffix(strings.SplitN(content, "#", 2)[0], ">"+name(i)) {
					t.Fatalf("%s received someone else's message %q", name(i), content)
				}
			}
			total += len(received[i])
		}
		if total != agents*perAgent {
			t.Fatalf("delivered %d messages, want %d", total, agents*perAgent)
		}
	})
}

// TestCheckSinceWhenTheClockTicksMidSend pins the flake CI once caught: a
// clock that advances on every reading puts each receipt id in a later
// millisecond than its message, and "since" must still mean createdAt > since.
func TestCheckSinceWhenTheClockTicksMidSend(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		var mu sync.Mutex
		clock := time.Now().Truncate(time.Millisecond)
		tick := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(time.Millisecond)
			return clock
		}
		svc := newServices(t, b.Open(t, nil), tick)
		alice, bob := as("acme", "alice"), as("acme", "bob")
		var created []int64
		for i := range 3 {
			r, err := svc.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: fmt.Sprint("m", i)})
			if err != nil {
				t.Fatal(err)
			}
			created = append(created, r.CreatedAt)
		}
		for i, since := range created {
			in, err := svc.Check(ctx(), bob, message.CheckInput{Since: &since})
			if err != nil {
				t.Fatal(err)
			}
			if want := len(created) - 1 - i; in.Count != want {
				t.Fatalf("since message %d: %d messages, want %d: %+v", i, in.Count, want, in.Messages)
			}
			for _, m := range in.Messages {
				if m.CreatedAt <= since {
					t.Fatalf("since=%d returned a message created at %d", since, m.CreatedAt)
				}
			}
		}
	})
}
