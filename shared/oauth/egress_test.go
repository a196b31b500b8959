package oauth_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
)

// resolver answers every name with its address (DNS that names loopback).
type resolver netip.Addr

func (r resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

const cimdCanary = "CANARY-internal-document-9b2e"

// cimdServer is a TLS listener on 127.0.0.1 (its certificate is valid
// for example.com) serving, at every path, a document that holds the
// canary in each of its fields.
func cimdServer(t *testing.T) (*httptest.Server, *atomic.Int64, *tls.Config) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		id := "https://example.com" + r.Host[strings.LastIndexByte(r.Host, ':'):] + r.URL.Path
		if r.URL.Path == "/not-json.json" {
			_, _ = w.Write([]byte(cimdCanary))
			return
		}
		_, _ = w.Write([]byte(`{"client_id":"` + id + `","client_name":"` + cimdCanary + `","redirect_uris":["javascript:` + cimdCanary + `"],` +
			`"grant_types":["` + cimdCanary + `"],"token_endpoint_auth_method":"none"}`))
	}))
	t.Cleanup(ts.Close)
	return ts, &hits, ts.Client().Transport.(*http.Transport).TLSClientConfig
}

// A client_id URL whose host resolves to loopback is refused at dial
// time; the requester learns the rule, not the address.
func TestCIMDHostResolvingToLoopbackIsRefused(t *testing.T) {
	ts, hits, cfg := cimdServer(t)
	port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	e := sqliteEnv(t, func(o *oauth.Options) {
		o.Egress = egress.New(egress.Options{Resolver: resolver(netip.MustParseAddr("127.0.0.1")), TLSConfig: cfg})
	})
	c := client{ID: "https://example.com" + port + "/client.json", Redirect: "https://app.example.com/cb"}
	r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, newPKCE(), "s").Encode(), nil, nil)
	if r.status != 400 || !strings.Contains(string(r.body), "refused by egress policy: loopback") || strings.Contains(string(r.body), "127.0.0.1") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback listener served %d documents", hits.Load())
	}
}

// A document that is fetched (its host allowed by the operator) but not
// usable: the requester is told why, without a byte of the document.
func TestCIMDErrorsNeverEchoTheDocument(t *testing.T) {
	ts, hits, cfg := cimdServer(t)
	port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	allow, err := egress.ParseAllow("example.com")
	if err != nil {
		t.Fatal(err)
	}
	e := sqliteEnv(t, func(o *oauth.Options) {
		o.Egress = egress.New(egress.Options{Allow: allow, Resolver: resolver(netip.MustParseAddr("127.0.0.1")), TLSConfig: cfg})
	})
	for _, path := range []string{"/client.json", "/not-json.json"} {
		c := client{ID: "https://example.com" + port + path, Redirect: "https://app.example.com/cb"}
		r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, newPKCE(), "s").Encode(), nil, nil)
		if r.status != 400 || strings.Contains(string(r.body), "CANARY") || strings.Contains(string(r.body), "&#39;C&#39;") {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("%d documents served, want 2", hits.Load())
	}
}
