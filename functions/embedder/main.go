// Command embedder is the Lambda function fed by the SQS queue of embedding
// jobs: it embeds each batch and reports the failed items.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	app := awsapp.MustLoad(awsapp.FuncEmbedder, version, awsapp.ConceptEmbedder)
	lambda.Start(app.HandleEmbedBatch)
}
