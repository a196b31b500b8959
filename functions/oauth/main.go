// Command oauth is the Lambda function behind the HTTP API's /.well-known/*,
// /oauth/*, /admin/*, /issueBearerFromClerk and /health routes.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncOAuth, version)
	lambda.Start(app.HTTP(app.OAuthHandler()))
}
