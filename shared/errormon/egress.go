package errormon

import (
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
