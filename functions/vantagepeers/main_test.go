package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestFirstStartCreatesPrivateDataDirAndMasterOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("VP_MASTER_TOKEN", "")
	ctx := context.Background()
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a.newMaster) {
		t.Fatalf("first start master %q", a.newMaster)
	}
	master := a.newMaster
	if p, err := a.Tokens.Resolve(ctx, master); err != nil || !p.Admin {
		t.Fatalf("master does not resolve: %v", err)
	}
	_ = a.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "vantagepeers.db"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "vantagepeers.db"))
	if bytes.Contains(raw, []byte(master)) {
		t.Fatal("the master secret is stored in clear")
	}
	a, err = openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.newMaster != "" {
		t.Fatal("second start created another master token")
	}
}

func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"token", "create", "--data-dir", dir, "--tenant", "acme", "--as", "alice,bob", "--read", "global,project/x", "--write", "project/x"}, nil, &out, &errb)
	if err != nil {
		t.Fatalf("create: %v %s", err, errb.String())
	}
	secret := strings.TrimSpace(out.String())
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(secret) {
		t.Fatalf("create printed %q, want the 64-hex token alone on stdout", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"token", "list", "--data-dir", dir}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`tok_[0-9a-z]{26}`).FindString(out.String())
	if id == "" || !strings.Contains(out.String(), "alice,bob") || !strings.Contains(out.String(), "active") {
		t.Fatalf("list: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"token", "revoke", "--data-dir", dir, id}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	_ = run(ctx, []string{"token", "list", "--data-dir", dir}, nil, &out, &errb)
	if !strings.Contains(out.String(), "revoked") {
		t.Fatalf("after revoke: %s", out.String())
	}
	if err := run(ctx, []string{"token", "create", "--data-dir", dir, "--tenant", "acme"}, nil, &out, &errb); err == nil {
		t.Fatal("create without --as accepted")
	}
	if err := run(ctx, []string{"frobnicate"}, nil, &out, &errb); err == nil {
		t.Fatal("unknown command accepted")
	}
}
