package awsenv

import "time"

// Trigger says what invokes a Lambda function.
type Trigger string

// Triggers.
const (
	TriggerHTTP     Trigger = "http"     // API Gateway routes (httpapi.Routes)
	TriggerQueue    Trigger = "sqs"      // the SQS queue of embedding jobs
	TriggerSchedule Trigger = "schedule" // EventBridge rules, one a cron job (jobs.Catalogue)
	// TriggerWebSocket: the Pacerelle WebSocket API's routes.
	TriggerWebSocket Trigger = "websocket"
)

// Function is one Lambda function: its entry point is functions/<Name>
// (Dir), built by `make lambdas` into <Name>.zip and deployed by the CDK
// stack with this memory and timeout. The routes and jobs it serves are in
// the route table and the job catalogue (their Function field), copied for
// the stack into Routes and Schedules.
type Function struct {
	Name     string
	Dir      string
	MemoryMB int
	Timeout  time.Duration
	Trigger  Trigger
	// GitHub: the function reads the tenants' GitHub credentials, the
	// Secrets Manager secrets <EnvGitHubSecretPrefix><tenant>. The CDK
	// stack sets the prefix on these functions, and grants the read to
	// them, only.
	GitHub bool
	// ErrorMonitor: the function runs the error-monitor job, which reads
	// the monitored deployments' error logs — a Convex deployment's with
	// its deploy key, the Secrets Manager secret
	// <EnvDeployKeySecretPrefix><tenant>/<deployKeyEnvVar>; CloudWatch Logs
	// log groups with logs:FilterLogEvents, on the groups of
	// EnvTenantLogGroups. The CDK stack sets the prefix on these
	// functions, and grants both reads to them, only. (EnvTenantLogGroups
	// is set on them and on FuncMCP, whose add_deployment checks it.)
	ErrorMonitor bool
	// Pushes: the function rings Pacerelle doorbells, POSTing to the
	// WebSocket API's @connections (EnvPacerelleConnections). The CDK
	// stack sets the endpoint on these functions, and grants
	// execute-api:ManageConnections on that API's @connections to them,
	// only.
	Pushes bool
}

// Functions returns the Lambda functions — the one list the Makefile's
// FUNCTIONS, the CDK stack and the Lambda tests are checked against.
//
// Go needs little memory, but CPU scales with it and the mcp function's
// cold start is CPU-bound (tool schemas).
//
// The mcp function offers the GitHub tools but never calls GitHub: the
// comments its task completions cause are outbox jobs (issue.TopicComment)
// that its process only enqueues and Kicks — no outbox worker runs in a
// Lambda, and Flush runs just the task events, whose github.issues
// delivery enqueues the comment — so the scheduler's outbox job posts
// them. It needs no GitHub credentials.
//
// Pacerelle: the relay's HTTP API is on the mcp function, whose sends ring
// the inboxes' doorbells right after their commit (Pushes); the
// scheduler's outbox job retries the rings that failed (Pushes); the
// doorbell function answers the WebSocket API's routes and pushes nothing.
func Functions() []Function {
	return []Function{
		// The HTTP API's integration limit is 30 s.
		{Name: FuncMCP, Dir: "functions/" + FuncMCP, MemoryMB: 1024, Timeout: 29 * time.Second, Trigger: TriggerHTTP, Pushes: true},
		{Name: FuncOAuth, Dir: "functions/" + FuncOAuth, MemoryMB: 256, Timeout: 10 * time.Second, Trigger: TriggerHTTP},
		{Name: FuncEmbedder, Dir: "functions/" + FuncEmbedder, MemoryMB: 512, Timeout: 60 * time.Second, Trigger: TriggerQueue},
		// Less than the 1-minute period of the most frequent job. GitHub:
		// the outbox job posts the issue comments (topic github.comment) and
		// the PR monitor reads pull requests. ErrorMonitor: it runs the
		// error-monitor job (every 5 minutes).
		{Name: FuncScheduler, Dir: "functions/" + FuncScheduler, MemoryMB: 256, Timeout: 55 * time.Second, Trigger: TriggerSchedule, GitHub: true, ErrorMonitor: true, Pushes: true},
		// GitHub counts a delivery not answered within 10 s as failed.
		// GitHub: the webhook secrets, to check the deliveries' signatures.
		{Name: FuncWebhooks, Dir: "functions/" + FuncWebhooks, MemoryMB: 256, Timeout: 10 * time.Second, Trigger: TriggerHTTP, GitHub: true},
		// $connect checks a token or a device credential and writes a row:
		// small and quick. The WebSocket API's integration limit is 29 s.
		{Name: FuncDoorbell, Dir: "functions/" + FuncDoorbell, MemoryMB: 256, Timeout: 10 * time.Second, Trigger: TriggerWebSocket},
	}
}

// FunctionNames lists the functions' names, in table order.
func FunctionNames() []string {
	var out []string
	for _, f := range Functions() {
		out = append(out, f.Name)
	}
	return out
}

// FunctionNamed returns the function called name.
func FunctionNamed(name string) (Function, bool) {
	for _, f := range Functions() {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}
