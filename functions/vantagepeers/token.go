package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// tokenFlags are the flags of the token subcommands.
type tokenFlags struct {
	tenant, as, read, write, label, profile string
	url                                     string
	ttl                                     ttlFlag
}

func tokenCommand() *command {
	var f tokenFlags
	return &command{Name: "token",
		Synopsis: []string{
			"token create --tenant T --as alice,bob --read global,project/x --write project/x [--label L] [--ttl 30d] [--tool-profile core|full]",
			"token list   [--tenant T]",
			"token revoke ID",
		},
		Details: `
  --tenant T        the tenant (create; list filters by it)
  --as a,b          orchestrators the token may act as, or '*'
  --read p,q        namespace prefixes it may read, or '*'
  --write p,q       namespace prefixes it may write, or '*'
  --ttl 30d         lifetime: days (30d) or a duration (12h); default: no expiry
  --label L         a note to recognise it by
  --tool-profile P  core or full: the tools advertised to it by default
  --url URL         a deployment's MCP URL (https://HOST/mcp): create, list or revoke through its admin
                    API; the admin (master) token is read from stdin, never from a flag
The token is printed once on stdout; only its hash is stored.
`,
		Subs: []string{"create", "list", "revoke"},
		BadSub: func(_ *env, sub string) error {
			if sub == "" {
				return errors.New("token: want create, list or revoke")
			}
			return fmt.Errorf("token: unknown subcommand %q (want create, list or revoke)", sub)
		},
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&f.tenant, "tenant", "", "tenant id")
			fs.StringVar(&f.as, "as", "", "orchestrators the token may act as, comma-separated, or '*'")
			fs.StringVar(&f.read, "read", "", "namespace prefixes it may read, comma-separated, or '*'")
			fs.StringVar(&f.write, "write", "", "namespace prefixes it may write, comma-separated, or '*'")
			fs.StringVar(&f.label, "label", "", "a note to recognise the token by")
			fs.Var(&f.ttl, "ttl", "lifetime, e.g. 30d, 12h or 90m (default: no expiry)")
			fs.StringVar(&f.profile, "tool-profile", "", "tools advertised by default to this token: core or full")
			fs.StringVar(&f.url, "url", "", "a deployment's MCP URL: use its admin API, the master token on stdin")
		},
		Run: func(ctx context.Context, e *env) error { return token(ctx, e, f) },
	}
}

func token(ctx context.Context, e *env, f tokenFlags) error {
	spec := auth.Spec{
		Tenant: f.tenant, ActsAs: split(f.as), ReadPrefixes: split(f.read), WritePrefixes: split(f.write), Label: f.label, TTL: f.ttl.d, ToolProfile: f.profile,
	}
	// The command line is checked before the data dir is opened: a mistake
	// never initialises one.
	switch {
	case e.sub == "create" && (f.tenant == "" || f.as == ""):
		return errors.New("token create: --tenant and --as are required")
	case e.sub == "create":
		if err := auth.CheckSpec(spec); err != nil {
			return err
		}
	case e.sub == "revoke" && len(e.args) != 1:
		return errors.New("token revoke: give the token id (see token list)")
	case e.sub == "list" && len(e.args) > 0:
		return fmt.Errorf("token list: unexpected argument %q", e.args[0])
	}
	a, err := tokensFor(ctx, e, f.url, true)
	if err != nil {
		return err
	}
	switch e.sub {
	case "create":
		secret, tok, err := a.Create(ctx, spec)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "created %s for tenant %s acting as %s (shown once; only its hash is stored):\n", tok.ID, tok.Tenant, strings.Join(tok.ActsAs, ","))
		fmt.Fprintln(e.stdout, secret)
		return nil
	case "list":
		toks, err := a.List(ctx, f.tenant)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTENANT\tAS\tREAD\tWRITE\tCREATED\tSTATE\tLABEL")
		for _, t := range toks {
			state := "active"
			if t.RevokedAt != 0 {
				state = "revoked"
			} else if t.ExpiresAt != 0 && t.ExpiresAt < time.Now().UnixMilli() {
				state = "expired"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, strings.Join(t.ActsAs, ","),
				strings.Join(t.ReadPrefixes, ","), strings.Join(t.WritePrefixes, ","),
				time.UnixMilli(t.CreatedAt).UTC().Format(time.RFC3339), state, t.Label)
		}
		return tw.Flush()
	case "revoke":
		tok, err := a.Revoke(ctx, e.args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", tok.ID)
		return nil
	}
	return fmt.Errorf("token: unknown subcommand %q", e.sub)
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// announceMaster shows the master token when this command initialised the
// data dir: it exists only now, and only here. It goes to stderr, never
// where a script reads the command's result.
func announceMaster(stderr io.Writer, a *app, dataDir string) {
	if a.newMaster != "" {
		fmt.Fprintf(stderr, "initialised %s: created the ADMIN (master) token — for admin commands only, never for an agent; shown once, only its hash is stored:\n  %s\n", dataDir, a.newMaster)
	}
}

// ttlFlag is a lifetime: a Go duration (720h, 90m) or whole days (30d).
type ttlFlag struct{ d time.Duration }

func (f *ttlFlag) String() string { return f.d.String() }

func (f *ttlFlag) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 36500 {
			return fmt.Errorf("%q: want a number of days from 1 to 36500 (30d), or a duration (12h)", s)
		}
		f.d = time.Duration(n) * 24 * time.Hour
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want days (30d) or a positive duration (12h, 90m)", s)
	}
	f.d = d
	return nil
}
