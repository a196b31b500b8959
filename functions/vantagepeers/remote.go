package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
)

// tokenStore is what connect and token do with tokens: on the local data
// dir (*auth.Tokens) or through a deployment's admin API (remoteTokens),
// so that both print exactly the same.
type tokenStore interface {
	Create(ctx context.Context, s auth.Spec) (string, auth.Token, error)
	List(ctx context.Context, tenant string) ([]auth.Token, error)
	Revoke(ctx context.Context, id string) (auth.Token, error)
}

// tokensFor is the token store of a command: the admin API of the
// deployment serving mcpURL when it is set (the master token read from
// stdin), else the data dir's, whose first-start master is shown when
// announce is set.
func tokensFor(ctx context.Context, e *env, mcpURL string, announce bool) (tokenStore, error) {
	if mcpURL != "" {
		return newRemoteTokens(e.cmd, mcpURL, e.stdin)
	}
	a, err := e.app(ctx)
	if err != nil {
		return nil, err
	}
	if announce {
		announceMaster(e.stderr, a, e.dataDir)
	}
	return a.Tokens, nil
}

// remoteTimeout bounds one admin call: a Lambda's cold start included.
const remoteTimeout = 30 * time.Second

// maxAdminAnswerBytes bounds what an admin answer may take in memory: a
// token list of a few thousand tokens.
const maxAdminAnswerBytes = 8 << 20

// remoteTokens calls POST/GET/DELETE /admin/tokens of a deployment with
// the master token.
type remoteTokens struct {
	base, master string
	hc           *http.Client
}

// newRemoteTokens checks the URL and reads the master token from stdin,
// never from a flag (ps and the shell's history would show it).
func newRemoteTokens(cmd, mcpURL string, stdin io.Reader) (*remoteTokens, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s: --url %q: want the deployment's MCP URL, https://HOST/mcp", cmd, mcpURL)
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, fmt.Errorf("%s --url: the admin (master) token is read from stdin, and stdin is a terminal: pipe it in, "+
				"e.g. aws secretsmanager get-secret-value --secret-id ID --query SecretString --output text | vantagepeers %s …", cmd, cmd)
		}
	}
	master, err := readSecret(stdin)
	if err != nil {
		return nil, fmt.Errorf("%s --url: the admin (master) token on stdin: %w", cmd, err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"), "/mcp")
	return &remoteTokens{base: base, master: master, hc: &http.Client{Timeout: remoteTimeout}}, nil
}

func (r *remoteTokens) Create(ctx context.Context, s auth.Spec) (string, auth.Token, error) {
	in := oauth.TokenRequest{Tenant: s.Tenant, ActsAs: s.ActsAs, Read: s.ReadPrefixes, Write: s.WritePrefixes, Label: s.Label,
		ToolProfile: s.ToolProfile, TTLSeconds: int64(s.TTL / time.Second)}
	var out oauth.TokenCreated
	if err := r.call(ctx, http.MethodPost, "/admin/tokens", in, &out); err != nil {
		return "", auth.Token{}, err
	}
	return out.Token, out.Record, nil
}

func (r *remoteTokens) List(ctx context.Context, tenant string) ([]auth.Token, error) {
	var out struct {
		Tokens []auth.Token `json:"tokens"`
	}
	err := r.call(ctx, http.MethodGet, "/admin/tokens?tenant="+url.QueryEscape(tenant), nil, &out)
	return out.Tokens, err
}

func (r *remoteTokens) Revoke(ctx context.Context, id string) (auth.Token, error) {
	var out auth.Token
	err := r.call(ctx, http.MethodDelete, "/admin/tokens/"+url.PathEscape(id), nil, &out)
	return out, err
}

// call sends one admin request; a refusal is the server's own reason.
func (r *remoteTokens) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.master)
	req.Header.Set("User-Agent", "vantagepeers-cli")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := r.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, r.base+path, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAdminAnswerBytes))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, r.base+path, err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(b, &e) != nil || e.Description == "" {
			return fmt.Errorf("%s %s: %s (not the admin API of a vantagepeers deployment?)", method, r.base+path, res.Status)
		}
		return fmt.Errorf("the server refused (%s): %s", res.Status, e.Description)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return errors.New(method + " " + r.base + path + ": the answer is not what the admin API returns: " + err.Error())
	}
	return nil
}
