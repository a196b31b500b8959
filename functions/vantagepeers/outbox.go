package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

const outboxUsage = `vantagepeers outbox — the side effects that failed for good (dead letters)

  vantagepeers outbox dead [--tenant T] [--limit N]   list them, oldest first
  vantagepeers outbox retry ID [--tenant T]           deliver one again, attempts reset
  vantagepeers outbox discard ID [--tenant T]         delete one: its effect will not happen

Every command also takes --data-dir and --log-level.
`

// outboxCmd administers the outbox of the data dir. It opens the store
// alone, not the whole app: it must work while the server runs (SQLite
// serialises the writers of both processes) and must not initialise a data
// dir that does not exist.
func outboxCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, outboxUsage)
		return flag.ErrHelp
	}
	cmd := args[0]
	fs := flag.NewFlagSet("outbox "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	tenant := fs.String("tenant", "", "tenant id (default: every tenant; for retry and discard, found from the id)")
	limit := fs.Int("limit", 100, "at most this many dead letters")
	// The id may come before or after the flags.
	var pos []string
	rest := args[1:]
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	pos = append(pos, fs.Args()...)
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	path := filepath.Join(c.dataDir, "vantagepeers.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("outbox: no data at %s (--data-dir or VP_DATA_DIR): %w", c.dataDir, err)
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		return err
	}
	defer st.Close()
	ob, err := outbox.New(outbox.Options{Store: st, Logger: log})
	if err != nil {
		return err
	}
	oneID := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("outbox %s: give one job id (see: vantagepeers outbox dead)", cmd)
		}
		return pos[0], nil
	}
	switch cmd {
	case "dead":
		dead, err := ob.DeadLetters(ctx, outbox.DeadQuery{Tenant: *tenant, Limit: *limit})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
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
		var e outbox.Entry
		if cmd == "retry" {
			e, err = ob.Retry(ctx, *tenant, id)
		} else {
			e, err = ob.Discard(ctx, *tenant, id)
		}
		if err != nil {
			return err
		}
		verb := map[string]string{"retry": "queued again, due now (the next drain of an outbox worker delivers it)", "discard": "discarded"}[cmd]
		fmt.Fprintf(stdout, "%s %s (tenant %s, topic %s): %s\n", cmd, e.ID, e.Tenant, e.Topic, verb)
		return nil
	}
	fmt.Fprint(stderr, outboxUsage)
	return errors.New("outbox: unknown subcommand " + fmt.Sprintf("%q", cmd) + " (want dead, retry or discard)")
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
