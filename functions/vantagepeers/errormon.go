package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
)

// deployKeys are the tenants' deploy keys in the data dir, each bound to
// a URL; the default tenant's also from the environment variable of a
// deploy key's name (VP_DEPLOY_KEY_*, bound by its own prefix only), read
// at each scan (never stored). No other tenant reads the environment.
func deployKeys(dataDir string) *errormon.FileKeys {
	return &errormon.FileKeys{File: &tenantfile.File[map[string]errormon.DeployKey]{Path: filepath.Join(dataDir, errormon.DeployKeysFile)}, Getenv: os.Getenv}
}

// logGroups are the CloudWatch Logs log groups the operator allowed each
// tenant (`vantagepeers loggroups`); none by default.
func logGroups(dataDir string) *errormon.FileLogGroups {
	return &errormon.FileLogGroups{File: &tenantfile.File[[]string]{Path: filepath.Join(dataDir, errormon.LogGroupsFile)}}
}

// errorSources are the error monitor's log sources: Convex over HTTP,
// CloudWatch Logs with the machine's AWS credentials (environment or
// shared config; nothing is read until a cloudwatch deployment is scanned).
func errorSources(ctx context.Context, eg *egress.Policy, log *slog.Logger) map[string]source.Source {
	sources := map[string]source.Source{errormon.SourceConvex: convex.New(convex.Options{Egress: eg})}
	if cfg, err := config.LoadDefaultConfig(ctx); err == nil {
		sources[errormon.SourceCloudWatch] = cloudwatch.New(cloudwatch.Options{Client: cloudwatchlogs.NewFromConfig(cfg)})
	} else {
		log.Warn("no AWS configuration: cloudwatch deployments cannot be scanned", "err", err)
	}
	return sources
}
