package app_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// maxFileLines and maxPackageLines keep files readable top-down and
// packages about one thing; oversized names the one package the README
// allows past the limit, and why.
const (
	maxFileLines    = 800
	maxPackageLines = 3000
)

var oversized = map[string]string{
	"shared/mcpserver": "the thin handlers of every tool, one file per capability (README: Adding a capability)",
}

// TestFileAndPackageSizes: no Go file over maxFileLines, no package's
// non-test files over maxPackageLines but the ones named in oversized.
func TestFileAndPackageSizes(t *testing.T) {
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}|{{join .GoFiles \" \"}}|{{join .TestGoFiles \" \"}}|{{join .XTestGoFiles \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	for _, row := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(row, "|")
		dir := parts[0]
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		total := 0
		for i, list := range parts[1:] {
			for _, f := range strings.Fields(list) {
				n := lines(filepath.Join(dir, f))
				if n > maxFileLines {
					t.Errorf("%s/%s has %d lines, over %d: split it by topic", rel, f, n, maxFileLines)
				}
				if i == 0 {
					total += n
				}
			}
		}
		if _, ok := oversized[rel]; !ok && total > maxPackageLines {
			t.Errorf("%s has %d non-test lines, over %d: split it, or name it in oversized and in the README with the reason", rel, total, maxPackageLines)
		}
	}
}
