package convex_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// canary stands for what a remote a tenant named answers: an internal
// service's page, a metadata document, a secret.
const canary = "CANARY-7f3c-internal-admin-page"

// A refusal keeps its status, never the remote's body.
func TestRefusalsNeverEchoTheBodyAgainstFakeConvex(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 418, 429, 500, 502, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			f, s, tg := setup(t, convexfake.Options{})
			f.Script(convexfake.Answer{Status: status, Body: canary + " " + key})
			_, err := s.Read(context.Background(), tg, "", time.Now(), 10)
			if err == nil || !strings.Contains(err.Error(), "HTTP "+strconv.Itoa(status)) {
				t.Fatalf("err = %v, want one naming HTTP %d", err, status)
			}
			if strings.Contains(err.Error(), "CANARY") || strings.Contains(err.Error(), "eyJ2") {
				t.Fatalf("the remote's body is in the error: %v", err)
			}
		})
	}
	t.Run("200 that is not JSON", func(t *testing.T) {
		f, s, tg := setup(t, convexfake.Options{})
		f.Script(convexfake.Answer{Status: 200, Body: canary})
		_, err := s.Read(context.Background(), tg, "", time.Now(), 10)
		if !vp.IsKind(err, vp.KindUnavailable) || strings.Contains(err.Error(), "CANARY") || strings.Contains(err.Error(), "'C'") {
			t.Fatalf("err = %v", err)
		}
	})
}

// A redirect is not followed, and its target is not echoed.
func TestRedirectIsRefusedAgainstFakeConvex(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{})
	f.Script(convexfake.Answer{Status: http.StatusFound, Header: http.Header{"Location": {"http://169.254.169.254/" + canary}}})
	_, err := s.Read(context.Background(), tg, "", time.Now(), 10)
	if !vp.IsKind(err, vp.KindForbidden) || !strings.Contains(err.Error(), "redirect") || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (the redirect not followed)", n)
	}
}

type resolveTo netip.Addr

func (r resolveTo) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// Without the operator's allow-list, a deployment on loopback is not
// reached: not by its address (at input), not by a name that resolves
// there (at dial time), not over http.
func TestDefaultPolicyRefusesLoopbackAgainstFakeConvex(t *testing.T) {
	f := convexfake.New(t, convexfake.Options{Key: key})
	u, _ := url.Parse(f.URL())
	for _, tc := range []struct {
		name, url string
		o         convex.Options
		kind      vp.Kind
		rule      string
	}{
		{"default policy, http loopback", f.URL(), convex.Options{}, vp.KindInvalid, "scheme http"},
		{"default policy, https loopback", "https://" + u.Host, convex.Options{}, vp.KindInvalid, "loopback"},
		{"a name resolving to loopback", "https://happy-otter-123.convex.cloud:" + u.Port(),
			convex.Options{Egress: egress.New(egress.Options{Resolver: resolveTo(netip.MustParseAddr("127.0.0.1"))})}, vp.KindForbidden, "refused by egress policy: loopback"},
		{"a name resolving to the metadata service", "https://happy-otter-123.convex.cloud:" + u.Port(),
			convex.Options{Egress: egress.New(egress.Options{Resolver: resolveTo(netip.MustParseAddr("169.254.169.254"))})}, vp.KindForbidden, "refused by egress policy: link-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := convex.New(tc.o)
			_, err := s.Read(context.Background(), bound(source.Target{Name: "prod", DeploymentURL: tc.url, Key: key}), "", time.Now(), 10)
			var e *vp.Error
			if vp.KindOf(err) != tc.kind || !asErr(err, &e) || e.Field != "deploymentUrl" || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("err = %v (%v), want %v on deploymentUrl naming %q", err, vp.KindOf(err), tc.kind, tc.rule)
			}
		})
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("the loopback fake got %d requests", n)
	}
}
