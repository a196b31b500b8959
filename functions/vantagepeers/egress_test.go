package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The binary's wiring of the egress policy: VP_EGRESS_ALLOW_HOSTS decides
// what add_deployment accepts and what the Convex source dials; a bad
// entry stops the start, naming the variable.
func TestEgressPolicyFromTheEnvironmentAgainstFakeConvex(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("VP_MASTER_TOKEN", "")
	const canary = "CANARY-from-the-remote-41c7"
	cx := convexfake.New(t, convexfake.Options{Key: errCrashKey})
	if err := deployKeys(dir).Set(crashAdmin.Tenant, errCrashKeyEnv, errCrashKey, cx.URL()); err != nil {
		t.Fatal(err)
	}
	add := func(a *app, url string) error {
		_, err := a.Errors.AddDeployment(ctx, crashAdmin, errormon.DeploymentInput{Name: errCrashDep, DeploymentURL: url,
			DeployKeyEnvVar: errCrashKeyEnv, GitHubRepo: ghCrashRepo, Orchestrator: "sigma"})
		return err
	}

	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1,exa mple.com")
	if _, err := openApp(ctx, dir, nil); err == nil || !strings.Contains(err.Error(), `VP_EGRESS_ALLOW_HOSTS: entry 2 "exa mple.com"`) {
		t.Fatalf("a bad allow-list: %v", err)
	}

	// Allowed: the local deployment is added over http and scanned; its
	// refusal shows the status, not the body.
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1")
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := add(a, cx.URL()); err != nil {
		t.Fatal(err)
	}
	cx.Script(convexfake.Answer{Status: 401, Body: canary})
	if _, err := a.Errors.Scan(ctx, crashAdmin.Tenant, errCrashDep); !vp.IsKind(err, vp.KindUnauthorized) {
		t.Fatalf("scan through a 401: %v", err)
	}
	list, err := a.Errors.ListErrors(ctx, crashAdmin, errormon.ListInput{})
	b, _ := json.Marshal(list)
	if err != nil || !strings.Contains(string(b), "HTTP 401") || strings.Contains(string(b), "CANARY") {
		t.Fatalf("list_errors: %s, %v", b, err)
	}
	_ = a.Close()
	seen := len(cx.Requests())

	// Not allowed: the same URL is refused at add_deployment, and the one
	// stored earlier is not dialed by the scan.
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "")
	if a, err = openApp(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var ve *vp.Error
	if err := add(a, "https://127.0.0.1:3210"); !vp.IsKind(err, vp.KindInvalid) || !asVPError(err, &ve) || ve.Field != "deploymentUrl" {
		t.Fatalf("add_deployment of loopback: %v", err)
	}
	if _, err := a.Errors.Scan(ctx, crashAdmin.Tenant, errCrashDep); err == nil || !strings.Contains(err.Error(), "VP_EGRESS_ALLOW_HOSTS") {
		t.Fatalf("scan of a stored loopback URL: %v", err)
	}
	if n := len(cx.Requests()); n != seen {
		t.Fatalf("the scan reached the loopback listener (%d requests, %d before)", n, seen)
	}
}

func asVPError(err error, e **vp.Error) bool {
	for err != nil {
		if v, ok := err.(*vp.Error); ok {
			*e = v
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
