package cloudwatchfake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"

	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch/cloudwatchfake"
)

func noRetry(o *cloudwatchlogs.Options) { o.RetryMaxAttempts = 1 }

// The real SDK client pages through the fake: empty pages with a token
// come before each page of events and before the end, whose answer is an
// empty page without a token.
func TestSDKPaginatesAgainstFakeCloudWatchLogs(t *testing.T) {
	f := cloudwatchfake.New(t, cloudwatchfake.Options{PageSize: 2, EmptyPages: 1})
	t0 := time.Now().Add(-time.Minute)
	f.Put("/aws/lambda/api",
		cloudwatchfake.Event{Timestamp: t0.Add(2 * time.Second), Message: "ERROR b"},
		cloudwatchfake.Event{Timestamp: t0, Message: "ERROR a"},
		cloudwatchfake.Event{Timestamp: t0.Add(time.Second), Message: "INFO skip"},
		cloudwatchfake.Event{Timestamp: t0.Add(3 * time.Second), Message: "ERROR c"},
	)
	p := cloudwatchlogs.NewFilterLogEventsPaginator(f.Client(noRetry), &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName: aws.String("/aws/lambda/api"), FilterPattern: aws.String("ERROR"),
		StartTime: aws.Int64(t0.UnixMilli()), EndTime: aws.Int64(time.Now().UnixMilli()),
	})
	var got []string
	var pages []int
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(out.Events))
		for _, e := range out.Events {
			got = append(got, aws.ToString(e.Message))
		}
	}
	if want := []int{0, 2, 0, 1, 0, 0}; !equal(pages, want) {
		t.Fatalf("page sizes %v, want %v", pages, want)
	}
	if len(got) != 3 || got[0] != "ERROR a" || got[1] != "ERROR b" || got[2] != "ERROR c" {
		t.Fatalf("events %q", got)
	}
	for _, r := range f.Requests() {
		if r.Status != 200 || r.Group != "/aws/lambda/api" || r.FilterPattern != "ERROR" {
			t.Fatalf("request %+v", r)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestErrorsAgainstFakeCloudWatchLogs(t *testing.T) {
	f := cloudwatchfake.New(t, cloudwatchfake.Options{})
	f.CreateLogGroup("g")
	c := f.Client(noRetry)
	call := func(in *cloudwatchlogs.FilterLogEventsInput) error {
		_, err := c.FilterLogEvents(context.Background(), in)
		return err
	}
	code := func(err error) string {
		var api smithy.APIError
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		return ""
	}
	f.Throttle(1)
	err := call(&cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("g")})
	var te *types.ThrottlingException
	if !errors.As(err, &te) || code(err) != "ThrottlingException" {
		t.Fatalf("throttled: %v (%T)", err, err)
	}
	if err := call(&cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("nope")}); code(err) != "ResourceNotFoundException" {
		t.Fatalf("missing group: %v", err)
	}
	if err := call(&cloudwatchlogs.FilterLogEventsInput{LogGroupIdentifier: aws.String("arn:aws:logs:us-east-1:123456789012:log-group:g:*")}); err != nil {
		t.Fatalf("by ARN: %v", err)
	}
	if err := call(&cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("g"), NextToken: aws.String("bogus")}); code(err) != "InvalidParameterException" {
		t.Fatalf("bad token: %v", err)
	}
	bad := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.URL()), RetryMaxAttempts: 1,
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "s"}, nil
		}))})
	if _, err := bad.FilterLogEvents(context.Background(), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("g")}); code(err) != "UnrecognizedClientException" {
		t.Fatalf("bad credentials: %v", err)
	}
}

func TestFilterPatternsAgainstFakeCloudWatchLogs(t *testing.T) {
	f := cloudwatchfake.New(t, cloudwatchfake.Options{})
	t0 := time.Now()
	for _, m := range []string{"ERROR timeout db", "ERROR healthcheck", "panic: boom", "INFO ok", "Task timed out after 3.00 seconds"} {
		f.Put("g", cloudwatchfake.Event{Timestamp: t0, Message: m})
	}
	c := f.Client(noRetry)
	for pattern, want := range map[string]int{"": 5, "ERROR": 2, "ERROR timeout": 1, "?ERROR ?panic": 3, "ERROR -healthcheck": 1, `"timed out"`: 1, "error": 0} {
		out, err := c.FilterLogEvents(context.Background(), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("g"), FilterPattern: aws.String(pattern)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Events) != want {
			t.Errorf("%q: %d events, want %d", pattern, len(out.Events), want)
		}
	}
}
