package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
)

// TestOnlyCiphertextStoredInDynamoDB: on DynamoDB (Local) too, no item
// of the relay's table holds a request's plaintext: every string, number
// and binary attribute of every item, nested ones included, is searched.
func TestOnlyCiphertextStoredInDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: SQLite only")
	}
	ctx := context.Background()
	client := dynamotest.Client(t)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	table := "vp-relay-" + hex.EncodeToString(suffix)
	st, err := dynamo.New(ctx, dynamo.Options{Client: client, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })

	f := newFixtureOn(t, st)
	const secret = "PLAINTEXT-CANARY-publish-the-q3-report"
	for i := range 5 {
		f.request(t, fmt.Sprintf("r%d", i), "c1", secret)
	}
	if page, err := f.ac.Inbox(ctx, 0, 50); err != nil || len(page.Messages) != 5 {
		t.Fatalf("inbox: %d messages, %v; want 5", len(page.Messages), err)
	}
	items, sawParty := 0, false
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			items++
			var all bytes.Buffer
			for name, v := range it {
				all.WriteString(name)
				attributeBytes(&all, v)
			}
			// The control: the walk reads what items hold (the party names).
			sawParty = sawParty || bytes.Contains(all.Bytes(), []byte(wire.AgentParty("bot")))
			if bytes.Contains(all.Bytes(), []byte("q3-report")) {
				t.Fatalf("a DynamoDB item holds the plaintext: %s", all.String())
			}
		}
	}
	if items < 5 || !sawParty {
		t.Fatalf("scanned %d items (the 5 messages alone are more), found the party name: %v", items, sawParty)
	}
	f.logs.mu.Lock()
	defer f.logs.mu.Unlock()
	if bytes.Contains(f.logs.b.Bytes(), []byte("q3-report")) {
		t.Fatal("the logs contain the plaintext")
	}
}

// attributeBytes writes the raw contents of v (strings, numbers, binaries,
// and those inside sets, lists and maps) to w.
func attributeBytes(w *bytes.Buffer, v types.AttributeValue) {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		w.WriteString(a.Value)
	case *types.AttributeValueMemberN:
		w.WriteString(a.Value)
	case *types.AttributeValueMemberB:
		w.Write(a.Value)
	case *types.AttributeValueMemberSS:
		for _, s := range a.Value {
			w.WriteString(s)
		}
	case *types.AttributeValueMemberBS:
		for _, b := range a.Value {
			w.Write(b)
		}
	case *types.AttributeValueMemberL:
		for _, x := range a.Value {
			attributeBytes(w, x)
		}
	case *types.AttributeValueMemberM:
		for k, x := range a.Value {
			w.WriteString(k)
			attributeBytes(w, x)
		}
	}
}
