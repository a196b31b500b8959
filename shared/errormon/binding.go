package errormon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DeployKey is a tenant's deploy key and the URL it may be sent to: a key
// is sent only to a deployment whose deploymentUrl has the same origin,
// so an agent that names its tenant's key with a URL of its own receives
// nothing. Its JSON form is the embedded binary's file entry and an AWS
// secret's optional JSON value.
type DeployKey struct {
	Key string `json:"key"`
	// URL is the origin the key is bound to ("" : the one its own prefix
	// names, see ConvexKeyOrigin, else none: it is never sent).
	URL string `json:"url,omitempty"`
}

// UnmarshalJSON also reads a bare string, the key alone: the form of files
// and secrets written before keys were bound.
func (k *DeployKey) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*k = DeployKey{Key: s}
		return nil
	}
	type plain DeployKey
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*k = DeployKey(p)
	return nil
}

// Origin is where the key may be sent: its stored URL's origin, else the
// one its Convex prefix names. how says which ("" when none: the key is
// never sent).
func (k DeployKey) Origin() (origin, how string) {
	if k.URL != "" {
		o, err := egress.Origin(k.URL)
		if err != nil {
			return "", ""
		}
		return o, "the URL it was stored with"
	}
	if o, ok := ConvexKeyOrigin(k.Key); ok {
		return o, "its own prefix"
	}
	return "", ""
}

// ConvexKeyOrigin is the URL of the deployment a Convex deploy key
// belongs to: prod:<name>|… and dev:<name>|… are the keys of deployment
// <name>, at https://<name>.convex.cloud. Other keys (preview:, project:,
// anything else) name no deployment: ok is false.
func ConvexKeyOrigin(key string) (origin string, ok bool) {
	head, _, found := strings.Cut(key, "|")
	if !found {
		return "", false
	}
	kind, name, _ := strings.Cut(head, ":")
	if kind != "prod" && kind != "dev" || !deploymentName(name) {
		return "", false
	}
	return "https://" + name + ".convex.cloud", true
}

// deploymentName reports whether s is one DNS label of lower-case
// letters, digits and inner hyphens (happy-otter-123): nothing that could
// move the URL to another host.
func deploymentName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// bindURL is the origin a key given with raw is stored with ("" for "").
func bindURL(op, raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	o, err := egress.Origin(raw)
	if err != nil {
		return "", vp.Errorf(op, vp.KindInvalid, "url", "%q: %v; give the deployment's URL, e.g. https://happy-otter-123.convex.cloud", clipName(raw), err)
	}
	return o, nil
}

// StatusKeyElsewhere is the status of a Convex deployment whose deploy key
// is bound to another URL than its deploymentUrl: nothing is sent.
const StatusKeyElsewhere = "key bound to another URL"

// keyElsewhereText says why a deployment's key was not sent.
func (s *Service) keyElsewhereText(tenant string, d Deployment, keyOrigin, how string) string {
	at, err := egress.Origin(d.DeploymentURL)
	if err != nil {
		at = fmt.Sprintf("%q (%v)", clipName(d.DeploymentURL), err)
	}
	return fmt.Sprintf("deployment %s: %s: tenant %s's deploy key %s may be sent only to %s (from %s), and the deployment's URL is %s, so nothing is sent; "+
		"if that URL is the deployment's, %s",
		d.Name, StatusKeyElsewhere, tenant, d.DeployKeyEnvVar, keyOrigin, how, at, s.o.Keys.HowToSet(tenant, d.DeployKeyEnvVar, d.DeploymentURL))
}
