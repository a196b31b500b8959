package errormon

import "github.com/vantagepeers/vantagepeers/shared/vp"

// DeploymentLimits bound add_deployment's arguments, declared once: the
// checks read them and tools/list advertises them. The name and the
// orchestrator are bounded by vp.CheckName; githubRepo, deploymentUrl and
// deployKeyEnvVar are checked by their shapes, which these bounds contain.
type DeploymentLimits struct {
	Name, GitHubRepo, DeploymentURL, DeployKeyEnvVar, LogGroups, FilterPattern vp.Limit
	MinOccurrences, WindowMinutes                                              vp.Limit
}

// Limits are add_deployment's limits.
func (DeploymentInput) Limits() DeploymentLimits {
	return DeploymentLimits{
		Name:            DeploymentRef{}.Limits(),
		GitHubRepo:      vp.MaxBytes("githubRepo", 140), // owner (39) / name (100)
		DeploymentURL:   vp.MaxBytes("deploymentUrl", 2048),
		DeployKeyEnvVar: vp.MaxBytes("deployKeyEnvVar", len(DeployKeyPrefix)+64),
		LogGroups:       vp.MaxItems("logGroups", 20, maxLogGroupBytes),
		FilterPattern:   vp.MaxBytes("filterPattern", 1024),
		MinOccurrences:  vp.Between("minOccurrences", 1, MaxMinOccurrences),
		WindowMinutes:   vp.Between("windowMinutes", 1, MaxWindowMinutes),
	}
}

// Limits are remove_deployment's limits.
func (DeploymentRef) Limits() vp.Limit { return vp.MaxBytes("name", vp.MaxNameBytes) }
