package errormon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
)

// TestFileKeysAreTheTenants: a key of tenant acme is acme's stored key,
// never another tenant's, never the environment; the default tenant's is
// its stored key, else the environment variable of a deploy key's name
// (and of no other name, whatever the caller asks).
func TestFileKeysAreTheTenants(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", errormon.DeployKeysFile)
	env := map[string]string{"VP_DEPLOY_KEY_X": "from-env", "VP_MASTER_TOKEN": "master", "DEPLOY_KEY_X": "old-env"}
	k := &errormon.FileKeys{File: &tenantfile.File[map[string]errormon.DeployKey]{Path: path}, Getenv: func(n string) string { return env[n] }}
	key := func(tenant, name string) string {
		t.Helper()
		v, err := k.Key(ctx, tenant, errormon.Deployment{Name: "app", DeployKeyEnvVar: name})
		if err != nil {
			t.Fatal(err)
		}
		return v.Key
	}
	check := func(when string, want map[[2]string]string) {
		t.Helper()
		for tn, w := range want {
			if got := key(tn[0], tn[1]); got != w {
				t.Errorf("%s: tenant %s, key %s = %q, want %q", when, tn[0], tn[1], got, w)
			}
		}
	}
	check("nothing stored", map[[2]string]string{
		{"acme", "VP_DEPLOY_KEY_X"}: "", {"default", "VP_DEPLOY_KEY_X"}: "from-env",
		{"default", "VP_MASTER_TOKEN"}: "", {"default", "DEPLOY_KEY_X"}: "", {"acme", "VP_MASTER_TOKEN"}: "",
	})
	if err := k.Set("default", "VP_DEPLOY_KEY_X", "of-default", ""); err != nil {
		t.Fatal(err)
	}
	check("default's stored", map[[2]string]string{{"acme", "VP_DEPLOY_KEY_X"}: "", {"default", "VP_DEPLOY_KEY_X"}: "of-default"})
	if err := k.Set("acme", "VP_DEPLOY_KEY_X", "of-acme", ""); err != nil {
		t.Fatal(err)
	}
	check("both stored", map[[2]string]string{{"acme", "VP_DEPLOY_KEY_X"}: "of-acme", {"default", "VP_DEPLOY_KEY_X"}: "of-default",
		{"beta", "VP_DEPLOY_KEY_X"}: ""})
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the keys file: %v, %v; want mode 0600", fi, err)
	}
	for _, bad := range [][2]string{{"acme", "VP_MASTER_TOKEN"}, {"acme", "DEPLOY_KEY_X"}, {"Not A Tenant", "VP_DEPLOY_KEY_X"}} {
		if err := k.Set(bad[0], bad[1], "v", ""); err == nil {
			t.Errorf("Set(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if removed, err := k.Remove("acme", "VP_DEPLOY_KEY_X"); err != nil || !removed {
		t.Fatalf("remove: %v, %v", removed, err)
	}
	if removed, err := k.Remove("acme", "VP_DEPLOY_KEY_X"); err != nil || removed {
		t.Fatalf("remove again: %v, %v", removed, err)
	}
	if _, err := k.Remove("default", "VP_DEPLOY_KEY_X"); err != nil {
		t.Fatal(err)
	}
	check("removed", map[[2]string]string{{"acme", "VP_DEPLOY_KEY_X"}: "", {"default", "VP_DEPLOY_KEY_X"}: "from-env"})
}

// TestFileKeysKeepTheirBinding: Set stores the origin of the URL a key is
// bound to (or refuses a URL that has none), Key gives it back with the
// key, and a file written before bindings existed (a bare key per name)
// is still read, its keys bound to nothing.
func TestFileKeysKeepTheirBinding(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, errormon.DeployKeysFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	legacy := `{"tenants":{"acme":{"VP_DEPLOY_KEY_OLD":"prod:happy-otter-123|old"}}}`
	if err := os.WriteFile(path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	k := &errormon.FileKeys{File: &tenantfile.File[map[string]errormon.DeployKey]{Path: path}}
	get := func(name string) errormon.DeployKey {
		t.Helper()
		v, err := k.Key(ctx, "acme", errormon.Deployment{Name: "app", DeployKeyEnvVar: name})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := get("VP_DEPLOY_KEY_OLD"); got.Key != "prod:happy-otter-123|old" || got.URL != "" {
		t.Fatalf("a key of the old file: %+v", got)
	}
	if err := k.Set("acme", "VP_DEPLOY_KEY_NEW", "opaque-key", "HTTPS://App.Example.com:443/api/x?y=1"); err != nil {
		t.Fatal(err)
	}
	if got := get("VP_DEPLOY_KEY_NEW"); got.Key != "opaque-key" || got.URL != "https://app.example.com" {
		t.Fatalf("a bound key: %+v, want bound to https://app.example.com", got)
	}
	if got := get("VP_DEPLOY_KEY_OLD"); got.Key != "prod:happy-otter-123|old" {
		t.Fatalf("the old key after a change of the file: %+v", got)
	}
	for _, bad := range []string{"app.example.com", "ftp://app.example.com", "https://u:p@app.example.com"} {
		err := k.Set("acme", "VP_DEPLOY_KEY_BAD", "k", bad)
		if err == nil || !strings.Contains(err.Error(), "url") {
			t.Errorf("Set with url %q: %v, want an error naming url", bad, err)
		}
	}
}
