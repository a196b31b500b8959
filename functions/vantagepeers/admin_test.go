package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestAdminCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	runOK := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data-dir", dir), nil, &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	if out := runOK("admin", "seed-profiles"); !strings.Contains(out, "client-generic") {
		t.Fatalf("seed: %s", out)
	}
	if out := runOK("admin", "profile-set", "cedar-agent", "--from", "cedar", "--read", "project/cedar,global", "--write", "project/cedar"); !strings.Contains(out, `"project/cedar"`) {
		t.Fatalf("profile-set: %s", out)
	}
	if out := runOK("admin", "profiles"); !strings.Contains(out, "cedar-agent") || !strings.Contains(out, "public-readonly") {
		t.Fatalf("profiles: %s", out)
	}
	if out := runOK("admin", "clients"); !strings.Contains(out, "CLIENT_ID") {
		t.Fatalf("clients: %s", out)
	}
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"admin", "elevate", "vp_client_nope", "--profile", "cedar-agent", "--data-dir", dir}, nil, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown client") {
		t.Fatalf("elevate unknown: %v", err)
	}
	if err := run(ctx, []string{"admin", "profile-delete", "master", "--data-dir", dir}, nil, &out, &errb); err == nil {
		t.Fatal("deleted the master profile")
	}
	if out := runOK("admin", "clerk-map", "user_2abc", "team-x"); !strings.Contains(out, "team-x") {
		t.Fatalf("clerk-map: %s", out)
	}
	if out := runOK("admin", "audit"); !strings.Contains(out, "oauth.profile.put") || !strings.Contains(out, "clerk.map_user") {
		t.Fatalf("audit: %s", out)
	}
	if err := run(ctx, []string{"admin", "bogus", "--data-dir", dir}, nil, &out, &errb); err == nil {
		t.Fatal("unknown subcommand accepted")
	}
}
