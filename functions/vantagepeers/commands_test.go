package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// invocation is one command line of the shape test: the command and, when
// it has subcommands, one of them.
func invocations(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	seen := map[string]bool{}
	for _, c := range commands() {
		if seen[c.Name] {
			t.Fatalf("two commands are named %q", c.Name)
		}
		seen[c.Name] = true
		if len(c.Subs) == 0 {
			out = append(out, []string{c.Name})
		}
		for _, s := range c.Subs {
			out = append(out, []string{c.Name, s})
		}
	}
	if len(out) < len(seen) {
		t.Fatalf("%d invocations of %d commands", len(out), len(seen))
	}
	return out
}

// runStatus runs args as main does, in a fresh VP_DATA_DIR, and returns
// the exit status, what was printed, and whether the data dir was created.
func runStatus(t *testing.T, args ...string) (status int, stdout, stderr string, created bool) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("VP_DATA_DIR", dir)
	t.Setenv("PACERELLE_DEVICE_DIR", filepath.Join(t.TempDir(), "devices"))
	var out, errb bytes.Buffer
	status = exitStatus(&errb, run(context.Background(), args, strings.NewReader(""), &out, &errb))
	_, err := os.Stat(dir)
	return status, out.String(), errb.String(), !errors.Is(err, os.ErrNotExist)
}

// Every command declares the same shape: its -h prints its help (naming
// it and each of its subcommands) on stdout and exits 0, and an unknown
// flag is named on stderr with exit status 2; neither touches the data
// dir. A new command that parses its own flags, or forgets its help,
// fails here.
func TestEveryCommandHasOneShape(t *testing.T) {
	cmds := commands()
	for _, inv := range invocations(t) {
		c := lookup(cmds, inv[0])
		t.Run(strings.Join(inv, "_"), func(t *testing.T) {
			if len(c.Synopsis) == 0 || c.Run == nil {
				t.Fatalf("%s declares no usage line or no Run", c.Name)
			}
			for _, line := range c.Synopsis {
				if !strings.HasPrefix(line, c.Name+" ") && line != c.Name {
					t.Errorf("%s: usage line %q does not start with the command", c.Name, line)
				}
			}
			// "help" counts right after the command only: after a
			// subcommand it may be an argument (a log group named help).
			for _, args := range [][]string{append(slices.Clone(inv), "-h"), append(slices.Clone(inv), "--help"), {c.Name, "help"}} {
				h := args[len(args)-1]
				status, out, errOut, created := runStatus(t, args...)
				if status != 0 || errOut != "" || created {
					t.Fatalf("%v %s: status %d, stderr %q, data dir created %v; want 0, nothing, no", inv, h, status, errOut, created)
				}
				if out != c.help() || !strings.Contains(out, "vantagepeers "+c.Name) {
					t.Fatalf("%v %s printed %q, want the help of %s", inv, h, out, c.Name)
				}
				for _, s := range c.Subs {
					if !strings.Contains(out, s) {
						t.Errorf("%v %s: the help does not name the subcommand %q", inv, h, s)
					}
				}
			}
			status, out, errOut, created := runStatus(t, append(slices.Clone(inv), "--no-such-flag")...)
			if status != 2 || !strings.Contains(errOut, "vantagepeers: flag provided but not defined: -no-such-flag") || out != "" || created {
				t.Fatalf("%v --no-such-flag: status %d, stdout %q, stderr %q, data dir created %v; want 2 and the flag named on stderr",
					inv, status, out, errOut, created)
			}
		})
	}
}

// The usage lists every command's lines, and `vantagepeers help` is it.
func TestUsageIsDerivedFromTheCommands(t *testing.T) {
	status, out, _, _ := runStatus(t, "help")
	if status != 0 {
		t.Fatalf("help: status %d", status)
	}
	for _, c := range commands() {
		if lines := c.usageLines(); !strings.Contains(out, lines) {
			t.Errorf("the usage lacks the lines of %s:\n%s", c.Name, lines)
		}
	}
	if status, _, errOut, _ := runStatus(t); status != 1 || errOut != out {
		t.Fatalf("no command: status %d, want 1 and the usage on stderr", status)
	}
}

