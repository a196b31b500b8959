package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Credentials are a tenant's GitHub secrets: the webhook secret that signs
// GitHub's deliveries (a webhook carries no bearer token, so the secret is
// how a delivery proves its tenant) and the token the adapter writes with.
//
// Every way of printing them redacts: fmt (all verbs), slog, and text
// marshalling (so encoding/json too) show only whether each is set and its
// Fingerprint. Code that stores them uses the fields.
type Credentials struct {
	WebhookSecret string
	Token         string
	// Login is the account the token acts as, when GitHub does not say:
	// a GitHub App installation token's "<app-slug>[bot]". Not a secret.
	Login string
}

// Fingerprint identifies a secret for display without revealing it: the
// first 8 hex characters of its SHA-256 ("" for an empty secret). Eight
// characters tell two secrets apart at a glance and are far too few to
// help guess one.
func Fingerprint(secret string) string {
	if secret == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:4])
}

// Fingerprint returns the fingerprints of the webhook secret and of the
// token ("" for one that is not set).
func (c Credentials) Fingerprint() (webhookSecret, token string) {
	return Fingerprint(c.WebhookSecret), Fingerprint(c.Token)
}

// IsZero reports whether nothing is set.
func (c Credentials) IsZero() bool { return c.WebhookSecret == "" && c.Token == "" && c.Login == "" }

func shown(secret string) string {
	if secret == "" {
		return "unset"
	}
	return "set (" + Fingerprint(secret) + ")"
}

// String shows the credentials redacted.
func (c Credentials) String() string {
	login := ""
	if c.Login != "" {
		login = fmt.Sprintf(", login: %q", c.Login)
	}
	return fmt.Sprintf("github.Credentials{webhookSecret: %s, token: %s%s}", shown(c.WebhookSecret), shown(c.Token), login)
}

// GoString redacts %#v too.
func (c Credentials) GoString() string { return c.String() }

// Format redacts every fmt verb: without it %d or %x of the struct would
// print its fields.
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue redacts in slog.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("webhookSecret", shown(c.WebhookSecret)), slog.String("token", shown(c.Token)),
		slog.String("login", c.Login))
}

// MarshalText redacts in text and JSON encoders (a log line marshalled
// with encoding/json, say).
func (c Credentials) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// CredentialSource finds a tenant's credentials. An unknown tenant has zero
// Credentials and no error: the caller refuses what needs them.
type CredentialSource interface {
	Credentials(ctx context.Context, tenant string) (Credentials, error)
}

// CredentialsFile is the name of FileCredentials' file in the data dir.
const CredentialsFile = "github-credentials.json"

// Environment variables of the default tenant's credentials.
const (
	EnvWebhookSecret = "VP_GITHUB_WEBHOOK_SECRET"
	EnvToken         = "VP_GITHUB_TOKEN"
	// EnvLogin names the account the token acts as, for a GitHub App
	// installation token (GitHub refuses it GET /user): "<app-slug>[bot]".
	EnvLogin = "VP_GITHUB_LOGIN"
)

// DefaultTenant is the tenant FileCredentials.Defaults apply to.
const DefaultTenant = "default"

// CredentialsFromEnv reads the default tenant's credentials from
// VP_GITHUB_WEBHOOK_SECRET, VP_GITHUB_TOKEN and VP_GITHUB_LOGIN through
// getenv (os.Getenv).
func CredentialsFromEnv(getenv func(string) string) Credentials {
	return Credentials{WebhookSecret: getenv(EnvWebhookSecret), Token: getenv(EnvToken), Login: getenv(EnvLogin)}
}

// FileCredentials keeps the credentials of the embedded binary's tenants
// in one JSON file of the data dir (CredentialsFile), mode 0600. Each
// change rewrites it whole into a temporary file renamed over it, so a
// reader (the server, while `vantagepeers github set` rotates a secret)
// sees the old file or the new one, never half of one. Reads are cached
// and reloaded when the file changes. It is safe for concurrent use in a
// process; two processes changing it at the same moment may lose one of
// the changes (a person rotating a secret by hand does not race).
type FileCredentials struct {
	// Path is the file, usually filepath.Join(dataDir, CredentialsFile).
	Path string
	// Defaults fill what the file does not say for DefaultTenant (from
	// the environment: CredentialsFromEnv), field by field.
	Defaults Credentials

	mu     sync.Mutex
	cached map[string]fileEntry
	stamp  fileStamp
}

