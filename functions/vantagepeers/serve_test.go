package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// `vantagepeers serve` hands a bundle above the inline limit over as an
// absolute signed URL on itself: the tool returns it, a GET of it returns
// the exact bytes, and an altered or expired link gets a 403 that says
// why. Over real HTTP, the server started as the binary starts it.
func TestServeOKFExportAboveInlineLimitIsADownloadURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	master := strings.Repeat("ab", 32)
	t.Setenv("VP_MASTER_TOKEN", master)
	t.Setenv("VP_PUBLIC_BASE_URL", "")
	t.Setenv("PUBLIC_BASE_URL", "")
	old := okfInlineMax
	okfInlineMax = 512 // the bundle below is a few KB
	t.Cleanup(func() { okfInlineMax = old })

	dir := filepath.Join(t.TempDir(), "data")
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.OKF.ReplacesAtOnce() {
		t.Fatal("the embedded app's OKF service does not see the store's large transactions: replace would take the journal")
	}
	const n = 12
	p := auth.MasterPrincipal(vp.DefaultTenant)
	for i := range n {
		if _, err := a.Memory.StoreMemory(ctx, p, memory.StoreInput{Namespace: "proj/big", Type: "fact", CreatedBy: "alice",
			Content: fmt.Sprintf("fact %d: %s", i, strings.Repeat("lorem ipsum ", 20))}); err != nil {
			t.Fatal(err)
		}
	}
	key, err := auth.EnsureKey(ctx, a.store, "okf-download") // what serve signs with
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", addr, "--data-dir", dir}, strings.NewReader(""), io.Discard, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, err := http.Get(base + "/health"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{master}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "export_okf_bundle", Arguments: map[string]any{"namespace": "proj/big"}})
	if err != nil {
		t.Fatal(err)
	}
	var d okfsvc.Delivery
	if b, _ := json.Marshal(res.StructuredContent); res.IsError || json.Unmarshal(b, &d) != nil {
		t.Fatalf("export_okf_bundle: error %v, %+v", res.IsError, res.Content)
	}
	if d.Bundle != "" || d.Bytes <= okfInlineMax || !strings.HasPrefix(d.DownloadURL, base+okfsvc.DownloadPath+"?") {
		t.Fatalf("want an absolute URL under %s for %d bytes; got url %q, %d bytes inline", base, d.Bytes, d.DownloadURL, len(d.Bundle))
	}

	get := func(u string) (int, []byte) {
		t.Helper()
		r, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Body.Close() }()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, b
	}
	code, body := get(d.DownloadURL)
	sum := sha256.Sum256(body)
	if code != http.StatusOK || len(body) != d.Bytes || hex.EncodeToString(sum[:]) != d.SHA256 {
		t.Fatalf("download: %d, %d bytes (want %d, sha256 %s)", code, len(body), d.Bytes, d.SHA256)
	}
	if b, err := okf.Read("test", bytes.NewReader(body), okf.DefaultLimits); err != nil || len(b.Memories) != n {
		t.Fatalf("the downloaded bundle: %v", err)
	}

	tampered, _ := url.Parse(d.DownloadURL)
	q := tampered.Query()
	q.Set("ns", "proj/other")
	tampered.RawQuery = q.Encode()
	links := okfsvc.NewLinks(key, base, time.Minute)
	links.Now = func() time.Time { return time.Now().Add(-time.Hour) } // signed properly, an hour ago
	expired, _ := links.Sign(vp.DefaultTenant, "proj/big", d.SHA256)
	for _, c := range []struct {
		name, url, want string
	}{
		{"tampered", tampered.String(), "not valid"},
		{"expired", expired, "expired"},
	} {
		if code, body := get(c.url); code != http.StatusForbidden || !strings.Contains(string(body), c.want) {
			t.Errorf("%s link: %d %q; want 403 saying %q", c.name, code, body, c.want)
		}
	}
}
