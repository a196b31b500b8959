package okfsvc_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestDeliverAndReceive(t *testing.T) {
	small := okfsvc.ExportResult{Data: []byte("small bundle"), Manifest: okf.Manifest{Namespace: "ns"}}
	big := okfsvc.ExportResult{Data: make([]byte, okfsvc.MaxInlineBase64), Manifest: okf.Manifest{Namespace: "ns"}}
	_, _ = rand.Read(big.Data)
	p := domaintest.As(tenant, "pi")
	links := okfsvc.NewLinks([]byte("server key"), "https://vp.example", time.Minute)

	d, err := okfsvc.Deliver("x", small, p, "", false, nil)
	if err != nil || d.Bundle != base64.StdEncoding.EncodeToString(small.Data) || d.Bytes != len(small.Data) {
		t.Fatalf("inline: %+v %v", d, err)
	}
	_, err = okfsvc.Deliver("x", big, p, "", false, nil)
	domaintest.WantKind(t, err, vp.KindTooLarge, "namespace")
	if !strings.Contains(err.Error(), "4194304") || !strings.Contains(err.Error(), "path") {
		t.Fatalf("the error must state the limit and the way out: %v", err)
	}
	d, err = okfsvc.Deliver("x", big, p, "", false, links)
	if err != nil || d.Bundle != "" || !strings.HasPrefix(d.DownloadURL, "https://vp.example/okf/download?") || d.ExpiresAt == 0 {
		t.Fatalf("url: %+v %v", d, err)
	}
	_, err = okfsvc.Deliver("x", small, p, "/tmp/x.okf.tar.gz", false, nil)
	domaintest.WantKind(t, err, vp.KindInvalid, "path")
	file := filepath.Join(t.TempDir(), "b.okf.tar.gz")
	if d, err := okfsvc.Deliver("x", big, p, file, true, nil); err != nil || d.Path != file {
		t.Fatalf("path: %+v %v", d, err)
	}
	if got, err := okfsvc.Receive("x", "", file, true, okf.DefaultLimits); err != nil || !bytes.Equal(got.Data, big.Data) || got.Limits != okf.DefaultLimits {
		t.Fatalf("receive path: %v", err)
	}
	for _, c := range []struct {
		b64, path string
		local     bool
		field     string
		kind      vp.Kind
	}{
		{"", "", true, "bundle", vp.KindInvalid},
		{"QQ==", file, true, "bundle", vp.KindInvalid},
		{"", file, false, "path", vp.KindInvalid},
		{"%%%", "", false, "bundle", vp.KindInvalid},
		{strings.Repeat("A", okfsvc.MaxInlineBase64+4), "", false, "bundle", vp.KindTooLarge},
		{"", filepath.Join(t.TempDir(), "missing"), true, "path", vp.KindInvalid},
	} {
		_, err := okfsvc.Receive("x", c.b64, c.path, c.local, okf.DefaultLimits)
		domaintest.WantKind(t, err, c.kind, c.field)
	}
	_ = os.Remove(file)
}

// The signed download URL serves the bundle it was signed for, and only
// that: not after expiry, not with a changed parameter, not once the
// namespace changed.
func TestSignedDownload(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 2)
	now := time.Now()
	links := okfsvc.NewLinks([]byte("server key"), "", time.Minute)
	links.Now = func() time.Time { return now }
	srv := httptest.NewServer(links.Handler(e.svc))
	t.Cleanup(srv.Close)
	res, err := e.svc.Export(ctx, e.p, "team/src")
	if err != nil {
		t.Fatal(err)
	}
	big := res
	big.Data = make([]byte, okfsvc.MaxInlineBase64) // forces a URL; the route re-exports
	d, err := okfsvc.Deliver("x", big, e.p, "", false, links)
	if err != nil {
		t.Fatal(err)
	}
	get := func(u string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	// Signed for other bytes than the namespace exports today: 410.
	if code, _ := get(d.DownloadURL); code != http.StatusGone {
		t.Fatalf("a link for other bytes answered %d", code)
	}
	u, _ := links.Sign(tenant, "team/src", sha(res.Data))
	if code, body := get(u); code != http.StatusOK || !bytes.Equal(body, res.Data) {
		t.Fatalf("download: %d, %d bytes", code, len(body))
	}
	q, _ := url.ParseQuery(strings.SplitN(u, "?", 2)[1])
	for _, k := range []string{"t", "ns", "exp", "sig"} {
		bad := url.Values{}
		for kk, v := range q {
			bad[kk] = v
		}
		bad.Set(k, bad.Get(k)+"0")
		if code, _ := get(okfsvc.DownloadPath + "?" + bad.Encode()); code != http.StatusForbidden {
			t.Errorf("tampered %s answered %d", k, code)
		}
	}
	now = now.Add(2 * time.Minute)
	if code, _ := get(u); code != http.StatusForbidden {
		t.Fatalf("an expired link answered %d", code)
	}
	now = now.Add(-2 * time.Minute)
	if _, err := e.mem.StoreMemory(ctx, e.p, memory.StoreInput{Namespace: "team/src", Type: "fact", Content: "new"}); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(u); code != http.StatusGone {
		t.Fatalf("a link to a changed namespace answered %d", code)
	}
}

// Links.MaxInline moves the line between an inline bundle and a URL, and
// the URL is absolute under BaseURL whatever its trailing slash.
func TestDeliverInlineLimit(t *testing.T) {
	r := okfsvc.ExportResult{Data: make([]byte, 300)} // 400 bytes of base64
	for _, c := range []struct {
		name      string
		maxInline int
		base      string
		wantURL   bool
	}{
		{"default limit: inline", 0, "http://127.0.0.1:8787", false},
		{"at the limit: inline", 400, "http://127.0.0.1:8787", false},
		{"over the limit: url", 399, "http://127.0.0.1:8787", true},
		{"trailing slash", 16, "https://vp.example.com/", true},
	} {
		links := okfsvc.NewLinks([]byte("k"), c.base, time.Minute)
		links.MaxInline = c.maxInline
		d, err := okfsvc.Deliver("x", r, domaintest.As(tenant, "pi"), "", false, links)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (d.DownloadURL != "") != c.wantURL || (d.Bundle == "") != c.wantURL {
			t.Errorf("%s: url %q, %d bytes inline", c.name, d.DownloadURL, len(d.Bundle))
		}
		if c.wantURL && !strings.HasPrefix(d.DownloadURL, strings.TrimSuffix(c.base, "/")+okfsvc.DownloadPath+"?") {
			t.Errorf("%s: url %q is not under %s", c.name, d.DownloadURL, c.base)
		}
	}
}

// An export does not change when the embed jobs of its memories run: a
// download link is signed for the bundle's sha256, and the embedder of a
// vector is the store's state, not the memory's.
func TestExportUnchangedByEmbedding(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 3)
	before := e.export(t, "team/src")
	n, err := jobs.ProcessEmbedJobs(ctx, jobs.EmbedderOptions{Queue: e.queue, Memory: e.mem})
	if err != nil || n == 0 {
		t.Fatalf("embedded %d memories (%v); want some", n, err)
	}
	if after := e.export(t, "team/src"); !bytes.Equal(before, after) {
		t.Fatal("embedding the memories changed their export")
	}
}
