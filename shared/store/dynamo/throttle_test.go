package dynamo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DynamoDB throttling, once the SDK stops retrying, reaches callers as
// rate-limited; other failures keep their kind. A stub endpoint answers
// every call with the error, the way DynamoDB's JSON protocol does.
func TestThrottlingIsRateLimited(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		limited bool
	}{
		{"provisioned throughput", `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`, true},
		{"throttling", `{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`, true},
		{"request limit", `{"__type":"com.amazonaws.dynamodb.v20120810#RequestLimitExceeded","message":"account limit"}`, true},
		{"transaction throttled", `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled","CancellationReasons":[{"Code":"None"},{"Code":"ThrottlingError","Message":"Throughput exceeds the current capacity"}]}`, true},
		{"validation", `{"__type":"com.amazon.coral.validate#ValidationException","message":"bad"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			client := dynamodb.New(dynamodb.Options{
				Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
			})
			st, err := dynamo.New(context.Background(), dynamo.Options{Client: client, Table: "t"})
			if err != nil {
				t.Fatal(err)
			}
			k := store.Key{PK: "T#a#X", SK: "1"}
			calls := map[string]error{}
			_, calls["get"] = st.Get(context.Background(), k)
			_, calls["query"] = st.Query(context.Background(), store.Query{PK: "T#a#X", Limit: 1})
			calls["put"] = st.Write(context.Background(), store.Put(store.Item{Key: k}, store.IfNotExists))
			calls["transaction"] = st.Write(context.Background(), store.Put(store.Item{Key: k}, store.Always),
				store.Delete(store.Key{PK: "T#a#X", SK: "2"}, store.Always))
			for call, err := range calls {
				if err == nil {
					t.Fatalf("%s: no error", call)
				}
				if tt.name == "transaction throttled" && call != "transaction" {
					continue // that body is meaningful only to TransactWriteItems
				}
				if got := vp.IsKind(err, vp.KindRateLimited); got != tt.limited {
					t.Errorf("%s: %v: rate-limited = %v, want %v", call, err, got, tt.limited)
				}
			}
		})
	}
}
