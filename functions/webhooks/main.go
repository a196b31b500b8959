// Command webhooks is the Lambda function behind the HTTP API's
// /webhooks/github and /webhooks/github/{tenant} routes: GitHub webhook
// deliveries (package webhooks).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncWebhooks, version)
	lambda.Start(app.HTTP(app.WebhooksHandler()))
}
