package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

func TestOutboxCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// Two dead letters, as a server whose handler kept failing leaves them.
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vantagepeers.db")})
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := outbox.New(outbox.Options{Store: st, MaxAttempts: 1})
	_ = ob.Handle("github.comment", func(context.Context, outbox.Job) error {
		return errors.New("github: 404 Not Found\nrepository moved")
	})
	var ids []string
	for _, tenant := range []string{"acme", "beta"} {
		p, _ := ob.Enqueue(ctx, tenant, "github.comment", "issue-1", nil)
		if err := st.Write(ctx, p.Ops()...); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID())
	}
	if _, err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	runOK := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data-dir", dir), nil, &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	out := runOK("outbox", "dead")
	if !strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) || !strings.Contains(out, "github: 404 Not Found repository moved") {
		t.Fatalf("dead:\n%s", out)
	}
	if out := runOK("outbox", "dead", "--tenant", "beta"); strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) {
		t.Fatalf("dead --tenant beta:\n%s", out)
	}
	if out := runOK("outbox", "retry", ids[0]); !strings.Contains(out, "tenant acme") {
		t.Fatalf("retry: %s", out)
	}
	if out := runOK("outbox", "discard", ids[1], "--tenant", "beta"); !strings.Contains(out, "discarded") {
		t.Fatalf("discard: %s", out)
	}
	if out := runOK("outbox", "dead"); strings.Contains(out, ids[0]) || strings.Contains(out, ids[1]) {
		t.Fatalf("dead after retry and discard:\n%s", out)
	}
	var o, e bytes.Buffer
	for _, args := range [][]string{{"outbox", "retry", ids[1]}, {"outbox", "retry"}, {"outbox", "bogus"}} {
		if err := run(ctx, append(args, "--data-dir", dir), nil, &o, &e); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if err := run(ctx, []string{"outbox", "dead", "--data-dir", filepath.Join(dir, "none")}, nil, &o, &e); err == nil {
		t.Error("outbox dead on a missing data dir succeeded")
	}
}
