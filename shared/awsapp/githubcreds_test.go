package awsapp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ghCountingSecrets is StaticSecrets that counts its reads, can fail, and
// answers a missing secret as Secrets Manager does.
type ghCountingSecrets struct {
	mu    sync.Mutex
	m     awsapp.StaticSecrets
	reads int
	err   error
}

func (c *ghCountingSecrets) Secret(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.err != nil {
		return "", c.err
	}
	if _, ok := c.m[id]; !ok {
		return ghNotFoundSecrets{}.Secret(ctx, id)
	}
	return c.m.Secret(ctx, id)
}

func (c *ghCountingSecrets) set(id, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = v
}

func TestGitHubCredentialsFromSecretsManager(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	sec := &ghCountingSecrets{m: awsapp.StaticSecrets{
		"vp/github/acme": `{"webhookSecret":"hook-1","token":"tok-1"}`,
		"vp/github/bad":  `not json: tok-leak`,
	}}
	g := &awsapp.GitHubCredentials{Secrets: sec, Prefix: "vp/github/", Now: clock}

	got, err := g.Credentials(ctx, "acme")
	if err != nil || got != (github.Credentials{WebhookSecret: "hook-1", Token: "tok-1"}) {
		t.Fatalf("acme: %v, %v", got, err)
	}
	// A missing secret is no credentials, not an error.
	if got, err := g.Credentials(ctx, "beta"); err != nil || !got.IsZero() {
		t.Fatalf("beta: %v, %v; want zero credentials", got, err)
	}
	// Cached: no read within the TTL, even after a rotation.
	sec.set("vp/github/acme", `{"webhookSecret":"hook-2","token":"tok-2"}`)
	reads := sec.reads
	if got, _ := g.Credentials(ctx, "acme"); got.Token != "tok-1" || sec.reads != reads {
		t.Fatalf("within the TTL: %v after %d reads", got, sec.reads-reads)
	}
	// After the TTL the rotation is picked up.
	now = now.Add(awsapp.DefaultGitHubCredentialsTTL)
	if got, _ := g.Credentials(ctx, "acme"); got.Token != "tok-2" || got.WebhookSecret != "hook-2" {
		t.Fatalf("after the TTL: %v", got)
	}
	// Secrets Manager failing: the last value known is served...
	now = now.Add(awsapp.DefaultGitHubCredentialsTTL)
	sec.err = errors.New("throttled")
	if got, err := g.Credentials(ctx, "acme"); err != nil || got.Token != "tok-2" {
		t.Fatalf("failing with a cached value: %v, %v", got, err)
	}
	// ...and a tenant never read is unavailable (retried), not unknown.
	if _, err := g.Credentials(ctx, "gamma"); !vp.IsKind(err, vp.KindUnavailable) {
		t.Fatalf("failing without a cached value: %v", err)
	}
	sec.err = nil

	// A malformed secret names itself and does not quote its content.
	_, err = g.Credentials(ctx, "bad")
	if err == nil || strings.Contains(err.Error(), "tok-leak") || !strings.Contains(err.Error(), "vp/github/bad") {
		t.Fatalf("malformed secret: %v", err)
	}
	if _, err := g.Credentials(ctx, "Not A Tenant"); !vp.IsKind(err, vp.KindInvalid) {
		t.Fatalf("bad tenant: %v", err)
	}
}

// ghNotFoundSecrets answers as Secrets Manager does for a missing secret.
type ghNotFoundSecrets struct{}

func (ghNotFoundSecrets) Secret(context.Context, string) (string, error) {
	msg := "Secrets Manager can't find the specified secret."
	return "", &smtypes.ResourceNotFoundException{Message: &msg}
}

func TestGitHubCredentialsMissingSecret(t *testing.T) {
	for name, sec := range map[string]awsapp.Secrets{
		"Secrets Manager": ghNotFoundSecrets{},
		"StaticSecrets":   awsapp.StaticSecrets{"vp/github/other": `{"token":"x"}`},
	} {
		g := &awsapp.GitHubCredentials{Secrets: sec, Prefix: "vp/github/", TTL: time.Minute}
		if got, err := g.Credentials(context.Background(), "acme"); err != nil || !got.IsZero() {
			t.Errorf("%s: %v, %v; want zero credentials", name, got, err)
		}
	}
}
