package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	ttl := fs.Duration("ttl", 0, "lifetime, e.g. 720h (default: no expiry)")
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
	if a.newMaster != "" {
		// This command initialised the data dir: the master token exists
		// only now, and only here.
		fmt.Fprintf(stderr, "initialised %s: created the master token (shown once; only its hash is stored):\n  %s\n", c.dataDir, a.newMaster)
	}
	switch args[0] {
	case "create":
		if *tenant == "" || *as == "" {
			return errors.New("token create: --tenant and --as are required")
		}
		secret, tok, err := a.tokens.Create(ctx, auth.Spec{
			Tenant: *tenant, ActsAs: split(*as), ReadPrefixes: split(*read), WritePrefixes: split(*write), Label: *label, TTL: *ttl, ToolProfile: *profile,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created %s for tenant %s acting as %s (shown once; only its hash is stored):\n", tok.ID, tok.Tenant, strings.Join(tok.ActsAs, ","))
		fmt.Fprintln(stdout, secret)
		return nil
	case "list":
		toks, err := a.tokens.List(ctx, *tenant)
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
		tok, err := a.tokens.Revoke(ctx, fs.Arg(0))
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
