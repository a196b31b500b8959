package awsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// errorMonitorPorts are the error monitor's: its log sources where it
// runs, each tenant's deploy keys (Secrets Manager) and the log groups the
// operator allowed each tenant (the stack's tenantLogGroups).
func (a *App) errorMonitorPorts(o Options, p *vpapp.Ports) error {
	if f, ok := awsenv.FunctionNamed(a.Function); ok && f.ErrorMonitor {
		if o.ErrorSources == nil {
			return fmt.Errorf("awsapp: the %s function runs the error monitor: its main passes awsapp.ErrorMonitorSources to MustLoad", a.Function)
		}
		p.ErrorSources = o.ErrorSources(a)
	}
	p.DeployKeys = &DeployKeys{Secrets: o.Secrets, Prefix: a.Config.DeployKeySecretPrefix}
	p.LogGroups = errormon.StaticLogGroups{Tenants: a.Config.TenantLogGroups,
		How: "the operator allows it in the stack's tenantLogGroups context (cdk deploy -c tenantLogGroups='{\"<tenant>\":[\"NAME-or-PREFIX*\"]}')"}
	return nil
}

// ErrorMonitorSources are the log sources of the error monitor: the main
// of a function that runs it (awsenv.Function.ErrorMonitor) passes them to
// MustLoad, so that the others — which only list errors — link no
// CloudWatch Logs client (1.3 MB of the mcp function's binary).
func ErrorMonitorSources(o *Options) { o.ErrorSources = errorSources }

// errorSources are the log sources, with a's configuration.
func errorSources(a *App) map[string]source.Source {
	return map[string]source.Source{
		errormon.SourceConvex:     convex.New(convex.Options{Egress: a.Egress()}),
		errormon.SourceCloudWatch: cloudwatch.New(cloudwatch.Options{Client: cloudwatchlogs.NewFromConfig(a.AWS)}),
	}
}

// DeployKeys reads a Convex deployment's deploy key, a secret of its
// tenant: the Secrets Manager secret <Prefix><tenant>/<name> at each scan,
// never <Prefix><name> nor another tenant's. A missing one is an empty
// key (the scan then says which secret to create). Its value is the key
// alone (bound to the deployment its prod:/dev: prefix names, if any) or
// JSON {"key": "...", "url": "..."}: the key bound to that URL's origin.
type DeployKeys struct {
	Secrets Secrets
	Prefix  string
}

// Key implements errormon.Keys.
func (k *DeployKeys) Key(ctx context.Context, tenant string, d errormon.Deployment) (errormon.DeployKey, error) {
	const op = "error-monitor"
	// Checked again whatever the caller did: the tenant and the name are
	// path segments of the secret's id.
	if k.Prefix == "" || !vp.ValidTenant(tenant) || !errormon.ValidDeployKeyName(d.DeployKeyEnvVar) {
		return errormon.DeployKey{}, nil
	}
	id := k.secretID(tenant, d.DeployKeyEnvVar)
	v, err := k.Secrets.Secret(ctx, id)
	if secretMissing(k.Secrets, id, err) {
		return errormon.DeployKey{}, nil
	}
	if err != nil {
		return errormon.DeployKey{}, vp.Wrap(op, vp.KindUnavailable, fmt.Errorf("reading the secret %s: %w", id, err))
	}
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "{") {
		return errormon.DeployKey{Key: v}, nil
	}
	// The decoder's errors may quote the value: they are not kept.
	var dk errormon.DeployKey
	if json.Unmarshal([]byte(v), &dk) != nil || strings.TrimSpace(dk.Key) == "" {
		return errormon.DeployKey{}, vp.Errorf(op, vp.KindInvalid, "deployKeyEnvVar",
			`the secret %s is JSON but not {"key": "<deploy key>", "url": "<deployment URL>"}`, id)
	}
	origin, err := egress.Origin(dk.URL)
	if err != nil {
		return errormon.DeployKey{}, vp.Errorf(op, vp.KindInvalid, "deployKeyEnvVar",
			`the secret %s: its "url" is not an absolute http(s) URL (%v)`, id, err)
	}
	return errormon.DeployKey{Key: strings.TrimSpace(dk.Key), URL: origin}, nil
}

// HowToSet implements errormon.Keys.
func (k *DeployKeys) HowToSet(tenant, name, url string) string {
	if k.Prefix == "" {
		return "this deployment has no deploy-key prefix (" + awsenv.EnvDeployKeySecretPrefix + "): its operator sets one"
	}
	if url == "" {
		url = "<deployment URL>"
	}
	return fmt.Sprintf(`the operator stores it as the Secrets Manager secret %s (aws secretsmanager create-secret --name %s --secret-string '{"key":"<deploy key>","url":%q}'; `+
		`a prod:/dev: Convex deploy key of that deployment may be stored alone)`, k.secretID(tenant, name), k.secretID(tenant, name), url)
}

func (k *DeployKeys) secretID(tenant, name string) string { return k.Prefix + tenant + "/" + name }

// ParseTenantLogGroups decodes VP_TENANT_LOG_GROUPS: JSON {"<tenant>":
// ["<log group>" or "<prefix>*", ...]}.
func ParseTenantLogGroups(v string) (map[string][]string, error) {
	var m map[string][]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf(`must be JSON {"<tenant>": ["<log group>" or "<prefix>*"]}: %v`, err)
	}
	for t, gs := range m {
		if !vp.ValidTenant(t) {
			return nil, fmt.Errorf("%q is not a valid tenant id", t)
		}
		for _, g := range gs {
			if !errormon.ValidLogGroupPattern(g) {
				return nil, fmt.Errorf("tenant %s: %q is not a log group name or a prefix followed by '*' (1-512 letters, digits and _/.#-)", t, g)
			}
		}
	}
	return m, nil
}
