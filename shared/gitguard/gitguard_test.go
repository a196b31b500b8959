package gitguard

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/gitguard/gitguardtest"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
)

// fakeGuardBin is a stand-in for the binary the hook runs: it appends
// "guard: ARGS token=VP_TOKEN" to log and exits with $FAKE_GUARD_STATUS.
// Its path has a space and a quote, which the hook must quote.
func fakeGuardBin(t *testing.T, log string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin dir", "vp's")
	gitguardtest.WriteFile(t, bin, "#!/bin/sh\necho \"guard: $* token=$VP_TOKEN\" >> '"+log+"'\nexit ${FAKE_GUARD_STATUS:-0}\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func install(t *testing.T, dir string, o InstallOptions) string {
	t.Helper()
	o.Dir = dir
	var out bytes.Buffer
	if err := Install(context.Background(), o, &out); err != nil {
		t.Fatalf("guard install: %v", err)
	}
	return out.String()
}

// A fresh install writes an executable pre-commit hook that runs
// `guard check --staged` with the project and URL quoted, passes VP_TOKEN
// through, and whose failure refuses the commit.
func TestGuardInstallFreshHookRunsTheCheck(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	log := filepath.Join(t.TempDir(), "log")
	bin := fakeGuardBin(t, log)
	install(t, dir, InstallOptions{Bin: bin, Project: "it's p", URL: "http://127.0.0.1:1/mcp", FailOpen: true})
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if fi, err := os.Stat(hook); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("hook %s: %v, mode %v; want an executable file", hook, err, fi)
	}
	ok, out := gitguardtest.CommitFile(t, dir, "a.txt", "VP_TOKEN=tok-bob")
	want := "guard: guard check --staged --project it's p --url http://127.0.0.1:1/mcp --fail-open=true token=tok-bob"
	if got := gitguardtest.ReadLog(t, log); !ok || !slices.Equal(got, []string{want}) {
		t.Fatalf("commit made %v (%s); the hook ran %q, want %q", ok, out, got, want)
	}
	if ok, out := gitguardtest.CommitFile(t, dir, "b.txt", "VP_TOKEN=tok-bob", "FAKE_GUARD_STATUS=1"); ok {
		t.Fatalf("the check failed and the commit was made anyway: %s", out)
	}
}

// A pre-commit hook already there is kept, runs first with the hook's
// arguments but not the agent's token, and its failure refuses the commit
// before the check runs.
func TestGuardInstallChainsAnExistingHook(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	log := filepath.Join(t.TempDir(), "log")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	existing := "#!/bin/sh\necho \"theirs: $(git diff --cached --name-only) $# ${VP_TOKEN:-no token}\" >> '" + log + "'\nexit ${THEIRS_STATUS:-0}\n"
	gitguardtest.WriteFile(t, hook, existing)
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	out := install(t, dir, InstallOptions{Bin: fakeGuardBin(t, log), Project: "p", URL: "http://h/mcp", FailOpen: true})
	if !strings.Contains(out, ChainedName) {
		t.Fatalf("install did not say where the existing hook went: %q", out)
	}
	if ok, out := gitguardtest.CommitFile(t, dir, "a.txt", "VP_TOKEN=t"); !ok {
		t.Fatalf("commit refused: %s", out)
	}
	got := gitguardtest.ReadLog(t, log)
	if len(got) != 2 || got[0] != "theirs: a.txt 0 no token" || !strings.HasPrefix(got[1], "guard: guard check --staged") || !strings.HasSuffix(got[1], "token=t") {
		t.Fatalf("the hooks ran %q; want theirs (without the agent's token), then the guard (with it)", got)
	}
	if ok, out := gitguardtest.CommitFile(t, dir, "b.txt", "VP_TOKEN=t", "THEIRS_STATUS=3"); ok {
		t.Fatalf("the chained hook failed and the commit was made: %s", out)
	}
	if got := gitguardtest.ReadLog(t, log); len(got) != 3 || got[2] != "theirs: b.txt 0 no token" {
		t.Fatalf("after the chained hook failed the hooks ran %q; want theirs alone", got[2:])
	}
}