// A missing or unknown subcommand is refused before anything runs: the
// data dir is neither created nor opened.
func TestUnknownSubcommandTouchesNoDataDir(t *testing.T) {
	for _, c := range commands() {
		if len(c.Subs) == 0 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			status, _, errOut, created := runStatus(t, c.Name, "no-such-subcommand")
			if status != 1 || !strings.Contains(errOut, `"no-such-subcommand"`) || created {
				t.Fatalf("%s no-such-subcommand: status %d, stderr %q, data dir created %v; want 1, the name quoted, no", c.Name, status, errOut, created)
			}
			if _, _, _, created := runStatus(t, c.Name); created {
				t.Fatalf("%s without a subcommand created the data dir", c.Name)
			}
		})
	}
}

// A command line the command can refuse is refused before the data dir is
// opened, so that a typo never initialises one (and prints its master
// token): stray arguments to a command that takes none exit 2, and a token
// spec the store would refuse exits 1, both with the data dir untouched.
func TestRefusedCommandLinesTouchNoDataDir(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		names  string // in the error
	}{
		{[]string{"serve", "8080"}, 2, `"8080"`},
		{[]string{"stdio", "--log-level", "warn", "extra"}, 2, `"extra"`},
		{[]string{"version", "x"}, 2, `"x"`},
		{[]string{"connect", "codex", "--as", "erin", "extra"}, 2, `"extra"`},
		{[]string{"connect", "codex", "--as", "erin#2"}, 1, "as"},
		{[]string{"connect", "cursor", "--as", "system"}, 1, "reserved"},
		{[]string{"connect", "cursor", "--as", "erin", "--tenant", "Not A Tenant"}, 1, "tenant"},
		{[]string{"token", "create", "--tenant", "acme", "--as", "a\u202eb"}, 1, "as"},
		{[]string{"token", "create", "--tenant", "acme", "--as", "erin", "--tool-profile", "most"}, 1, "tool-profile"},
		{[]string{"token", "revoke"}, 1, "token id"},
		{[]string{"token", "list", "extra"}, 1, `"extra"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			status, _, errOut, created := runStatus(t, c.args...)
			if status != c.status || !strings.Contains(errOut, c.names) || created {
				t.Fatalf("status %d, stderr %q, data dir created %v; want %d, %s named, no data dir", status, errOut, created, c.status, c.names)
			}
		})
	}
}

func TestArgumentPlacements(t *testing.T) {
	for _, c := range []struct {
		placement argPlacement
		args      []string
		want      string // positional arguments, then the flag's value
	}{
		{argsAfterFlags, []string{"--x", "1", "a", "b"}, "a b|1"},
		{argsAfterFlags, []string{"a", "--x", "1"}, "a --x 1|"},
		{argsFirst, []string{"a", "--x", "1", "b"}, "a b|1"},
		{argsFirst, []string{"a", "b", "--x", "1", "c", "--x", "2"}, "a b c --x 2|1"},
		{argsAnywhere, []string{"a", "--x", "1", "b", "--x", "2", "c"}, "a b c|2"},
		{argsAnywhere, []string{"--", "--x"}, "--x|"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		x := fs.String("x", "", "")
		pos, err := parseArgs(fs, c.placement, c.args)
		if got := strings.Join(pos, " ") + "|" + *x; err != nil || got != c.want {
			t.Errorf("placement %d, %q: %q (%v), want %q", c.placement, c.args, got, err, c.want)
		}
	}
}

// The process exits with the status exitStatus gives: 0 for help, 2 for
// a flag the command does not take, 1 for an unknown command.
func TestMainExitStatus(t *testing.T) {
	const env = "VP_TEST_MAIN_ARGS"
	if args, ok := os.LookupEnv(env); ok {
		os.Args = append([]string{"vantagepeers"}, strings.Fields(args)...)
		main()
		return
	}
	for _, c := range []struct {
		args string
		want int
	}{{"serve -h", 0}, {"serve --no-such-flag", 2}, {"token create --ttl 0d", 2}, {"no-such-command", 1}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
		cmd.Env = append(os.Environ(), env+"="+c.args, "VP_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		status := 0
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.want {
			t.Errorf("vantagepeers %s: exit status %d, want %d; stderr:\n%s", c.args, status, c.want, stderr.String())
		}
	}
}
