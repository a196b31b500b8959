// Package admintokens is the contract of a deployment's /admin/tokens
// endpoints, declared once for the server (shared/oauth) and the CLI
// (vantagepeers connect --remote, token --url): the request, the answer,
// the limits, and a client that calls them with the master token.
package admintokens

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The limits of POST /admin/tokens: what the CLI's local commands accept,
// no more.
const (
	MaxEntries    = 50                     // in actsAs, read, write
	MaxLabelBytes = 200                    // a note, not a document
	MaxTTL        = 36500 * 24 * time.Hour // the CLI's 36500d
)

// Request is the body of POST /admin/tokens: an agent token as `token
// create` and `connect` mint it on a local data dir.
type Request struct {
	Tenant      string   `json:"tenant"`
	ActsAs      []string `json:"actsAs"`
	Read        []string `json:"read"`
	Write       []string `json:"write"`
	Label       string   `json:"label,omitempty"`
	ToolProfile string   `json:"toolProfile,omitempty"`
	TTLSeconds  int64    `json:"ttlSeconds,omitempty"` // 0: no expiry
}

// Created is the answer of POST /admin/tokens: the secret, shown once.
type Created struct {
	Token  string     `json:"token"`
	Record auth.Token `json:"record"`
}

// Spec checks the limits and returns the token to create; auth checks the
// tenant and the names.
func (in Request) Spec() (auth.Spec, error) {
	const op = "admin.token.create"
	for _, f := range []struct {
		name string
		list []string
	}{{"actsAs", in.ActsAs}, {"read", in.Read}, {"write", in.Write}} {
		if len(f.list) > MaxEntries {
			return auth.Spec{}, vp.Errorf(op, vp.KindInvalid, f.name, "%d entries: at most %d", len(f.list), MaxEntries)
		}
	}
	switch {
	case len(in.ActsAs) == 0:
		return auth.Spec{}, vp.E(op, vp.KindInvalid, "actsAs", "required: the orchestrators the token may act as, or \"*\"")
	case len(in.Label) > MaxLabelBytes:
		return auth.Spec{}, vp.Errorf(op, vp.KindInvalid, "label", "%d bytes: at most %d", len(in.Label), MaxLabelBytes)
	case in.TTLSeconds < 0 || in.TTLSeconds > int64(MaxTTL/time.Second):
		return auth.Spec{}, vp.Errorf(op, vp.KindInvalid, "ttlSeconds", "%d: want 0 (no expiry) up to %d", in.TTLSeconds, int64(MaxTTL/time.Second))
	}
	return auth.Spec{Tenant: in.Tenant, ActsAs: in.ActsAs, ReadPrefixes: in.Read, WritePrefixes: in.Write, Label: in.Label,
		ToolProfile: in.ToolProfile, TTL: time.Duration(in.TTLSeconds) * time.Second}, nil
}

// Store is *auth.Tokens on a data dir, or a Client of a deployment: the
// CLI's connect and token print the same for both.
type Store interface {
	Create(ctx context.Context, s auth.Spec) (string, auth.Token, error)
	List(ctx context.Context, tenant string) ([]auth.Token, error)
	Revoke(ctx context.Context, id string) (auth.Token, error)
}

var (
	_ Store = (*auth.Tokens)(nil)
	_ Store = (*Client)(nil)
)

// Timeout bounds one call: a Lambda's cold start included.
const Timeout = 30 * time.Second

// maxAnswerBytes bounds an answer in memory: a list of thousands of tokens.
const maxAnswerBytes = 8 << 20

// Client calls a deployment's /admin/tokens with the master token. Its
// methods are those of *auth.Tokens that the CLI uses.
type Client struct {
	base, master string
	hc           *http.Client
}

// NewClient returns a client of the deployment whose MCP endpoint is
// mcpURL (https://HOST/mcp).
func NewClient(mcpURL, master string) (*Client, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, vp.Errorf("admin.tokens", vp.KindInvalid, "url", "%q: want the deployment's MCP URL, https://HOST/mcp", mcpURL)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"), "/mcp")
	return &Client{base: base, master: master, hc: &http.Client{Timeout: Timeout}}, nil
}

// Create mints a token.
func (c *Client) Create(ctx context.Context, s auth.Spec) (string, auth.Token, error) {
	in := Request{Tenant: s.Tenant, ActsAs: s.ActsAs, Read: s.ReadPrefixes, Write: s.WritePrefixes, Label: s.Label,
		ToolProfile: s.ToolProfile, TTLSeconds: int64(s.TTL / time.Second)}
	var out Created
	if err := c.call(ctx, http.MethodPost, "/admin/tokens", in, &out); err != nil {
		return "", auth.Token{}, err
	}
	return out.Token, out.Record, nil
}

// List lists the tokens of tenant, or of every tenant for "".
func (c *Client) List(ctx context.Context, tenant string) ([]auth.Token, error) {
	var out struct {
		Tokens []auth.Token `json:"tokens"`
	}
	err := c.call(ctx, http.MethodGet, "/admin/tokens?tenant="+url.QueryEscape(tenant), nil, &out)
	return out.Tokens, err
}

// Revoke revokes a token by id.
func (c *Client) Revoke(ctx context.Context, id string) (auth.Token, error) {
	var out auth.Token
	err := c.call(ctx, http.MethodDelete, "/admin/tokens/"+url.PathEscape(id), nil, &out)
	return out, err
}

// call sends one request; a refusal is the server's own reason.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.master)
	req.Header.Set("User-Agent", "vantagepeers-cli")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.base+path, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, c.base+path, err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Description string `json:"error_description"`
		}
		if json.Unmarshal(b, &e) != nil || e.Description == "" {
			return fmt.Errorf("%s %s: %s (not the admin API of a vantagepeers deployment?)", method, c.base+path, res.Status)
		}
		return fmt.Errorf("the server refused (%s): %s", res.Status, e.Description)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the admin API's: %w", method, c.base+path, err)
	}
	return nil
}