// Installing again rewrites our hook (a new URL takes effect) and never
// chains the hook to itself: the kept hook still runs once.
func TestGuardInstallIsIdempotent(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	log := filepath.Join(t.TempDir(), "log")
	hooks := filepath.Join(dir, ".git", "hooks")
	existing := "#!/bin/sh\necho theirs >> '" + log + "'\n"
	gitguardtest.WriteFile(t, filepath.Join(hooks, "pre-commit"), existing)
	if err := os.Chmod(filepath.Join(hooks, "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := fakeGuardBin(t, log)
	install(t, dir, InstallOptions{Bin: bin, Project: "p", URL: "http://one/mcp", FailOpen: true})
	first, _ := os.ReadFile(filepath.Join(hooks, "pre-commit"))
	if out := install(t, dir, InstallOptions{Bin: bin, Project: "p", URL: "http://one/mcp", FailOpen: true}); strings.Contains(out, "kept") {
		t.Fatalf("the second install chained again: %q", out)
	}
	second, _ := os.ReadFile(filepath.Join(hooks, "pre-commit"))
	if !bytes.Equal(first, second) {
		t.Fatalf("installing twice changed the hook:\n%s\n---\n%s", first, second)
	}
	install(t, dir, InstallOptions{Bin: bin, Project: "p", URL: "http://two/mcp", FailOpen: false})
	if kept, _ := os.ReadFile(filepath.Join(hooks, ChainedName)); string(kept) != existing {
		t.Fatalf("the kept hook is now %q, want the original", kept)
	}
	entries, _ := os.ReadDir(hooks)
	var ours []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "pre-commit") && !strings.HasSuffix(e.Name(), ".sample") {
			ours = append(ours, e.Name())
		}
	}
	if !slices.Equal(ours, []string{"pre-commit", ChainedName}) {
		t.Fatalf("hooks dir holds %q", ours)
	}
	if ok, out := gitguardtest.CommitFile(t, dir, "a.txt", "VP_TOKEN=t"); !ok {
		t.Fatalf("commit refused: %s", out)
	}
	got := gitguardtest.ReadLog(t, log)
	if len(got) != 2 || got[0] != "theirs" || !strings.Contains(got[1], "--url http://two/mcp --fail-open=false") {
		t.Fatalf("the hooks ran %q; want theirs once, then the check at the new URL", got)
	}
}

