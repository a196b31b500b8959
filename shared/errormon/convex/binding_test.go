package convex_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeyGoesOnlyToItsOriginAgainstFakeConvex: the source sends a key to
// the origin it is bound to and to no other (another port of the same
// host, or no binding at all): those reads send nothing and are refused
// on deployKeyEnvVar, without the key.
func TestKeyGoesOnlyToItsOriginAgainstFakeConvex(t *testing.T) {
	f := convexfake.New(t, convexfake.Options{Key: key, Hold: 200 * time.Millisecond})
	s := newSource(convex.Options{})
	own, err := egress.Origin(f.URL())
	if err != nil {
		t.Fatal(err)
	}
	other := convexfake.New(t, convexfake.Options{Key: key})
	elsewhere, _ := egress.Origin(other.URL())
	for _, bound := range []string{"", elsewhere, "https://happy-otter-123.convex.cloud"} {
		_, err := s.Read(context.Background(), source.Target{Name: "prod", DeploymentURL: f.URL(), Key: key, KeyOrigin: bound}, "", time.Now(), 10)
		var e *vp.Error
		if vp.KindOf(err) != vp.KindForbidden || !asErr(err, &e) || e.Field != "deployKeyEnvVar" || strings.Contains(err.Error(), key) {
			t.Errorf("key bound to %q read at %s: %v, want forbidden on deployKeyEnvVar", bound, own, err)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("%d requests reached a URL the key is not bound to", n)
	}
	if _, err := s.Read(context.Background(), source.Target{Name: "prod", DeploymentURL: f.URL() + "/", Key: key, KeyOrigin: own}, "", time.Now(), 10); err != nil {
		t.Fatalf("at its own origin: %v", err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("at its own origin: %d requests, want 1", n)
	}
}

// TestUnauthorizedSaysHowATenantSetsItsKeyAgainstFakeConvex: a refused or
// missing key is a tenant's deploy key, set with `vantagepeers deploykey
// set` or as the AWS secret <prefix><tenant>/<NAME>; never "an
// environment variable (or secret)" of the server.
func TestUnauthorizedSaysHowATenantSetsItsKeyAgainstFakeConvex(t *testing.T) {
	f := convexfake.New(t, convexfake.Options{Key: "the-right-key"})
	s := newSource(convex.Options{})
	own, _ := egress.Origin(f.URL())
	for _, k := range []string{key, ""} {
		_, err := s.Read(context.Background(), source.Target{Tenant: "acme", Name: "prod", DeploymentURL: f.URL(), Key: k, KeyOrigin: own}, "", time.Now(), 10)
		if !vp.IsKind(err, vp.KindUnauthorized) {
			t.Fatalf("key %q: %v, want unauthorized", k, err)
		}
		msg := err.Error()
		for _, want := range []string{"vantagepeers deploykey set", "--tenant acme", "<prefix>acme/<NAME>"} {
			if !strings.Contains(msg, want) {
				t.Errorf("key %q: %q does not say %q", k, msg, want)
			}
		}
		if strings.Contains(msg, "environment variable") {
			t.Errorf("key %q: %q still speaks of the server's environment", k, msg)
		}
	}
}

// bound binds a target's key to its own URL, as the monitor does for a
// deployment at its key's origin.
func bound(t source.Target) source.Target {
	t.KeyOrigin, _ = egress.Origin(t.DeploymentURL)
	return t
}
