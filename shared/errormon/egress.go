package errormon

import (
	"regexp"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// checkDeploymentURL refuses at once a deploymentUrl the egress policy
// would refuse when the scan dials it: http, a refused address literal, a
// numeric or localhost host, user info. A name's addresses are checked
// at each dial (they may change).
func checkDeploymentURL(op string, pol *egress.Policy, raw string) error {
	if strings.TrimSpace(raw) == "" {
		return vp.E(op, vp.KindInvalid, "deploymentUrl", "is required for a convex source: the deployment's URL, e.g. https://happy-otter-123.convex.cloud")
	}
	if _, err := pol.CheckURL(raw); err != nil {
		return vp.Errorf(op, vp.KindInvalid, "deploymentUrl", "%v; a Convex deployment's URL is public https, e.g. https://happy-otter-123.convex.cloud", err)
	}
	return nil
}

// legacyStatus is how a refusal was written before the egress policy:
// "HTTP 401: " followed by up to 200 bytes of the remote's answer.
var legacyStatus = regexp.MustCompile(`HTTP [0-9]{3}: `)

// withoutRemoteText cuts from a lastError stored before the egress policy
// the remote's answer it quoted, keeping the status: list_errors never
// shows a remote's bytes, also for what a past scan stored.
func withoutRemoteText(lastError string) string {
	loc := legacyStatus.FindStringIndex(lastError)
	if loc == nil {
		return lastError
	}
	return lastError[:loc[1]-2] + " (the remote's answer is not shown)"
}