// The hook goes where git runs hooks from: core.hooksPath (relative to
// the top of the work tree, even when installing from a subdirectory), and
// the common directory of a linked worktree.
func TestGuardInstallHonoursHooksPathAndWorktrees(t *testing.T) {
	t.Run("core.hooksPath", func(t *testing.T) {
		dir := gitguardtest.NewRepo(t)
		gitguardtest.GitOK(t, dir, "config", "core.hooksPath", ".githooks")
		sub := filepath.Join(dir, "src", "deep")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(t.TempDir(), "log")
		install(t, sub, InstallOptions{Bin: fakeGuardBin(t, log), Project: "p", URL: "http://h/mcp", FailOpen: true})
		if _, err := os.Stat(filepath.Join(dir, ".githooks", "pre-commit")); err != nil {
			t.Fatalf("no hook in core.hooksPath: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
			t.Fatal("a hook in .git/hooks, which git does not run under core.hooksPath")
		}
		if ok, out := gitguardtest.CommitFile(t, dir, "a.txt", "VP_TOKEN=t"); !ok || len(gitguardtest.ReadLog(t, log)) != 1 {
			t.Fatalf("commit %v (%s), hook ran %d times; want once", ok, out, len(gitguardtest.ReadLog(t, log)))
		}
	})
	t.Run("worktree", func(t *testing.T) {
		dir := gitguardtest.NewRepo(t)
		wt := filepath.Join(t.TempDir(), "linked wt")
		gitguardtest.GitOK(t, dir, "worktree", "add", "-q", "-b", "side", wt)
		log := filepath.Join(t.TempDir(), "log")
		install(t, wt, InstallOptions{Bin: fakeGuardBin(t, log), Project: "p", URL: "http://h/mcp", FailOpen: true})
		if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err != nil {
			t.Fatalf("no hook in the common hooks dir: %v", err)
		}
		if ok, out := gitguardtest.CommitFile(t, wt, "a.txt", "VP_TOKEN=t"); !ok || len(gitguardtest.ReadLog(t, log)) != 1 {
			t.Fatalf("commit in the worktree %v (%s), hook ran %d times; want once", ok, out, len(gitguardtest.ReadLog(t, log)))
		}
	})
}

// Our hook replaced by another tool after an install, with the first
// kept hook still there: install refuses rather than lose one of them.
func TestGuardInstallRefusesToLoseAKeptHook(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	hooks := filepath.Join(dir, ".git", "hooks")
	gitguardtest.WriteFile(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\necho first\n")
	bin := fakeGuardBin(t, filepath.Join(t.TempDir(), "log"))
	install(t, dir, InstallOptions{Bin: bin, Project: "p", URL: "http://h/mcp", FailOpen: true})
	gitguardtest.WriteFile(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\necho second\n")
	err := Install(context.Background(), InstallOptions{Dir: dir, Bin: bin, Project: "p", URL: "http://h/mcp"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), ChainedName) {
		t.Fatalf("install over a foreign hook with a kept one: %v; want a refusal naming %s", err, ChainedName)
	}
	a, _ := os.ReadFile(filepath.Join(hooks, "pre-commit"))
	b, _ := os.ReadFile(filepath.Join(hooks, ChainedName))
	if string(a) != "#!/bin/sh\necho second\n" || string(b) != "#!/bin/sh\necho first\n" {
		t.Fatalf("install changed the hooks: %q, %q", a, b)
	}
}

// Bad arguments and a directory outside git are refused by name.
func TestGuardInstallRefusesBadArguments(t *testing.T) {
	gitguardtest.GitEnv(t)
	for _, c := range []struct {
		o    InstallOptions
		want string
	}{
		{InstallOptions{Dir: t.TempDir(), Project: "p", URL: "http://h/mcp"}, "not in a git repository"},
		{InstallOptions{Dir: t.TempDir(), URL: "http://h/mcp"}, "--project is required"},
		{InstallOptions{Dir: t.TempDir(), Project: "p", URL: "h/mcp"}, "--url"},
		{InstallOptions{Dir: t.TempDir(), Project: "p", URL: "ftp://h/mcp"}, "--url"},
	} {
		if err := Install(context.Background(), c.o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("install %+v: %v; want an error saying %q", c.o, err, c.want)
		}
	}
}

// When the binary the hook names is gone and none is on PATH, the hook
// warns and lets the commit through when failing open, refuses otherwise.
func TestGuardHookWithoutTheBinary(t *testing.T) {
	for _, failOpen := range []bool{true, false} {
		dir := gitguardtest.NewRepo(t)
		install(t, dir, InstallOptions{Bin: filepath.Join(t.TempDir(), "gone"), Project: "p", URL: "http://h/mcp", FailOpen: failOpen})
		ok, out := gitguardtest.CommitFile(t, dir, "a.txt", "PATH=/usr/bin:/bin", "VP_TOKEN=t")
		if ok != failOpen || !strings.Contains(out, "no vantagepeers binary") {
			t.Errorf("fail-open %v: commit made %v, output %q", failOpen, ok, out)
		}
	}
}

// The staged paths are what the commit changes, from the top of the work
// tree: both sides of a rename, deletions, names with spaces, newlines
// and non-ASCII letters, nothing unstaged; the same from a subdirectory
// and under diff.relative, and before the first commit.
func TestStagedPaths(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	for _, f := range []string{"old name.txt", "gone.txt", "mod.txt", "keep.txt"} {
		gitguardtest.WriteFile(t, filepath.Join(dir, f), "content of "+f+" that is long enough to be a rename\n")
	}
	gitguardtest.GitOK(t, dir, "add", ".")
	gitguardtest.GitOK(t, dir, "commit", "-q", "-m", "files")
	gitguardtest.GitOK(t, dir, "mv", "old name.txt", "new\nname.txt")
	gitguardtest.GitOK(t, dir, "rm", "-q", "gone.txt")
	gitguardtest.WriteFile(t, filepath.Join(dir, "mod.txt"), "changed\n")
	gitguardtest.WriteFile(t, filepath.Join(dir, "src", "sp ace", "été.go"), "package x\n")
	gitguardtest.GitOK(t, dir, "add", "mod.txt", "src")
	gitguardtest.WriteFile(t, filepath.Join(dir, "keep.txt"), "changed but not staged\n")
	gitguardtest.WriteFile(t, filepath.Join(dir, "untracked.txt"), "x\n")

	if st := gitguardtest.GitOK(t, dir, "status", "--short"); !strings.Contains(st, "R ") {
		t.Fatalf("git does not see a rename, the test would prove nothing:\n%s", st)
	}
	want := []string{"gone.txt", "mod.txt", "new\nname.txt", "old name.txt", "src/sp ace/été.go"}
	ctx := context.Background()
	for _, from := range []string{dir, filepath.Join(dir, "src")} {
		for _, relative := range []string{"false", "true"} {
			gitguardtest.GitOK(t, dir, "config", "diff.relative", relative)
			got, err := stagedPaths(ctx, from)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("from %s, diff.relative %s: %q, %v; want %q", from, relative, got, err, want)
			}
		}
	}

	fresh := filepath.Join(t.TempDir(), "fresh")
	gitguardtest.GitOK(t, t.TempDir(), "init", "-q", fresh)
	gitguardtest.WriteFile(t, filepath.Join(fresh, "a b"), "x\n")
	gitguardtest.GitOK(t, fresh, "add", ".")
	if got, err := stagedPaths(ctx, fresh); err != nil || !slices.Equal(got, []string{"a b"}) {
		t.Errorf("before the first commit: %q, %v", got, err)
	}
}

// A refused commit names the holder, the reserved paths, the expiry in
// RFC 3339 and as a delay, the reason and the reservation; text from the
// other agent cannot drive the terminal.
func TestGuardConflictWording(t *testing.T) {
	now := time.Date(2026, 7, 28, 13, 40, 0, 0, time.UTC)
	c := pathConflict{ReservationID: "res_1", Holder: "alice", Paths: []string{"src/api/**", "go.mod"}, Exclusive: true,
		ExpiresAt: now.Add(23*time.Minute + 10*time.Second).UnixMilli(), Reason: "refactor\x1b[2J the API\r\nok"}
	got := refusal([]pathConflict{c}, now)
	want := "vantagepeers guard: commit refused: staged paths are reserved by another agent\n" +
		"  alice holds src/api/**, go.mod exclusively until 2026-07-28T14:03:10Z (in 23 min): refactor [2J the API  ok [reservation res_1]\n" +
		"Wait for the expiry, ask the holder to release (send_message), or unstage those paths;\n" +
		"git commit --no-verify skips this check.\n"
	if got != want {
		t.Fatalf("refusal:\n%q\nwant\n%q", got, want)
	}
	for d, want := range map[time.Duration]string{
		-time.Second: "expired", 0: "expired", 400 * time.Millisecond: "in 1 s", 45 * time.Second: "in 45 s",
		time.Minute: "in 1 min", 23*time.Minute + 29*time.Second: "in 23 min", 59*time.Minute + 50*time.Second: "in 1 h",
		2*time.Hour + 5*time.Minute: "in 2 h 5 min", 24 * time.Hour: "in 24 h",
	} {
		if got := untilText(d); got != want {
			t.Errorf("untilText(%v) = %q, want %q", d, got, want)
		}
	}
	if got := inert(strings.Repeat("é", 400)); len([]rune(got)) != 301 {
		t.Errorf("a 400-rune text is %d runes; want it cut at 300 + …", len([]rune(got)))
	}
}

// `git commit -a` and `git commit PATH` stage into an index of their own
// and name it in GIT_INDEX_FILE for the hook: the check reads that index.
func TestStagedPathsReadTheHooksIndex(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	gitguardtest.WriteFile(t, filepath.Join(dir, "only-in-commit.txt"), "x\n")
	tmp := filepath.Join(t.TempDir(), "index")
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	gitguardtest.WriteFile(t, tmp, string(b))
	if out, err := gitguardtest.GitRun(t, dir, []string{"GIT_INDEX_FILE=" + tmp}, "add", "only-in-commit.txt"); err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	if got, err := stagedPaths(context.Background(), dir); err != nil || len(got) != 0 {
		t.Fatalf("the default index: %q, %v; want nothing staged", got, err)
	}
	t.Setenv("GIT_INDEX_FILE", tmp)
	if got, err := stagedPaths(context.Background(), dir); err != nil || !slices.Equal(got, []string{"only-in-commit.txt"}) {
		t.Fatalf("GIT_INDEX_FILE: %q, %v; want the path staged there", got, err)
	}
}

// A staged name the reservation glob language cannot write (no escapes;
// '[', '{', '\', control characters, invalid UTF-8 refused) is asked about
// as a glob that matches it and is valid: check_paths would refuse the
// whole commit's question otherwise (src/[id].tsx is a Next.js route).
func TestQueryGlobMatchesTheStagedName(t *testing.T) {
	for name, want := range map[string]string{
		"src/[id].tsx":     "src/?id?.tsx",
		"a/{b,c}.go":       "a/?b,c?.go",
		`back\slash`:       "back?slash",
		"new\nline\x7f":    "new?line?",
		"star*name":        "star?name",
		"a**b/x":           "a??b/x",
		"**/x":             "**/x",
		"caf\xe9/\xff\xfe": "caf?/??",
		"été/plain.go":     "été/plain.go",
		"what?.md":         "what?.md",
	} {
		got := queryGlob(name)
		if got != want {
			t.Errorf("queryGlob(%q) = %q, want %q", name, got, want)
		}
		if strings.ContainsAny(got, "[]{}\\") || strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !utf8.ValidString(got) {
			t.Errorf("queryGlob(%q) = %q: not in the glob language", name, got)
		}
		// Without '[' and '\', path.Match reads '*' and '?' as the
		// glob language does within a segment.
		gs, ns := strings.Split(got, "/"), strings.Split(name, "/")
		for i := range gs {
			if ok, _ := path.Match(gs[i], ns[i]); gs[i] != "**" && !ok {
				t.Errorf("queryGlob(%q) = %q does not match the name (segment %q)", name, got, ns[i])
			}
		}
	}
}

// A plain-http URL off this machine would carry the agent's token in
// clear on every commit: install says so; loopback and https do not.
func TestGuardInstallWarnsOfACleartextToken(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	bin := fakeGuardBin(t, filepath.Join(t.TempDir(), "log"))
	for u, warn := range map[string]bool{
		"http://10.0.0.7:8787/mcp": true, "http://vp.example.com/mcp": true, "http://127.0.0.1:8787/mcp": false,
		"http://localhost:8787/mcp": false, "http://[::1]:8787/mcp": false, "https://vp.example.com/mcp": false,
	} {
		out := install(t, dir, InstallOptions{Bin: bin, Project: "p", URL: u, FailOpen: true})
		if strings.Contains(out, "unencrypted") != warn {
			t.Errorf("install --url %s: %q; want a cleartext warning: %v", u, out, warn)
		}
	}
}

// matchGlob is the reservation glob language over a path: "**" a whole
// segment for any number of segments, '*' and '?' within one.
func matchGlob(g, p string) bool {
	var match func(gs, ps []string) bool
	match = func(gs, ps []string) bool {
		switch {
		case len(gs) == 0:
			return len(ps) == 0
		case gs[0] == "**":
			for i := 0; i <= len(ps); i++ {
				if match(gs[1:], ps[i:]) {
					return true
				}
			}
			return false
		case len(ps) == 0:
			return false
		}
		ok, _ := path.Match(gs[0], ps[0])
		return ok && match(gs[1:], ps[1:])
	}
	return match(strings.Split(g, "/"), strings.Split(p, "/"))
}

// A staged path longer than check_paths takes (512 bytes a glob) is asked
// about as a shorter glob that still matches it.
func TestQueryGlobBoundsLongPaths(t *testing.T) {
	long := strings.Repeat("d", 200)
	for _, p := range []string{
		long + "/" + long + "/" + long + "/f.go",
		long + "/" + long + "/" + strings.Repeat("é", 300),
		strings.Repeat("é", 300) + "/f.go",
		strings.Repeat("x", 700),
		strings.Repeat("[", 600) + "/a",
		"short/path.go",
	} {
		g := queryGlob(p)
		if len(g) > maxGlobBytes || !utf8.ValidString(g) || !matchGlob(g, p) {
			t.Errorf("queryGlob(%d bytes) = %q (%d bytes): want at most %d bytes, valid, matching the path", len(p), g, len(g), maxGlobBytes)
		}
		if len(p) <= maxGlobBytes && g != p {
			t.Errorf("a short plain path changed: %q → %q", p, g)
		}
	}
}

// The guard asks check_paths within its limits, written here as
// constants so that the binary's command does not link the capability.
func TestGuardStaysWithinCheckPathsLimits(t *testing.T) {
	if checkBatch > reservation.MaxPaths || maxGlobBytes != reservation.MaxGlobBytes {
		t.Fatalf("guard: %d paths a call, globs of %d bytes; check_paths takes %d paths, %d bytes",
			checkBatch, maxGlobBytes, reservation.MaxPaths, reservation.MaxGlobBytes)
	}
}
