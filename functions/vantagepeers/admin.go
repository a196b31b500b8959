package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// limits are the abuse limits of the endpoints open to all.
type limits struct {
	limiter    *ratelimit.Limiter
	maxPending int
}

// abuseLimits reads the abuse limits from the environment, as the Lambda
// functions do (shared/awsenv):
//
//	VP_TRUSTED_PROXIES            CIDRs of the proxies in front whose X-Forwarded-For is believed (default: none)
//	VP_OAUTH_REGISTER_PER_MINUTE  client registrations per source address and minute (default 10)
//	VP_OAUTH_MAX_PENDING_CLIENTS  clients that have completed no authorization, at most (default 1000)
func abuseLimits(st store.Store, log *slog.Logger) (*limits, error) {
	trusted, err := ratelimit.ParsePrefixes(os.Getenv(awsenv.EnvTrustedProxies))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", awsenv.EnvTrustedProxies, err)
	}
	var perMinute, maxPending int
	for _, n := range []struct {
		env string
		to  *int
	}{{awsenv.EnvOAuthRegisterPerMinute, &perMinute}, {awsenv.EnvOAuthMaxPendingClients, &maxPending}} {
		if v := strings.TrimSpace(os.Getenv(n.env)); v != "" {
			if *n.to, err = strconv.Atoi(v); err != nil || *n.to < 1 || *n.to > 1_000_000 {
				return nil, fmt.Errorf("%s: %q is not a number from 1 to 1000000", n.env, v)
			}
		}
	}
	return &limits{maxPending: maxPending, limiter: ratelimit.New(ratelimit.Options{Store: st, Logger: log, TrustedProxies: trusted,
		Rules: ratelimit.Rules{Register: ratelimit.Rule{PerMinute: perMinute}}})}, nil
}

func publicBaseURL() string {
	if v := envOr("VP_PUBLIC_BASE_URL", ""); v != "" {
		return v
	}
	return envOr("PUBLIC_BASE_URL", "")
}

const adminUsage = `vantagepeers admin — OAuth clients, scope profiles and the credentials audit log
(the same operations as the /admin/ HTTP endpoints, run as the owner of the data dir)

  vantagepeers admin clients
  vantagepeers admin elevate CLIENT_ID --profile P [--tenant T]
  vantagepeers admin delete-client CLIENT_ID
  vantagepeers admin profiles
  vantagepeers admin profile-set PROFILE_ID [--description D] [--from a,b] [--read p,q] [--write p]
  vantagepeers admin profile-delete PROFILE_ID
  vantagepeers admin seed-profiles
  vantagepeers admin audit [--day YYYY-MM-DD] [--limit N]
  vantagepeers admin clerk-map CLERK_USER_ID TENANT

Every command also takes --data-dir and --log-level.
`

func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, adminUsage)
		return flag.ErrHelp
	}
	cmd := args[0]
	fs := flag.NewFlagSet("admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	profile := fs.String("profile", "", "scope profile id")
	tenant := fs.String("tenant", "", "tenant id")
	desc := fs.String("description", "", "what the profile is for")
	from := fs.String("from", "", "fromAllowList: orchestrators its tokens may act as, comma-separated, or '*'")
	read := fs.String("read", "", "namespaceReadPrefixes, comma-separated, or '*'")
	write := fs.String("write", "", "namespaceWritePrefixes, comma-separated, or '*'")
	day := fs.String("day", time.Now().UTC().Format(oauth.AuditDayLayout), "audit day (UTC), YYYY-MM-DD")
	limit := fs.Int("limit", 200, "at most this many audit records")
	// Positional arguments may come before or after the flags.
	var pos []string
	rest := args[1:]
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	pos = append(pos, fs.Args()...)
	want := func(n int, what string) error {
		if len(pos) != n {
			return fmt.Errorf("admin %s: give %s", cmd, what)
		}
		return nil
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
	s := a.OAuth
	actor := oauth.Actor{ID: "cli", UserAgent: "vantagepeers admin " + cmd}
	if u := os.Getenv("USER"); u != "" {
		actor.ID = "cli:" + u
	}
	switch cmd {
	case "clients":
		cs, err := s.ListClients(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT_ID\tNAME\tPROFILE\tTENANT\tCREATED\tSTATE")
		for _, cl := range cs {
			state := "active"
			if cl.RevokedAt != 0 {
				state = "deleted " + time.UnixMilli(cl.RevokedAt).UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cl.ClientID, cl.Name, cl.ScopeProfile, cl.Tenant, time.UnixMilli(cl.CreatedAt).UTC().Format(time.RFC3339), state)
		}
		return tw.Flush()
	case "elevate":
		if err := want(1, "the client id"); err != nil {
			return err
		}
		if *profile == "" {
			return errors.New("admin elevate: --profile is required")
		}
		cl, err := s.Elevate(ctx, actor, pos[0], *profile, *tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s now has profile %s in tenant %s (new tokens and refreshes carry it)\n", cl.ClientID, cl.ScopeProfile, cl.Tenant)
		return nil
	case "delete-client":
		if err := want(1, "the client id"); err != nil {
			return err
		}
		res, err := s.DeleteClient(ctx, actor, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, res)
	case "profiles":
		ps, err := s.ListProfiles(ctx)
		if err != nil {
			return err
		}
		return printJSON(stdout, ps)
	case "profile-set":
		if err := want(1, "the profile id"); err != nil {
			return err
		}
		p, err := s.PutProfile(ctx, actor, oauth.Profile{ID: pos[0], Description: *desc, FromAllowList: nonNil(split(*from)),
			NamespaceReadPrefixes: nonNil(split(*read)), NamespaceWritePrefixes: nonNil(split(*write))})
		if err != nil {
			return err
		}
		return printJSON(stdout, p)
	case "profile-delete":
		if err := want(1, "the profile id"); err != nil {
			return err
		}
		if err := s.DeleteProfile(ctx, actor, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted profile %s\n", pos[0])
		return nil
	case "seed-profiles":
		created, err := s.SeedProfiles(ctx, actor)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created %d profile(s): %s\n", len(created), strings.Join(created, ", "))
		return nil
	case "audit":
		recs, err := s.ListAudit(ctx, *day, *limit)
		if err != nil {
			return err
		}
		return printJSON(stdout, recs)
	case "clerk-map":
		if err := want(2, "the Clerk user id and the tenant"); err != nil {
			return err
		}
		if err := s.MapClerkUser(ctx, actor, pos[0], pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Clerk user %s now resolves to tenant %s\n", pos[0], pos[1])
		return nil
	}
	fmt.Fprint(stderr, adminUsage)
	return fmt.Errorf("admin: unknown subcommand %q", cmd)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
