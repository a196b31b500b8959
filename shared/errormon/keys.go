package errormon

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A deploy key is a secret of the tenant, set by someone who manages the
// tenant, never an arbitrary variable of the server: a deployment names
// one (its deployKeyEnvVar, so called for compatibility) by a name of
// this form, and only keys stored for its own tenant are read.
const (
	DeployKeyPrefix  = "VP_DEPLOY_KEY_"
	maxDeployKeyTail = 64
	// DeployKeyRule is the rule every refusal of a name states.
	DeployKeyRule = `must match ^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$: the name of a deploy key stored for this tenant, not a variable of the server`
)

// ValidDeployKeyName reports whether name matches
// ^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$. (A loop: see vp.ValidSlug on what a
// bounded repetition's regexp costs every process at start.)
func ValidDeployKeyName(name string) bool {
	tail, ok := strings.CutPrefix(name, DeployKeyPrefix)
	if !ok || len(tail) == 0 || len(tail) > maxDeployKeyTail {
		return false
	}
	for i := 0; i < len(tail); i++ {
		if c := tail[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// suggestKeyName is a valid name close to an old one, for the message
// that asks to rename it: DEPLOY_KEY_MYAPP becomes VP_DEPLOY_KEY_MYAPP.
func suggestKeyName(old string) string {
	tail := strings.TrimPrefix(strings.ToUpper(old), DeployKeyPrefix)
	tail = strings.TrimPrefix(strings.TrimPrefix(tail, "VP_"), "DEPLOY_KEY_")
	var b strings.Builder
	for _, c := range tail {
		switch {
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		s = "MYAPP"
	}
	return DeployKeyPrefix + s[:min(len(s), maxDeployKeyTail)]
}

// FileKeys are the embedded binary's deploy keys: each tenant's, by name,
// with the URL each may be sent to, in a file of the data dir
// (DeployKeysFile, mode 0600), which `vantagepeers deploykey` changes
// while the server runs. For the default tenant only, a name with no
// stored key falls back on the environment variable of that name
// (Getenv), and only for a deploy key's name; such a key is bound by its
// own prefix (ConvexKeyOrigin) or not at all.
type FileKeys struct {
	File *tenantfile.File[map[string]DeployKey]
	// Getenv reads the default tenant's fallback (os.Getenv, passed by the
	// composition root); nil: no fallback.
	Getenv func(string) string
}

// DeployKeysFile is FileKeys' file in the data dir.
const DeployKeysFile = "deploy-keys.json"

var _ Keys = (*FileKeys)(nil)

// Key implements Keys.
func (k *FileKeys) Key(_ context.Context, tenant string, d Deployment) (DeployKey, error) {
	// Checked again here, whatever the caller did: a name that is not a
	// deploy key's reads nothing, from the file or the environment.
	if !ValidDeployKeyName(d.DeployKeyEnvVar) {
		return DeployKey{}, nil
	}
	stored, err := k.File.Get("error-monitor", tenant)
	if err != nil {
		return DeployKey{}, err
	}
	if v := stored[d.DeployKeyEnvVar]; v.Key != "" {
		return v, nil
	}
	if tenant == vp.DefaultTenant && k.Getenv != nil && strings.HasPrefix(d.DeployKeyEnvVar, DeployKeyPrefix) {
		return DeployKey{Key: strings.TrimSpace(k.Getenv(d.DeployKeyEnvVar))}, nil
	}
	return DeployKey{}, nil
}

// HowToSet implements Keys.
func (k *FileKeys) HowToSet(tenant, name, url string) string {
	if url == "" {
		url = "<deployment URL>"
	}
	how := fmt.Sprintf("store it with `vantagepeers deploykey set --tenant %s --url %s %s` (the key on stdin)", tenant, url, name)
	if tenant == vp.DefaultTenant {
		how += " or, for a prod:/dev: key of that deployment, set the server's environment variable " + name
	}
	return how
}

// Set stores tenant's key name, bound to url's origin ("": to the one
// the key's own prefix names, if any).
func (k *FileKeys) Set(tenant, name, key, url string) error {
	const op = "deploykey.set"
	if !ValidDeployKeyName(name) {
		return vp.Errorf(op, vp.KindInvalid, "name", "%q %s", clipName(name), DeployKeyRule)
	}
	if !vp.ValidTenant(tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clipName(tenant))
	}
	if key == "" {
		return vp.E(op, vp.KindInvalid, "key", "is empty")
	}
	origin, err := bindURL(op, url)
	if err != nil {
		return err
	}
	return k.File.Change(op, func(all map[string]map[string]DeployKey) bool {
		m := maps.Clone(all[tenant])
		if m == nil {
			m = map[string]DeployKey{}
		}
		m[name] = DeployKey{Key: key, URL: origin}
		all[tenant] = m
		return true
	})
}

// Remove forgets tenant's key name; removed is false when there was none.
func (k *FileKeys) Remove(tenant, name string) (removed bool, err error) {
	const op = "deploykey.remove"
	if !vp.ValidTenant(tenant) {
		return false, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clipName(tenant))
	}
	err = k.File.Change(op, func(all map[string]map[string]DeployKey) bool {
		if _, ok := all[tenant][name]; !ok {
			return false
		}
		m := maps.Clone(all[tenant])
		delete(m, name)
		if len(m) == 0 {
			delete(all, tenant)
		} else {
			all[tenant] = m
		}
		removed = true
		return true
	})
	return removed, err
}

// Stored returns tenant's stored keys by name (the values are secrets:
// show their fingerprints only).
func (k *FileKeys) Stored(tenant string) (map[string]DeployKey, error) {
	m, err := k.File.Get("deploykey.show", tenant)
	return maps.Clone(m), err
}

func clipName(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// LogGroupPolicy says which CloudWatch Logs log groups each tenant may
// name: the operator's choice, never the tenant's. A pattern is a log
// group's name, or a prefix followed by '*'.
type LogGroupPolicy interface {
	// Allowed returns tenant's patterns (none: no log group).
	Allowed(ctx context.Context, tenant string) ([]string, error)
	// HowToAllow tells an operator how to allow a group for tenant.
	HowToAllow(tenant string) string
}

// ValidLogGroupPattern reports whether p is a log group name (1-512
// letters, digits and _/.#-) or such a name of up to 511 characters
// followed by '*' (a prefix). An empty prefix is not one: "*" alone
// would hand a tenant every log group the server may read.
func ValidLogGroupPattern(p string) bool {
	name := strings.TrimSuffix(p, "*")
	return validLogGroup(name) && (name == p || len(name) < maxLogGroupBytes)
}

const maxLogGroupBytes = 512

// validLogGroup reports whether g matches ^[A-Za-z0-9_/.#-]{1,512}$ (a
// loop: see ValidDeployKeyName).
func validLogGroup(g string) bool {
	if len(g) == 0 || len(g) > maxLogGroupBytes {
		return false
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_/.#-", c) >= 0) {
			return false
		}
	}
	return true
}

// LogGroupAllowed reports whether a pattern of patterns covers group.
func LogGroupAllowed(patterns []string, group string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			return prefix != "" && strings.HasPrefix(group, prefix)
		}
		return p == group
	})
}

