package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// command is one subcommand of the binary, declared once: its lines of the
// usage, its help, its flags and what it does. `vantagepeers help`,
// `vantagepeers CMD -h` and the dispatch all read the declarations, and the
// preamble every command shares (its subcommand, parsing the flags with
// --data-dir and --log-level, the app and its Close, the exit status) is
// written once, in invoke and exitStatus.
type command struct {
	Name string
	// Synopsis are its lines of the usage, after "vantagepeers ".
	Synopsis []string
	// Summary, when set, ends its last usage line, in parentheses.
	Summary string
	// Page is its own help page. Without one its help is its usage lines,
	// Details, and a line on the common flags.
	Page, Details string
	// Subs are its subcommands: when set, the first argument names one, and
	// its flag set is named after both ("token create").
	Subs []string
	// BadSub is the error of a missing ("") or unknown subcommand, checked
	// before anything else; nil: the help on stderr, then flag.ErrHelp when
	// none is given, else "NAME: unknown subcommand "X"; use A, B or C".
	BadSub func(e *env, sub string) error
	// NoCommon: it takes no --data-dir and --log-level.
	NoCommon bool
	// Args is where its positional arguments may stand among its flags.
	Args argPlacement
	// Flags registers its own flags for the subcommand sub ("" without Subs).
	Flags func(fs *flag.FlagSet, sub string)
	// Run does the work once the flags are parsed.
	Run func(ctx context.Context, e *env) error
}

// commands are the binary's subcommands, in the order of the usage. Each
// call builds them anew: a command's flags bind to its own variables.
func commands() []*command {
	return []*command{
		serveCommand(), stdioCommand(), connectCommand(), tokenCommand(), adminCommand(), jobsCommand(), outboxCommand(),
		githubCommand(), deploykeyCommand(), loggroupsCommand(), okfCommand(), pacerelleCommand(), errorsCommand(), guardCommand(), versionCommand(),
	}
}

// argPlacement says where a command's positional arguments may stand.
type argPlacement int

const (
	// argsAnywhere: before, between and after the flags; the default, so
	// that `token revoke ID --data-dir D` reads its flag ("--" ends them).
	argsAnywhere argPlacement = iota
	// argsAfterFlags: the flag package's rule, the first argument that is
	// not a flag ends the flags.
	argsAfterFlags
	// argsFirst: before the flags too, none after them.
	argsFirst
	// argsNone: it takes none; a stray one is refused rather than ignored
	// (`serve 8080` would otherwise listen on the default port).
	argsNone
)

// env is what a command runs with: its subcommand and positional
// arguments, the common flags, its streams, and the app, opened once on
// the first call of app and closed by invoke.
type env struct {
	common
	cmd, sub       string
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	log            *slog.Logger
	opened         *app
}

// logger is the command's logger: JSON on stderr at --log-level.
func (e *env) logger() (*slog.Logger, error) {
	if e.log == nil {
		log, err := e.common.logger(e.stderr)
		if err != nil {
			return nil, err
		}
		e.log = log
	}
	return e.log, nil
}

// app opens the data dir (openApp) with the command's logger, once. The
// commands open it only once their arguments are checked, so that a
// mistake never initialises a data directory.
func (e *env) app(ctx context.Context) (*app, error) {
	if e.opened != nil {
		return e.opened, nil
	}
	log, err := e.logger()
	if err != nil {
		return nil, err
	}
	a, err := openApp(ctx, e.dataDir, log)
	if err != nil {
		return nil, err
	}
	e.opened = a
	return a, nil
}

func (e *env) close() {
	if e.opened != nil {
		_ = e.opened.Close()
	}
}

