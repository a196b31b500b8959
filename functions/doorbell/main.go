// Command doorbell is the Lambda function behind the Pacerelle WebSocket
// API's routes: $connect (authorised here), $disconnect and $default (a
// ping, answered with the inbox head). The rings themselves are pushed by
// the functions that commit them (awsenv.Function.Pushes).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncDoorbell, version)
	lambda.Start(app.DoorbellHandler())
}
