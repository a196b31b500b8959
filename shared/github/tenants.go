package github

import (
	"context"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ForTenants is GitHub for the issues capability (issue.GitHub): each
// tenant acts with its own token, read from Credentials on every call so
// that a rotation needs no restart.
type ForTenants struct {
	Client      *Client
	Credentials CredentialSource
}

var (
	_ issue.GitHub    = ForTenants{}
	_ issue.BotLogins = ForTenants{}
)

// BotLogin is the login tenant's bot posts as (issue.BotLogins): the one
// its credentials configure, else what GitHub says of its token, cached.
func (t ForTenants) BotLogin(ctx context.Context, tenant string) (string, error) {
	const op = "github.bot_login"
	a, err := t.account(ctx, op, tenant)
	if err != nil {
		return "", err
	}
	return t.Client.botLogin(ctx, op, a)
}

func (t ForTenants) account(ctx context.Context, op, tenant string) (Account, error) {
	c, err := t.Credentials.Credentials(ctx, tenant)
	if err != nil {
		return Account{}, err
	}
	if c.Token == "" {
		return Account{}, vp.Errorf(op, vp.KindUnauthorized, "token",
			"tenant %s has no GitHub token: set %s (tenant default) or run `vantagepeers github set --tenant %s --token-stdin`, then retry the dead letters (`vantagepeers outbox retry`)",
			tenant, EnvToken, tenant)
	}
	return Account{Tenant: tenant, Token: c.Token, Login: c.Login}, nil
}

// CommentOnce implements issue.GitHub.
func (t ForTenants) CommentOnce(ctx context.Context, tenant, repo string, number int, marker, body string, since time.Time) error {
	a, err := t.account(ctx, "github.comment", tenant)
	if err != nil {
		return err
	}
	_, err = t.Client.CommentOnce(ctx, a, repo, number, marker, body, since)
	return err
}

// SetComment writes the tenant's one comment of marker, editing it in
// place (errormon.GitHub); it returns the comment's id.
func (t ForTenants) SetComment(ctx context.Context, tenant, repo string, number int, id int64, marker, body string, since time.Time) (int64, error) {
	a, err := t.account(ctx, "github.set_comment", tenant)
	if err != nil {
		return 0, err
	}
	c, err := t.Client.SetComment(ctx, a, repo, number, id, marker, body, since)
	return c.ID, err
}

// PullRequest implements issue.GitHub.
func (t ForTenants) PullRequest(ctx context.Context, tenant, repo string, number int, etag string) (issue.PullRequest, bool, error) {
	a, err := t.account(ctx, "github.pull_request", tenant)
	if err != nil {
		return issue.PullRequest{}, false, err
	}
	pr, notModified, err := t.Client.PullRequest(ctx, a, repo, number, etag)
	return issue.PullRequest{State: pr.State, Draft: pr.Draft, Merged: pr.Merged, ETag: pr.ETag}, notModified, err
}

// WebhookSecrets gives each tenant's webhook secret from Credentials
// (webhooks.Secrets).
type WebhookSecrets struct{ Credentials CredentialSource }

// WebhookSecret implements webhooks.Secrets.
func (w WebhookSecrets) WebhookSecret(ctx context.Context, tenant string) (string, error) {
	c, err := w.Credentials.Credentials(ctx, tenant)
	return c.WebhookSecret, err
}

// CreateIssueOnce files an issue as the tenant (errormon.GitHub); author
// is the login that opened it, the bot's.
func (t ForTenants) CreateIssueOnce(ctx context.Context, tenant, repo, title, body, marker string, labels []string, since time.Time) (number int, url, author string, err error) {
	a, err := t.account(ctx, "github.create_issue", tenant)
	if err != nil {
		return 0, "", "", err
	}
	is, err := t.Client.CreateIssueOnce(ctx, a, repo, title, body, marker, labels, since)
	return is.Number, is.URL, is.Author, err
}

// Reopen reopens an issue as the tenant (errormon.GitHub).
func (t ForTenants) Reopen(ctx context.Context, tenant, repo string, number int) error {
	a, err := t.account(ctx, "github.reopen", tenant)
	if err != nil {
		return err
	}
	return t.Client.Reopen(ctx, a, repo, number)
}
