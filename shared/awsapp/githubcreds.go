package awsapp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DefaultGitHubCredentialsTTL is how long GitHubCredentials keeps a
// tenant's secret: long enough that a burst of webhooks reads Secrets
// Manager once, short enough that a rotation is picked up within minutes.
const DefaultGitHubCredentialsTTL = 5 * time.Minute

// GitHubCredentials is the github.CredentialSource of the AWS deployment:
// each tenant's credentials are the Secrets Manager secret
// <Prefix><tenant>, whose SecretString is
// {"webhookSecret": "…", "token": "…"}. A tenant without a secret has zero
// Credentials. Use it by pointer; the zero value with Secrets set works.
type GitHubCredentials struct {
	Secrets Secrets
	Prefix  string
	// TTL is how long a read (a missing secret included) is reused
	// (default DefaultGitHubCredentialsTTL).
	TTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]cachedCreds
}

type cachedCreds struct {
	creds github.Credentials
	at    time.Time
}

// githubSecretJSON is the secret's SecretString.
type githubSecretJSON struct {
	WebhookSecret string `json:"webhookSecret"`
	Token         string `json:"token"`
	// Login is the bot's account when GitHub does not say (a GitHub
	// App's "<app-slug>[bot]").
	Login string `json:"login,omitempty"`
}

var _ github.CredentialSource = (*GitHubCredentials)(nil)

// Credentials implements github.CredentialSource.
func (g *GitHubCredentials) Credentials(ctx context.Context, tenant string) (github.Credentials, error) {
	const op = "awsapp.github_credentials"
	if !vp.ValidTenant(tenant) {
		return github.Credentials{}, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", tenant)
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	ttl := g.TTL
	if ttl <= 0 {
		ttl = DefaultGitHubCredentialsTTL
	}
	g.mu.Lock()
	c, hit := g.cache[tenant]
	g.mu.Unlock()
	if hit && now().Sub(c.at) < ttl {
		return c.creds, nil
	}
	id := g.Prefix + tenant
	creds, err := g.fetch(ctx, op, id)
	if err != nil {
		// Secrets Manager failing for a moment must not reject every
		// delivery of a tenant whose secret was known minutes ago.
		if hit {
			return c.creds, nil
		}
		return github.Credentials{}, err
	}
	g.mu.Lock()
	if g.cache == nil {
		g.cache = map[string]cachedCreds{}
	}
	g.cache[tenant] = cachedCreds{creds: creds, at: now()}
	g.mu.Unlock()
	return creds, nil
}

func (g *GitHubCredentials) fetch(ctx context.Context, op, id string) (github.Credentials, error) {
	if g.Secrets == nil {
		return github.Credentials{}, vp.E(op, vp.KindInternal, "", "GitHubCredentials has no Secrets")
	}
	s, err := g.Secrets.Secret(ctx, id)
	if secretMissing(g.Secrets, id, err) {
		return github.Credentials{}, nil
	}
	if err != nil {
		return github.Credentials{}, vp.Unavailable(op, err)
	}
	var j githubSecretJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		// Name the secret, never quote it.
		return github.Credentials{}, vp.Errorf(op, vp.KindInternal, "", "secret %s is not JSON {\"webhookSecret\": \"…\", \"token\": \"…\"}", id)
	}
	return github.Credentials{WebhookSecret: j.WebhookSecret, Token: j.Token, Login: j.Login}, nil
}

// secretMissing reports whether err says the secret does not exist (as
// opposed to Secrets Manager failing): Secrets Manager's
// ResourceNotFoundException, or ErrSecretNotFound (StaticSecrets).
func secretMissing(_ Secrets, _ string, err error) bool {
	var nf *smtypes.ResourceNotFoundException
	return errors.As(err, &nf) || errors.Is(err, ErrSecretNotFound)
}
