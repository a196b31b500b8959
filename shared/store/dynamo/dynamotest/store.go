package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
)

// NewStore returns a store on a fresh table of the emulator (see Endpoint),
// deleted at the end of the test.
func NewStore(t testing.TB, now func() time.Time) *dynamo.Store {
	t.Helper()
	client := Client(t)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	table := "vp-test-" + hex.EncodeToString(suffix)
	s, err := dynamo.New(context.Background(), dynamo.Options{Client: client, Table: table, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	return s
}
