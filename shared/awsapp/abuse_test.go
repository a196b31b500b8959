package awsapp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
)

// TestRegistrationLimitUsesTheGatewaySourceIP: on the oauth function the
// registration limit counts the source IP API Gateway reports in the
// event; an X-Forwarded-For the client wrote does not make it another
// address, and another source IP is counted apart.
func TestRegistrationLimitUsesTheGatewaySourceIP(t *testing.T) {
	st := dynamotest.NewStore(t, nil) // the table the counters and clients live in
	// DynamoDB Local keeps tables apart by access key: use the test store's.
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	a, err := awsapp.Load(context.Background(), awsapp.Options{Function: awsenv.FuncOAuth, Version: "test", AWS: &cfg, LogOutput: io.Discard,
		Secrets: awsapp.StaticSecrets{}, Getenv: env(map[string]string{awsenv.EnvMasterHash: strings.Repeat("ab", 32),
			awsenv.EnvOAuthRegisterPerMinute: "3", awsenv.EnvDynamoDBEndpoint: dynamotest.Endpoint(t), awsenv.EnvTable: st.Table()})})
	if err != nil {
		t.Fatal(err)
	}
	h := a.HTTP(a.OAuthHandler())
	register := func(source, xff string) events.APIGatewayV2HTTPResponse {
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "ANY /oauth/{proxy+}", RawPath: "/oauth/register",
			Headers: map[string]string{"content-type": "application/json", "x-forwarded-for": xff},
			Body:    `{"client_name":"c","redirect_uris":["https://app.example/cb"]}`,
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/oauth/register", SourceIP: source}},
		}
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for i := range 3 {
		if r := register("203.0.113.7", fmt.Sprintf("10.0.0.%d, 203.0.113.7", i)); r.StatusCode != http.StatusCreated {
			t.Fatalf("registration %d: %d %s", i, r.StatusCode, r.Body)
		}
	}
	r := register("203.0.113.7", "198.51.100.99, 203.0.113.7")
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.Body, "limit is 3 a minute") || r.Headers["Retry-After"] == "" {
		t.Fatalf("4th registration from one source IP: %d %v %s", r.StatusCode, r.Headers, r.Body)
	}
	if r := register("198.51.100.99", ""); r.StatusCode != http.StatusCreated {
		t.Fatalf("another source IP: %d %s", r.StatusCode, r.Body)
	}
}

func TestAbuseLimitsConfig(t *testing.T) {
	c, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t", awsenv.EnvTrustedProxies: "10.0.0.0/8, 192.0.2.1",
		awsenv.EnvOAuthRegisterPerMinute: "5", awsenv.EnvOAuthMaxPendingClients: "200"}))
	if err != nil || len(c.TrustedProxies) != 2 || c.RegisterPerMinute != 5 || c.MaxPendingClients != 200 {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []map[string]string{
		{awsenv.EnvTrustedProxies: "10.0.0.0/8,example.com"},
		{awsenv.EnvOAuthRegisterPerMinute: "0"},
		{awsenv.EnvOAuthMaxPendingClients: "lots"},
	} {
		bad[awsenv.EnvTable] = "t"
		var name string
		for k := range bad {
			if k != awsenv.EnvTable {
				name = k
			}
		}
		if _, err := awsapp.ConfigFromEnv(env(bad)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, name)
		}
	}
}
