package awsapp

import (
	"context"
	"fmt"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch"
)

// ports are this function's ports of the composition root: the table, the
// index and the queue, the clients and secrets of the groups it needs.
func (a *App) ports(ctx context.Context, nd needs, o Options, idx *opensearch.Index, signer *listing.Signer, master *[32]byte) (vpapp.Ports, error) {
	c := a.Config
	p := vpapp.Ports{Store: a.Store, Cursors: signer, MasterHash: master, Limiter: a.limiter(), Egress: a.Egress(),
		FlushStarts: true, Version: o.Version, Logger: a.Log, Now: o.Now,
		// A frozen container writes them at its next invocation; one that
		// dies leaves jobs that run again after their lease.
		OutboxRemovalBatch: 20 * time.Millisecond,
		// No change counter across Lambdas: a waiter polls the table with
		// backoff, for at most the configured wait (it is billed).
		Activity: activity.Options{MaxWait: c.WaitMax}}
	if idx != nil { // a nil *opensearch.Index in the interface would not read as "no index"
		p.Index = idx
	}
	if nd.coord {
		p.Groups |= vpapp.Coordination
		gh, err := a.gitHub(o.Secrets, o.Now)
		if err != nil {
			return p, err
		}
		p.GitHub, p.GitHubTrusted = gh, c.GitHubTrusted
		if err := a.errorMonitorPorts(o, &p); err != nil {
			return p, err
		}
	}
	if nd.memory {
		p.Groups |= vpapp.Memory
		if err := a.memoryPorts(ctx, o.Secrets, idx, &p); err != nil {
			return p, err
		}
	}
	if nd.relay {
		p.Groups |= vpapp.Relay
		if c.PacerelleConnections != "" && nd.coord {
			p.RelayPusher = &Connections{Endpoint: c.PacerelleConnections, Region: c.Region, Credentials: a.AWS.Credentials}
		}
	}
	if a.Function == FuncOAuth {
		p.OAuth = &oauth.Options{BaseURL: c.PublicBaseURL, MaxPendingClients: c.MaxPendingClients,
			Clerk: oauth.ClerkOptions{Issuer: c.ClerkIssuer, Audience: c.ClerkAudience, AllowedExtIDs: c.AllowedExtIDs}}
	}
	return p, nil
}

// gitHub is the GitHub client with each tenant's credentials from its
// Secrets Manager secret (none without a prefix: every delivery is then
// refused), paced by the store-backed limiter.
func (a *App) gitHub(secrets Secrets, now func() time.Time) (github.ForTenants, error) {
	var creds github.CredentialSource = noCredentials{}
	if a.Config.GitHubSecretPrefix != "" {
		creds = &GitHubCredentials{Secrets: secrets, Prefix: a.Config.GitHubSecretPrefix, Now: now}
	}
	client, err := github.New(github.Options{BaseURL: a.Config.GitHubAPIURL, Now: now,
		Limiter: github.NewLimiter(github.LimiterOptions{Store: a.Store, Now: now})})
	if err != nil {
		return github.ForTenants{}, fmt.Errorf("awsapp: %s: %w", awsenv.EnvGitHubAPIURL, err)
	}
	return github.ForTenants{Client: client, Credentials: creds}, nil
}
