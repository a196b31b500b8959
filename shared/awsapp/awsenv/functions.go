package awsenv

import "time"

// Trigger says what invokes a Lambda function.
type Trigger string

// Triggers.
const (
	TriggerHTTP     Trigger = "http"     // API Gateway routes (httpapi.Routes)
	TriggerQueue    Trigger = "sqs"      // the SQS queue of embedding jobs
	TriggerSchedule Trigger = "schedule" // EventBridge rules, one a cron job (jobs.Catalogue)
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
}

// Functions returns the Lambda functions — the one list the Makefile's
// FUNCTIONS, the CDK stack and the Lambda tests are checked against.
//
// Go needs little memory, but CPU scales with it and the mcp function's
// cold start is CPU-bound (tool schemas).
func Functions() []Function {
	return []Function{
		// The HTTP API's integration limit is 30 s.
		{Name: FuncMCP, Dir: "functions/" + FuncMCP, MemoryMB: 1024, Timeout: 29 * time.Second, Trigger: TriggerHTTP},
		{Name: FuncOAuth, Dir: "functions/" + FuncOAuth, MemoryMB: 256, Timeout: 10 * time.Second, Trigger: TriggerHTTP},
		{Name: FuncEmbedder, Dir: "functions/" + FuncEmbedder, MemoryMB: 512, Timeout: 60 * time.Second, Trigger: TriggerQueue},
		// Less than the 1-minute period of the most frequent job.
		{Name: FuncScheduler, Dir: "functions/" + FuncScheduler, MemoryMB: 256, Timeout: 55 * time.Second, Trigger: TriggerSchedule},
		// GitHub counts a delivery not answered within 10 s as failed.
		{Name: FuncWebhooks, Dir: "functions/" + FuncWebhooks, MemoryMB: 256, Timeout: 10 * time.Second, Trigger: TriggerHTTP},
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
