package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestOKFCommandHelpTouchesNoDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("VP_DATA_DIR", dir)
	for _, args := range [][]string{{"okf"}, {"okf", "help"}, {"okf", "--help"}, {"okf", "export", "--help"}, {"okf", "import", "-h"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
		// The bare command is a usage error; asking for help is not.
		if (err != nil && !errors.Is(err, flag.ErrHelp)) || !strings.Contains(out.String()+errb.String(), "vantagepeers okf export") {
			t.Fatalf("%v: %v\n%s%s", args, err, out.String(), errb.String())
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("%v created the data dir", args)
		}
	}
}

func TestOKFCommands(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := auth.MasterPrincipal(vp.DefaultTenant)
	const n = 4
	for i := range n {
		if _, err := a.Memory.StoreMemory(ctx, p, memory.StoreInput{Namespace: "proj/cli", Type: "fact", CreatedBy: "alice", Content: "cli fact " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	_ = a.Close()

	runOK := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(""), &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	file := filepath.Join(t.TempDir(), "cli.okf.tar.gz")
	var d okfsvc.Delivery
	if err := json.Unmarshal([]byte(runOK("okf", "export", "--namespace", "proj/cli", "--out", file)), &d); err != nil || d.Counts["memory"] != n || d.Path != file {
		t.Fatalf("export: %+v %v", d, err)
	}
	var rep okfsvc.Report
	if err := json.Unmarshal([]byte(runOK("okf", "validate", "--in", file)), &rep); err != nil || !rep.Valid || rep.Counts["memory"] != n {
		t.Fatalf("validate: %+v %v", rep, err)
	}
	var res okfsvc.ImportResult
	if err := json.Unmarshal([]byte(runOK("okf", "import", "--namespace", "proj/copy", "--in", file)), &res); err != nil || res.Mode != "dry-run" || res.Created["memory"] != n {
		t.Fatalf("import dry-run: %+v %v", res, err)
	}
	if err := json.Unmarshal([]byte(runOK("okf", "import", "--namespace", "proj/copy", "--in", file, "--mode", "merge")), &res); err != nil || res.Created["memory"] != n {
		t.Fatalf("import merge: %+v %v", res, err)
	}
	// The copy exports with the same content: same counts, and stdout works.
	if out := runOK("okf", "export", "--namespace", "proj/copy", "--out", "-"); !strings.HasPrefix(out, "\x1f\x8b") {
		t.Fatal("export to stdout is not gzip")
	}
	var errb bytes.Buffer
	err = run(ctx, []string{"okf", "import", "--namespace", "proj/copy", "--in", file, "--mode", "upsert", "--data-dir", dir}, strings.NewReader(""), &bytes.Buffer{}, &errb)
	if err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("bad mode: %v", err)
	}
}

// validate and import read a bundle file only up to the compressed limit:
// a larger file is refused before it is read, naming the limit.
func TestOKFCommandRefusesOversizeFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "huge.okf.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the test writes nothing; a reader that reads it all allocates 64 MiB.
	if err := f.Truncate(64<<20 + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	var out, errb bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = run(context.Background(), []string{"okf", "validate", "--in", file}, strings.NewReader(""), &out, &errb)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "67108864") {
		t.Fatalf("validate of a %d-byte file: %v; want a refusal naming the limit", 64<<20+1, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Fatalf("refusing a %d-byte file allocated %d bytes: it was read first", 64<<20+1, n)
	}
}
