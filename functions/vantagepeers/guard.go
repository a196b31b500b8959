package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/gitguard"
)

const guardUsage = `vantagepeers guard — refuse a commit that touches paths another agent reserved

  vantagepeers guard install --project P --url URL [--fail-open=true|false]
  vantagepeers guard check --staged --project P --url URL [--fail-open=true|false] [--timeout 5s]

  install       writes a pre-commit hook into the git repository of the current directory, where
                git looks for it (core.hooksPath and worktrees are honoured). A pre-commit hook
                already there is kept as pre-commit.vantagepeers-chained and runs first: the commit
                fails if it fails. Installing again rewrites the hook and nothing else.
  check         asks the server, with the agent's own token from VP_TOKEN (MCP tool check_paths),
                whether a staged path (both sides of a rename, deletions too) falls under another
                agent's exclusive reservation; one that does refuses the commit (exit 1), naming the
                holder, the reserved paths, the expiry and the reason.
  --project P   the project the agents reserve paths in
  --url URL     the server's MCP URL: http://127.0.0.1:8787/mcp embedded, https://HOST/mcp on AWS
  --fail-open   when the server cannot be reached, answers 5xx or does not answer within --timeout:
                warn and let the commit through (default true); false refuses the commit instead
  --timeout D   how long check waits for the server (default 5s)
  --staged      check the paths staged for the commit (the only mode, required)

A token the server refuses (401) refuses the commit whatever --fail-open says.
Skip the hook for one commit with git commit --no-verify.
`

type guardFlags struct {
	project, url    string
	failOpen, stage bool
	timeout         time.Duration
}

func guardCommand() *command {
	var f guardFlags
	return &command{Name: "guard", Page: guardUsage, NoCommon: true,
		Synopsis: []string{"guard install|check --project P --url URL [--fail-open=false]"},
		Summary:  "a pre-commit hook that refuses paths other agents reserved",
		Subs:     []string{"install", "check"},
		Flags: func(fs *flag.FlagSet, sub string) {
			fs.StringVar(&f.project, "project", "", "the project the agents reserve paths in")
			fs.StringVar(&f.url, "url", "", "the server's MCP URL")
			fs.BoolVar(&f.failOpen, "fail-open", true, "let the commit through when the server cannot be reached")
			if sub == "check" {
				fs.BoolVar(&f.stage, "staged", false, "check the staged paths")
				fs.DurationVar(&f.timeout, "timeout", gitguard.DefaultTimeout, "how long to wait for the server")
			}
		},
		Run: func(ctx context.Context, e *env) error {
			if len(e.args) > 0 {
				return fmt.Errorf("guard %s: unexpected argument %q", e.sub, e.args[0])
			}
			if e.sub == "install" {
				bin, err := os.Executable()
				if err != nil {
					return err
				}
				return gitguard.Install(ctx, gitguard.InstallOptions{Bin: bin, Project: f.project, URL: f.url, FailOpen: f.failOpen}, e.stdout)
			}
			if !f.stage {
				return errors.New("guard check: --staged is required (the paths staged for the commit are the ones checked)")
			}
			return gitguard.Check(ctx, gitguard.CheckOptions{Project: f.project, URL: f.url, Token: os.Getenv("VP_TOKEN"),
				FailOpen: f.failOpen, Timeout: f.timeout, Version: version}, e.stderr)
		},
	}
}
