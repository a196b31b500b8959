package tenantfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
)

// TestFileRereadsAnotherProcesssChange: a change made through another
// File (another process: the admin command while the server runs) is
// seen by the first without a restart; a damaged file is an error that
// never quotes its content.
func TestFileRereadsAnotherProcesssChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f.json")
	server := &tenantfile.File[[]string]{Path: path}
	if v, err := server.Get("t", "acme"); err != nil || v != nil {
		t.Fatalf("no file: %v, %v", v, err)
	}
	admin := &tenantfile.File[[]string]{Path: path}
	set := func(v ...string) {
		t.Helper()
		if err := admin.Change("t", func(all map[string][]string) bool { all["acme"] = v; return true }); err != nil {
			t.Fatal(err)
		}
	}
	set("a")
	if v, _ := server.Get("t", "acme"); len(v) != 1 || v[0] != "a" {
		t.Fatalf("after the first change: %v", v)
	}
	set("b", "c") // another size: seen even within the mtime's resolution
	if v, _ := server.Get("t", "acme"); len(v) != 2 || v[0] != "b" {
		t.Fatalf("after the second change: %v", v)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v, %v", fi, err)
	}
	if _, err := server.Get("t", "../x"); err == nil {
		t.Error("an invalid tenant was read")
	}
	if err := os.WriteFile(path, []byte(`{"tenants": {"acme": ["s3cr3t-value"`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := server.Get("t", "acme")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("a damaged file: %v", err)
	}
}
