package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// dirState lists a folder's files with their sizes and times.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d %v\n", p, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestErrorsGroupStartsFromADeploymentsStoredTemplates: with --deployment,
// errors group starts from the templates the monitor stored for that
// deployment in the data dir: a fourth user name merges into the group of
// the three stored, as the monitor's next scan would; without it, from
// the empty state, it is a group of its own. The data dir is not written.
func TestErrorsGroupStartsFromADeploymentsStoredTemplates(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vantagepeers.db")})
	if err != nil {
		t.Fatal(err)
	}
	l := templates.New(templates.Options{})
	var alice string
	for k, u := range []string{"alice", "bob", "carol"} {
		r := l.Learn(source.Event{Function: "auth:login", Message: fmt.Sprintf("Invalid user %s from 10.0.0.%d", u, k)})
		if u == "alice" {
			alice = r.Key
		}
	}
	d, err := errormon.Deployments.Item("test", "default", errormon.Deployment{Name: "app", Source: errormon.SourceConvex, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	ops := []store.Op{store.Put(d, store.IfNotExists)}
	for _, b := range l.Changed() {
		it, err := errormon.TemplateBuckets.Item("test", "default", errormon.TemplateBucket{Deployment: "app", Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, store.Put(it, store.IfNotExists))
	}
	if err := st.Write(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)

	line := "Invalid user dave from 10.0.0.9\n"
	keys, tpls, _ := groupCmd(t, line, "--data-dir", dir, "--deployment", "app", "--function", "auth:login")
	if keys[0] != alice || tpls[0] != "Invalid user <*> from <ip>" {
		t.Errorf("from the stored state: %s %q, want alice's group %s and the learned template", keys[0], tpls[0], alice)
	}
	fresh, _, _ := groupCmd(t, line, "--data-dir", dir, "--function", "auth:login")
	if fresh[0] == alice {
		t.Errorf("without --deployment the state is the empty one, yet dave joined alice's group")
	}
	if after := dirState(t, dir); after != before {
		t.Errorf("the data dir changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	var out, errb strings.Builder
	err = run(ctx, []string{"errors", "group", "--data-dir", dir, "--deployment", "nope"}, strings.NewReader(line), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown deployment: %v, want an error naming it", err)
	}
}
