package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

const outboxUsage = `vantagepeers outbox — the side effects that failed for good (dead letters)

  vantagepeers outbox dead [--tenant T] [--limit N]   list them, oldest first
  vantagepeers outbox retry ID [--tenant T]           deliver one again, attempts reset
  vantagepeers outbox discard ID [--tenant T]         delete one: its effect will not happen

Every command also takes --data-dir and --log-level.
`

// outboxCommand administers the outbox of the data dir. It opens the store
// alone, not the whole app: it must work while the server runs (SQLite
// serialises the writers of both processes) and must not initialise a data
// dir that does not exist.
func outboxCommand() *command {
	var tenant string
	var limit int
	return &command{Name: "outbox", Page: outboxUsage,
		Synopsis: []string{"outbox dead [--tenant T] | retry ID | discard ID"},
		Summary:  "vantagepeers outbox help",
		Subs:     []string{"dead", "retry", "discard"},
		BadSub: func(e *env, sub string) error {
			fmt.Fprint(e.stderr, outboxUsage)
			if sub == "" {
				return flag.ErrHelp
			}
			return fmt.Errorf("outbox: unknown subcommand %q (want dead, retry or discard)", sub)
		},
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&tenant, "tenant", "", "tenant id (default: every tenant; for retry and discard, found from the id)")
			fs.IntVar(&limit, "limit", 100, "at most this many dead letters")
		},
		Run: func(ctx context.Context, e *env) error { return outboxCmd(ctx, e, tenant, limit) },
	}
}

func outboxCmd(ctx context.Context, e *env, tenant string, limit int) error {
	cmd, pos := e.sub, e.args
	log, err := e.logger()
	if err != nil {
		return err
	}
	path := filepath.Join(e.dataDir, "vantagepeers.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("outbox: no data at %s (--data-dir or VP_DATA_DIR): %w", e.dataDir, err)
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		return err
	}
	defer st.Close()
	// The core modules only: the outbox, without the services whose jobs
	// it holds (a retried job runs at the server's next drain).
	svc, err := vpapp.Build(ctx, vpapp.Ports{Store: st, Logger: log})
	if err != nil {
		return err
	}
	defer svc.Close()
	ob := svc.Outbox
	oneID := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("outbox %s: give one job id (see: vantagepeers outbox dead)", cmd)
		}
		return pos[0], nil
	}
	switch cmd {
	case "dead":
		dead, err := ob.DeadLetters(ctx, outbox.DeadQuery{Tenant: tenant, Limit: limit})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTENANT\tTOPIC\tSUBSCRIBER\tATTEMPTS\tENQUEUED\tLAST FAILURE\tDEAD SINCE\tLAST ERROR")
		for _, d := range dead {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", d.ID, d.Tenant, d.Topic, orDash(d.Subscriber), d.Attempts,
				stamp(d.EnqueuedAt), stamp(d.FailedAt), stamp(d.DeadAt), oneLine(d.LastError, 120))
		}
		return tw.Flush()
	case "retry", "discard":
		id, err := oneID()
		if err != nil {
			return err
		}
		var en outbox.Entry
		if cmd == "retry" {
			en, err = ob.Retry(ctx, tenant, id)
		} else {
			en, err = ob.Discard(ctx, tenant, id)
		}
		if err != nil {
			return err
		}
		verb := map[string]string{"retry": "queued again, due now (the next drain of an outbox worker delivers it)", "discard": "discarded"}[cmd]
		fmt.Fprintf(e.stdout, "%s %s (tenant %s, topic %s): %s\n", cmd, en.ID, en.Tenant, en.Topic, verb)
		return nil
	}
	return fmt.Errorf("outbox: unknown subcommand %q (want dead, retry or discard)", cmd)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a table row on one line: errors may carry stack traces.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
