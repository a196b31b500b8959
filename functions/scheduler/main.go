// Command scheduler is the Lambda function an EventBridge schedule invokes
// every minute: recurring tasks and the other periodic jobs.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncScheduler, version, awsapp.ErrorMonitorSources)
	lambda.Start(app.HandleSchedule)
}
