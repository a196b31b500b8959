package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// envKeys reads a deployment's deploy key from the environment variable
// its deployKeyEnvVar names, at each scan (never stored).
type envKeys struct{}

func (envKeys) Key(_ context.Context, _ string, d errormon.Deployment) (string, error) {
	return os.Getenv(d.DeployKeyEnvVar), nil
}

// openErrors builds the error monitor: Convex over HTTP, CloudWatch Logs
// with the machine's AWS credentials (environment or shared config;
// nothing is read until a cloudwatch deployment is scanned).
func openErrors(ctx context.Context, ws store.Store, signer *listing.Signer, log *slog.Logger, gh github.ForTenants,
	issues *issue.Service, ob *outbox.Outbox, eg *egress.Policy) (*errormon.Service, error) {
	sources := map[string]source.Source{errormon.SourceConvex: convex.New(convex.Options{Egress: eg})}
	if cfg, err := config.LoadDefaultConfig(ctx); err == nil {
		sources[errormon.SourceCloudWatch] = cloudwatch.New(cloudwatch.Options{Client: cloudwatchlogs.NewFromConfig(cfg)})
	} else {
		log.Warn("no AWS configuration: cloudwatch deployments cannot be scanned", "err", err)
	}
	mon := errormon.New(errormon.Options{Store: ws, Cursors: signer, Logger: log, Sources: sources, Keys: envKeys{},
		GitHub: gh, Issues: issues, Jobs: ob, Egress: eg})
	return mon, mon.Wire(ob)
}