// usageError is a command line the flags refuse: exit status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// invoke is the preamble of every command: the subcommand, the flags, then
// Run, then the app's Close.
func (c *command) invoke(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{cmd: c.Name, stdin: stdin, stdout: stdout, stderr: stderr}
	name := c.Name
	if c.Subs != nil {
		if len(args) > 0 {
			e.sub, args = args[0], args[1:]
		}
		if !slices.Contains(c.Subs, e.sub) {
			return c.badSub(e)
		}
		name += " " + e.sub
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if !c.NoCommon {
		e.common.register(fs)
	}
	if c.Flags != nil {
		c.Flags(fs, e.sub)
	}
	var err error
	if e.args, err = parseArgs(fs, c.Args, args); err != nil {
		// The flag package has printed the error and the flags on stderr.
		return usageError{err}
	}
	defer e.close()
	return c.Run(ctx, e)
}

func (c *command) badSub(e *env) error {
	if c.BadSub != nil {
		return c.BadSub(e, e.sub)
	}
	fmt.Fprint(e.stderr, c.help())
	if e.sub == "" {
		return flag.ErrHelp
	}
	return fmt.Errorf("%s: unknown subcommand %q; use %s", c.Name, e.sub, oneOf(c.Subs))
}

// oneOf is "a, b or c".
func oneOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func parseArgs(fs *flag.FlagSet, placement argPlacement, args []string) ([]string, error) {
	var pos []string
	switch placement {
	case argsFirst:
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			pos, args = append(pos, args[0]), args[1:]
		}
	case argsAnywhere, argsNone:
		for len(args) > 0 {
			if err := fs.Parse(args); err != nil {
				return nil, err
			}
			if fs.NArg() == 0 {
				break
			}
			pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
		}
		if placement == argsNone && len(pos) > 0 {
			err := fmt.Errorf("unexpected argument %q: %s takes flags only", pos[0], fs.Name())
			fmt.Fprintln(fs.Output(), err)
			fs.Usage()
			return nil, err
		}
		return pos, nil
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return append(pos, fs.Args()...), nil
}

// run runs the command args[0] with the rest of args. It prints all of
// the command's output but the error it returns, which exitStatus prints.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprint(stderr, usageOf(cmds))
		return flag.ErrHelp
	}
	if wantsHelp(args) {
		fmt.Fprint(stdout, helpFor(cmds, args[0]))
		return nil
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageOf(cmds))
		return nil
	case "--version", "-v":
		name = "version"
	}
	if c := lookup(cmds, name); c != nil {
		return c.invoke(ctx, args[1:], stdin, stdout, stderr)
	}
	fmt.Fprint(stderr, usageOf(cmds))
	return fmt.Errorf("unknown command %q", args[0])
}

// exitStatus prints err and returns the process's exit status: 0 without
// an error, 2 for a command line the flags refuse, else 1. flag.ErrHelp
// (the help printed instead of running) is not printed again.
func exitStatus(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "vantagepeers:", err)
	}
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

func lookup(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// wantsHelp reports a request for a command's help: -h, -help or --help
// anywhere before "--", or "help" right after the command. It is answered
// before any command runs, so that asking for help never initialises a
// data directory (and uses up its first-start message).
func wantsHelp(args []string) bool {
	if len(args) > 1 && args[1] == "help" {
		return true
	}
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// usageOf is the binary's usage: every command's lines between usageHead
// and usageTail.
func usageOf(cmds []*command) string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range cmds {
		b.WriteString(c.usageLines())
	}
	b.WriteString(usageTail)
	return b.String()
}

func (c *command) usageLines() string {
	var b strings.Builder
	for i, s := range c.Synopsis {
		b.WriteString("  vantagepeers " + s)
		if i == len(c.Synopsis)-1 && c.Summary != "" {
			b.WriteString("   (" + c.Summary + ")")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// help is the command's help: its page, or its usage lines and Details.
func (c *command) help() string {
	if c.Page != "" {
		return c.Page
	}
	return c.usageLines() + c.Details +
		"\nEvery command but version takes --data-dir DIR (env VP_DATA_DIR, default ~/.vantagepeers) and --log-level LEVEL.\n"
}

// helpFor is the help of the command name; the usage for an unknown one.
func helpFor(cmds []*command, name string) string {
	if c := lookup(cmds, name); c != nil {
		return c.help()
	}
	return usageOf(cmds)
}
