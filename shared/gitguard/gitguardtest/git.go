// Package gitguardtest helps the tests of the git guard: git
// repositories isolated from the machine's configuration, and a fake of
// the server's check_paths (the official go-sdk MCP server behind its
// bearer middleware). Tests that use the fake say so in their names.
package gitguardtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitEnv isolates git from the machine's configuration: no global or
// system file, a fixed author, no signing.
func GitEnv(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
}

// GitRun runs git in dir with extra environment and returns its combined
// output and error.
func GitRun(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// GitOK runs git in dir and fails the test when git fails.
func GitOK(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitRun(t, dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// NewRepo is a repository with one commit, in a path with a space.
func NewRepo(t testing.TB) string {
	t.Helper()
	GitEnv(t)
	dir := filepath.Join(t.TempDir(), "my repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	GitOK(t, dir, "init", "-q", "-b", "main")
	WriteFile(t, filepath.Join(dir, "README"), "hello\n")
	GitOK(t, dir, "add", "README")
	GitOK(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// WriteFile writes content to path, making its directories.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CommitFile stages a new file and commits it with env; it returns
// whether the commit was made and git's output.
func CommitFile(t testing.TB, dir, name string, env ...string) (bool, string) {
	t.Helper()
	before := GitOK(t, dir, "rev-parse", "HEAD")
	WriteFile(t, filepath.Join(dir, name), name+"\n")
	GitOK(t, dir, "add", "--", name)
	out, err := GitRun(t, dir, env, "commit", "-q", "-m", "add "+name)
	after := GitOK(t, dir, "rev-parse", "HEAD")
	if (err == nil) != (before != after) {
		t.Fatalf("git commit: error %v but HEAD %s → %s", err, before, after)
	}
	if err != nil {
		GitOK(t, dir, "reset", "-q", "--", name)
	}
	return err == nil, out
}

// ReadLog is the lines of log, none when it does not exist.
func ReadLog(t testing.TB, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// Stage writes and stages files in dir.
func Stage(t testing.TB, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		WriteFile(t, filepath.Join(dir, f), f+"\n")
	}
	GitOK(t, dir, append([]string{"add", "--"}, files...)...)
}
