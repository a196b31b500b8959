package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const (
	hookSecret = "whsec-It's a Secret to Everybody"
	token      = "ghp_0123456789abcdefSECRET"
)

func TestCredentialsAreRedacted(t *testing.T) {
	c := github.Credentials{WebhookSecret: hookSecret, Token: token}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("creds", "c", c)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("creds", "c", c, "ptr", &c)
	j, _ := json.Marshal(map[string]any{"c": c})
	outputs := map[string]string{
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", c),
		"%s": fmt.Sprintf("%s", c), "%d": fmt.Sprintf("%d", c), "%x": fmt.Sprintf("%x", c),
		"%v of a pointer": fmt.Sprintf("%v", &c), "%v in a struct": fmt.Sprintf("%+v", struct{ C github.Credentials }{c}),
		"Sprint": fmt.Sprint(c), "slog": logged.String(), "json": string(j),
	}
	wantHook, wantTok := c.Fingerprint()
	if len(wantHook) != 8 || len(wantTok) != 8 || wantHook == wantTok {
		t.Fatalf("fingerprints %q %q: want 8 hex characters each", wantHook, wantTok)
	}
	for name, out := range outputs {
		for _, secret := range []string{hookSecret, token, "Everybody", "SECRET"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows a secret: %s", name, out)
			}
		}
		if !strings.Contains(out, wantTok) {
			t.Errorf("%s does not show the token's fingerprint: %s", name, out)
		}
	}
	if s := (github.Credentials{}).String(); !strings.Contains(s, "unset") {
		t.Errorf("zero credentials: %s", s)
	}
	if github.Fingerprint("") != "" {
		t.Error("an empty secret has a fingerprint")
	}
}

func TestFileCredentials(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, github.CredentialsFile)
	f := &github.FileCredentials{Path: path, Defaults: github.Credentials{WebhookSecret: "env-hook", Token: "env-token"}}

	steps := []struct {
		name   string
		do     func() error
		tenant string
		want   github.Credentials
	}{
		{"no file: the default tenant has the defaults", nil, "default", github.Credentials{WebhookSecret: "env-hook", Token: "env-token"}},
		{"no file: another tenant has nothing", nil, "acme", github.Credentials{}},
		{"set both", func() error { return f.Set("acme", github.Credentials{WebhookSecret: "h1", Token: "t1"}) }, "acme", github.Credentials{WebhookSecret: "h1", Token: "t1"}},
		{"rotate the token, keep the secret", func() error { return f.Set("acme", github.Credentials{Token: "t2"}) }, "acme", github.Credentials{WebhookSecret: "h1", Token: "t2"}},
		{"rotate the secret, keep the token", func() error { return f.Set("acme", github.Credentials{WebhookSecret: "h2"}) }, "acme", github.Credentials{WebhookSecret: "h2", Token: "t2"}},
		{"the file's field wins over a default, the other default stays", func() error { return f.Set("default", github.Credentials{Token: "file-token"}) }, "default", github.Credentials{WebhookSecret: "env-hook", Token: "file-token"}},
		{"remove: the defaults apply again", func() error { return f.Remove("default") }, "default", github.Credentials{WebhookSecret: "env-hook", Token: "env-token"}},
		{"remove an absent tenant", func() error { return f.Remove("nobody") }, "acme", github.Credentials{WebhookSecret: "h2", Token: "t2"}},
	}
	for _, s := range steps {
		if s.do != nil {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		got, err := f.Credentials(ctx, s.tenant)
		if err != nil || got != s.want {
			t.Fatalf("%s: %s = %q/%q, %v; want %q/%q", s.name, s.tenant, got.WebhookSecret, got.Token, err, s.want.WebhookSecret, s.want.Token)
		}
	}

	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v; want 0600", fi.Mode(), err)
	}
	// Nothing but the file is left in the folder: the temporary files
	// were renamed.
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("data dir holds %d entries, want only %s", len(entries), github.CredentialsFile)
	}
	// Another process (a second FileCredentials) sees the rotations.
	other := &github.FileCredentials{Path: path}
	if got, _ := other.Credentials(ctx, "acme"); got.Token != "t2" {
		t.Fatalf("a second reader sees %v", got)
	}
	if err := other.Set("acme", github.Credentials{Token: "t3"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Credentials(ctx, "acme"); got.Token != "t3" || got.WebhookSecret != "h2" {
		t.Fatalf("the first reader after another's rotation: %v", got)
	}

	for name, err := range map[string]error{
		"set nothing":       f.Set("acme", github.Credentials{}),
		"set a bad tenant":  f.Set("Not/A/Tenant", github.Credentials{Token: "x"}),
		"remove bad tenant": f.Remove(""),
	} {
		if !vp.IsKind(err, vp.KindInvalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if _, err := f.Credentials(ctx, "Bad Tenant"); !vp.IsKind(err, vp.KindInvalid) {
		t.Errorf("lookup of a bad tenant: %v", err)
	}

	// A damaged file is an error that names the file, not its content.
	if err := os.WriteFile(path, []byte(`{"tenants": {"acme": {"token": "t-leak"`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = (&github.FileCredentials{Path: path}).Credentials(ctx, "acme")
	if err == nil || strings.Contains(err.Error(), "t-leak") || !strings.Contains(err.Error(), path) {
		t.Fatalf("damaged file: %v", err)
	}
}

func TestFileCredentialsConcurrentRotation(t *testing.T) {
	ctx := context.Background()
	f := &github.FileCredentials{Path: filepath.Join(t.TempDir(), github.CredentialsFile)}
	if err := f.Set("acme", github.Credentials{WebhookSecret: "h", Token: "t0"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := f.Set(fmt.Sprintf("t%d", i), github.Credentials{Token: fmt.Sprint(i)}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			// Readers never see a half-written file nor lose acme.
			if c, err := f.Credentials(ctx, "acme"); err != nil || c.WebhookSecret != "h" {
				t.Errorf("reader: %v, %v", c, err)
			}
		})
	}
	wg.Wait()
	for i := range 8 {
		if c, _ := f.Credentials(ctx, fmt.Sprintf("t%d", i)); c.Token != fmt.Sprint(i) {
			t.Errorf("tenant t%d lost its token", i)
		}
	}
}
