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

func token(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("token: want create, list or revoke")
	}
	fs := flag.NewFlagSet("token "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	tenant := fs.String("tenant", "", "tenant id")
	as := fs.String("as", "", "orchestrators the token may act as, comma-separated, or '*'")
	read := fs.String("read", "", "namespace prefixes it may read, comma-separated, or '*'")
	write := fs.String("write", "", "namespace prefixes it may write, comma-separated, or '*'")
	label := fs.String("label", "", "a note to recognise the token by")
	var ttl ttlFlag
	fs.Var(&ttl, "ttl", "lifetime, e.g. 30d, 12h or 90m (default: no expiry)")
	profile := fs.String("tool-profile", "", "tools advertised by default to this token: core or full")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, c.dataDir, log)
	if err != nil {
		return err
	}
	defer a.Close()
	announceMaster(stderr, a, c.dataDir)
	switch args[0] {
	case "create":
		if *tenant == "" || *as == "" {
			return errors.New("token create: --tenant and --as are required")
		}
		secret, tok, err := a.Tokens.Create(ctx, auth.Spec{
			Tenant: *tenant, ActsAs: split(*as), ReadPrefixes: split(*read), WritePrefixes: split(*write), Label: *label, TTL: ttl.d, ToolProfile: *profile,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created %s for tenant %s acting as %s (shown once; only its hash is stored):\n", tok.ID, tok.Tenant, strings.Join(tok.ActsAs, ","))
		fmt.Fprintln(stdout, secret)
		return nil
	case "list":
		toks, err := a.Tokens.List(ctx, *tenant)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
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
		if fs.NArg() != 1 {
			return errors.New("token revoke: give the token id (see token list)")
		}
		tok, err := a.Tokens.Revoke(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", tok.ID)
		return nil
	}
	return fmt.Errorf("token: unknown subcommand %q (want create, list or revoke)", args[0])
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
