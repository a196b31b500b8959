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

// adminFlags are the flags of the admin subcommands.
type adminFlags struct {
	profile, tenant, desc, from, read, write, day string
	limit                                         int
}

func adminCommand() *command {
	var f adminFlags
	return &command{Name: "admin", Page: adminUsage,
		Synopsis: []string{
			"admin clients | elevate CLIENT_ID --profile P [--tenant T] | delete-client CLIENT_ID",
			"admin profiles | profile-set ID [--from ..] [--read ..] [--write ..] | profile-delete ID | seed-profiles",
			"admin audit [--day YYYY-MM-DD] | clerk-map CLERK_USER_ID TENANT",
		},
		Summary: "vantagepeers admin help",
		Subs:    []string{"clients", "elevate", "delete-client", "profiles", "profile-set", "profile-delete", "seed-profiles", "audit", "clerk-map"},
		BadSub: func(e *env, sub string) error {
			fmt.Fprint(e.stderr, adminUsage)
			if sub == "" {
				return flag.ErrHelp
			}
			return fmt.Errorf("admin: unknown subcommand %q", sub)
		},
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&f.profile, "profile", "", "scope profile id")
			fs.StringVar(&f.tenant, "tenant", "", "tenant id")
			fs.StringVar(&f.desc, "description", "", "what the profile is for")
			fs.StringVar(&f.from, "from", "", "fromAllowList: orchestrators its tokens may act as, comma-separated, or '*'")
			fs.StringVar(&f.read, "read", "", "namespaceReadPrefixes, comma-separated, or '*'")
			fs.StringVar(&f.write, "write", "", "namespaceWritePrefixes, comma-separated, or '*'")
			fs.StringVar(&f.day, "day", time.Now().UTC().Format(oauth.AuditDayLayout), "audit day (UTC), YYYY-MM-DD")
			fs.IntVar(&f.limit, "limit", 200, "at most this many audit records")
		},
		Run: func(ctx context.Context, e *env) error { return admin(ctx, e, f) },
	}
}

func admin(ctx context.Context, e *env, f adminFlags) error {
	cmd, pos := e.sub, e.args
	want := func(n int, what string) error {
		if len(pos) != n {
			return fmt.Errorf("admin %s: give %s", cmd, what)
		}
		return nil
	}
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
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
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
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
		if f.profile == "" {
			return errors.New("admin elevate: --profile is required")
		}
		cl, err := s.Elevate(ctx, actor, pos[0], f.profile, f.tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s now has profile %s in tenant %s (new tokens and refreshes carry it)\n", cl.ClientID, cl.ScopeProfile, cl.Tenant)
		return nil
	case "delete-client":
		if err := want(1, "the client id"); err != nil {
			return err
		}
		res, err := s.DeleteClient(ctx, actor, pos[0])
		if err != nil {
			return err
		}
		return printJSON(e.stdout, res)
	case "profiles":
		ps, err := s.ListProfiles(ctx)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, ps)
	case "profile-set":
		if err := want(1, "the profile id"); err != nil {
			return err
		}
		p, err := s.PutProfile(ctx, actor, oauth.Profile{ID: pos[0], Description: f.desc, FromAllowList: nonNil(split(f.from)),
			NamespaceReadPrefixes: nonNil(split(f.read)), NamespaceWritePrefixes: nonNil(split(f.write))})
		if err != nil {
			return err
		}
		return printJSON(e.stdout, p)
	case "profile-delete":
		if err := want(1, "the profile id"); err != nil {
			return err
		}
		if err := s.DeleteProfile(ctx, actor, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted profile %s\n", pos[0])
		return nil
	case "seed-profiles":
		created, err := s.SeedProfiles(ctx, actor)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "created %d profile(s): %s\n", len(created), strings.Join(created, ", "))
		return nil
	case "audit":
		recs, err := s.ListAudit(ctx, f.day, f.limit)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, recs)
	case "clerk-map":
		if err := want(2, "the Clerk user id and the tenant"); err != nil {
			return err
		}
		if err := s.MapClerkUser(ctx, actor, pos[0], pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Clerk user %s now resolves to tenant %s\n", pos[0], pos[1])
		return nil
	}
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
