package okfsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// MaxInlineBase64 bounds a bundle carried in a tool call or result, as
// base64: 4 MiB. Larger bundles go through a file (path, local server) or
// a signed download URL (HTTP).
const MaxInlineBase64 = 4 << 20

// Delivery is how an exported bundle reaches the caller: inline, written
// to a file, or at a signed URL.
type Delivery struct {
	Namespace string         `json:"namespace"`
	Bytes     int            `json:"bytes"`
	SHA256    string         `json:"sha256"`
	Counts    map[string]int `json:"counts"`
	// Bundle is the .okf.tar.gz, base64 (std encoding).
	Bundle      string `json:"bundle,omitempty"`
	Path        string `json:"path,omitempty"`
	DownloadURL string `json:"downloadUrl,omitempty"`
	// ExpiresAt (Unix ms) ends the download URL.
	ExpiresAt int64 `json:"expiresAt,omitempty"`
}

// Deliver hands r over: to path when given (local servers only), inline
// up to MaxInlineBase64, else at a signed URL when links are configured.
func Deliver(op string, r ExportResult, p vp.Principal, path string, local bool, links *Links) (Delivery, error) {
	sum := sha256.Sum256(r.Data)
	d := Delivery{Namespace: r.Manifest.Namespace, Bytes: len(r.Data), SHA256: hex.EncodeToString(sum[:]), Counts: r.Manifest.Counts}
	if path != "" {
		if !local {
			return Delivery{}, vp.E(op, vp.KindInvalid, "path", "is for a local (stdio) server only; over HTTP the bundle comes inline or as downloadUrl")
		}
		if err := writeFile(path, r.Data); err != nil {
			return Delivery{}, vp.Errorf(op, vp.KindInvalid, "path", "cannot write %q: %v", path, err)
		}
		d.Path = path
		return d, nil
	}
	inline := MaxInlineBase64
	if links != nil && links.MaxInline > 0 {
		inline = links.MaxInline
	}
	if n := base64.StdEncoding.EncodedLen(len(r.Data)); n <= inline {
		d.Bundle = base64.StdEncoding.EncodeToString(r.Data)
		return d, nil
	}
	if links == nil {
		return Delivery{}, vp.Errorf(op, vp.KindTooLarge, "namespace", "the bundle is %d bytes (%d as base64); a result carries at most %d bytes of base64 — pass path to write it to a file (local server) or use the CLI `vantagepeers okf export`",
			len(r.Data), base64.StdEncoding.EncodedLen(len(r.Data)), MaxInlineBase64)
	}
	d.DownloadURL, d.ExpiresAt = links.Sign(p.Tenant, d.Namespace, d.SHA256)
	return d, nil
}

// writeFile writes data next to path then renames it, so that a reader
// never sees half a bundle.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".okf-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Received is the bundle of a call with the limits of the way it came:
// inline, okf.InlineLimits (anyone with a token can send one); from a
// file, the Service's.
type Received struct {
	Data   []byte
	Limits okf.Limits
}

// Receive returns the bundle of a call: bundle (base64) or path (local
// servers only), exactly one. lim are the limits of a file.
func Receive(op, b64, path string, local bool, lim okf.Limits) (Received, error) {
	switch {
	case b64 != "" && path != "":
		return Received{}, vp.E(op, vp.KindInvalid, "bundle", "pass bundle or path, not both")
	case path != "":
		if !local {
			return Received{}, vp.E(op, vp.KindInvalid, "path", "is for a local (stdio) server only; over HTTP pass bundle (base64)")
		}
		b, err := ReadFile(op, "path", path, lim.MaxCompressed)
		return Received{Data: b, Limits: lim}, err
	case b64 == "":
		return Received{}, vp.E(op, vp.KindInvalid, "bundle", "is required: the .okf.tar.gz as base64 (or path, on a local server)")
	case len(b64) > MaxInlineBase64:
		return Received{}, vp.Errorf(op, vp.KindTooLarge, "bundle", "is %d bytes of base64; the limit is %d — use the CLI `vantagepeers okf import` for larger bundles", len(b64), MaxInlineBase64)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return Received{}, vp.Errorf(op, vp.KindInvalid, "bundle", "is not standard base64: %v", err)
	}
	return Received{Data: b, Limits: okf.InlineLimits}, nil
}

