// Command mcp is the Lambda function behind the HTTP API's /mcp route: the
// stateless Streamable HTTP MCP endpoint, the same handler the embedded
// binary serves, on the customer's DynamoDB table.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncMCP, version, awsapp.ConceptEmbedder)
	lambda.Start(app.HTTP(app.MCPHandler()))
}