// StaticLogGroups is a fixed policy: on AWS, the stack's tenantLogGroups
// context, which the functions' IAM policy is derived from too.
type StaticLogGroups struct {
	Tenants map[string][]string
	// How tells an operator how to allow a group.
	How string
}

// Allowed implements LogGroupPolicy.
func (s StaticLogGroups) Allowed(_ context.Context, tenant string) ([]string, error) {
	return s.Tenants[tenant], nil
}

// HowToAllow implements LogGroupPolicy.
func (s StaticLogGroups) HowToAllow(string) string { return s.How }

// FileLogGroups is the embedded binary's policy: each tenant's patterns
// in a file of the data dir (LogGroupsFile), which `vantagepeers
// loggroups` changes while the server runs.
type FileLogGroups struct {
	File *tenantfile.File[[]string]
}

// LogGroupsFile is FileLogGroups' file in the data dir.
const LogGroupsFile = "log-groups.json"

// Allowed implements LogGroupPolicy.
func (f *FileLogGroups) Allowed(_ context.Context, tenant string) ([]string, error) {
	return f.File.Get("error-monitor", tenant)
}

// HowToAllow implements LogGroupPolicy.
func (f *FileLogGroups) HowToAllow(tenant string) string {
	return fmt.Sprintf("the operator allows one with `vantagepeers loggroups allow --tenant %s NAME-or-PREFIX*`", tenant)
}

// Allow adds a pattern to tenant's; added is false when it was there.
func (f *FileLogGroups) Allow(tenant, pattern string) (added bool, err error) {
	const op = "loggroups.allow"
	if !vp.ValidTenant(tenant) {
		return false, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clipName(tenant))
	}
	if !ValidLogGroupPattern(pattern) {
		return false, vp.Errorf(op, vp.KindInvalid, "pattern", "%q is not a log group name or a prefix followed by '*' (1-512 letters, digits and _/.#-)", clipName(pattern))
	}
	err = f.File.Change(op, func(all map[string][]string) bool {
		if slices.Contains(all[tenant], pattern) {
			return false
		}
		all[tenant] = append(slices.Clone(all[tenant]), pattern)
		added = true
		return true
	})
	return added, err
}

// Remove takes a pattern from tenant's; removed is false when it was not there.
func (f *FileLogGroups) Remove(tenant, pattern string) (removed bool, err error) {
	const op = "loggroups.remove"
	if !vp.ValidTenant(tenant) {
		return false, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clipName(tenant))
	}
	err = f.File.Change(op, func(all map[string][]string) bool {
		i := slices.Index(all[tenant], pattern)
		if i < 0 {
			return false
		}
		rest := slices.Delete(slices.Clone(all[tenant]), i, i+1)
		if len(rest) == 0 {
			delete(all, tenant)
		} else {
			all[tenant] = rest
		}
		removed = true
		return true
	})
	return removed, err
}