// ReadFile reads a bundle file of at most max bytes, refusing a larger one
// before reading it (and one that grows while read). field names the
// argument that gave path.
func ReadFile(op, field, path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, field, "cannot read %q: %v", path, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, field, "cannot read %q: %v", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, vp.Errorf(op, vp.KindTooLarge, field, "%q is not a regular file of at most %d bytes (the limit)", path, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, field, "cannot read %q: %v", path, err)
	}
	if int64(len(b)) > max {
		return nil, vp.Errorf(op, vp.KindTooLarge, field, "%q is over %d bytes (the limit)", path, max)
	}
	return b, nil
}

// ---- signed download URLs

// Links signs short-lived download URLs of exports: the URL names the
// tenant, the namespace, the bundle's sha256 and an expiry, under an HMAC.
// Nothing is stored: the download exports the namespace again, and since
// exports are deterministic it serves the very bytes signed for — or 410
// Gone when the namespace changed since.
type Links struct {
	Key []byte
	// BaseURL is the server's absolute URL, e.g. "https://vp.example.com"
	// (a trailing slash is dropped); the route is DownloadPath.
	BaseURL string
	TTL     time.Duration
	Now     func() time.Time
	// MaxInline is the largest bundle, as base64, that Deliver returns
	// inline when links are offered (0: MaxInlineBase64).
	MaxInline int
}

// NewLinks returns Links whose key is derived from secret (a server key
// such as the cursor key), so that no two uses share a key.
func NewLinks(secret []byte, baseURL string, ttl time.Duration) *Links {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("vantagepeers okf download links"))
	return &Links{Key: h.Sum(nil), BaseURL: baseURL, TTL: ttl}
}

// DownloadPath is the route serving signed bundle downloads.
const DownloadPath = "/okf/download"

func (l *Links) now() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

func (l *Links) mac(tenant, ns, sha string, exp int64) string {
	h := hmac.New(sha256.New, l.Key)
	fmt.Fprintf(h, "okf-download\x00%s\x00%s\x00%s\x00%d", tenant, ns, sha, exp)
	return hex.EncodeToString(h.Sum(nil))
}

// Sign returns the URL and its expiry (Unix ms).
func (l *Links) Sign(tenant, ns, sha string) (string, int64) {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	exp := l.now().Add(ttl).UnixMilli()
	q := url.Values{"t": {tenant}, "ns": {ns}, "sha": {sha}, "exp": {strconv.FormatInt(exp, 10)}, "sig": {l.mac(tenant, ns, sha, exp)}}
	return strings.TrimRight(l.BaseURL, "/") + DownloadPath + "?" + q.Encode(), exp
}

// Handler serves DownloadPath with svc.
func (l *Links) Handler(svc *Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tenant, ns, sha := q.Get("t"), q.Get("ns"), q.Get("sha")
		exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
		if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(l.mac(tenant, ns, sha, exp))) {
			http.Error(w, "this download link is not valid: its signature does not match (altered, or made by another server); export again for a new one", http.StatusForbidden)
			return
		}
		if l.now().UnixMilli() > exp {
			http.Error(w, "this download link expired at "+time.UnixMilli(exp).UTC().Format(time.RFC3339)+"; export again for a new one", http.StatusForbidden)
			return
		}
		// The link was signed for a caller that could read ns.
		res, err := svc.Export(r.Context(), vp.Principal{Tenant: tenant, ReadPrefixes: []string{ns}}, ns)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		sum := sha256.Sum256(res.Data)
		if hex.EncodeToString(sum[:]) != sha {
			http.Error(w, "the namespace changed since this link was made; export again", http.StatusGone)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("Content-Disposition", `attachment; filename="bundle.okf.tar.gz"`)
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(res.Data)
	})
}