// fileEntry is a tenant's entry in the file.
type fileEntry struct {
	WebhookSecret string `json:"webhookSecret,omitempty"`
	Token         string `json:"token,omitempty"`
	Login         string `json:"login,omitempty"`
}

type fileDoc struct {
	Tenants map[string]fileEntry `json:"tenants"`
}

// fileStamp tells whether the file changed since it was read.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

var _ CredentialSource = (*FileCredentials)(nil)

// Credentials implements CredentialSource.
func (f *FileCredentials) Credentials(_ context.Context, tenant string) (Credentials, error) {
	c, err := f.Stored(tenant)
	if err != nil || tenant != DefaultTenant {
		return c, err
	}
	if c.WebhookSecret == "" {
		c.WebhookSecret = f.Defaults.WebhookSecret
	}
	if c.Token == "" {
		c.Token = f.Defaults.Token
	}
	if c.Login == "" {
		c.Login = f.Defaults.Login
	}
	return c, nil
}

// Stored returns what the file itself holds for tenant, without the
// defaults (the CLI shows both).
func (f *FileCredentials) Stored(tenant string) (Credentials, error) {
	const op = "github.credentials"
	if !vp.ValidTenant(tenant) {
		return Credentials{}, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.load(op)
	if err != nil {
		return Credentials{}, err
	}
	e := all[tenant]
	return Credentials(e), nil
}

// Tenants lists the tenants the file has an entry for, sorted.
func (f *FileCredentials) Tenants() ([]string, error) {
	const op = "github.credentials"
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.load(op)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(all)), nil
}

// Set rotates tenant's credentials: each non-empty field replaces the
// stored one, an empty field keeps it.
func (f *FileCredentials) Set(tenant string, c Credentials) error {
	const op = "github.credentials.set"
	if !vp.ValidTenant(tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	if c.IsZero() {
		return vp.E(op, vp.KindInvalid, "", "give a webhook secret, a token or a login to set")
	}
	return f.change(op, func(all map[string]fileEntry) bool {
		e := all[tenant]
		if c.WebhookSecret != "" {
			e.WebhookSecret = c.WebhookSecret
		}
		if c.Token != "" {
			e.Token = c.Token
		}
		if c.Login != "" {
			e.Login = c.Login
		}
		all[tenant] = e
		return true
	})
}

// Remove deletes tenant's entry (the defaults apply again to
// DefaultTenant). Removing an absent tenant does nothing.
func (f *FileCredentials) Remove(tenant string) error {
	const op = "github.credentials.remove"
	if !vp.ValidTenant(tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	return f.change(op, func(all map[string]fileEntry) bool {
		if _, ok := all[tenant]; !ok {
			return false
		}
		delete(all, tenant)
		return true
	})
}

// change rereads the file, applies edit to a copy and writes it back when
// edit says so.
func (f *FileCredentials) change(op string, edit func(map[string]fileEntry) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Reread whatever the cache says: another process may have changed
	// the file within the mtime's resolution.
	f.stamp = fileStamp{}
	cur, err := f.load(op)
	if err != nil {
		return err
	}
	all := make(map[string]fileEntry, len(cur)+1)
	for k, v := range cur {
		all[k] = v
	}
	if !edit(all) {
		return nil
	}
	if err := tenantfile.WriteAtomic(f.Path, fileDoc{Tenants: all}); err != nil {
		return vp.Wrap(op, vp.KindInternal, err)
	}
	f.cached, f.stamp = all, fileStamp{}
	return nil
}

// load returns the file's entries, from the cache while the file's size and
// modification time are unchanged. Callers hold f.mu.
func (f *FileCredentials) load(op string) (map[string]fileEntry, error) {
	if f.Path == "" {
		return nil, vp.E(op, vp.KindInternal, "", "FileCredentials has no Path")
	}
	fi, err := os.Stat(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		f.cached, f.stamp = nil, fileStamp{ok: true}
		return nil, nil
	}
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	st := fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
	if f.stamp == st {
		return f.cached, nil
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	var doc fileDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		// The error says where, never what: the file holds secrets.
		var se *json.SyntaxError
		where := ""
		if errors.As(err, &se) {
			where = fmt.Sprintf(" at byte %d", se.Offset)
		}
		return nil, vp.Errorf(op, vp.KindInternal, "", "%s is not a credentials file%s; fix or remove it", f.Path, where)
	}
	f.cached, f.stamp = doc.Tenants, st
	return f.cached, nil
}
