package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const okfUsage = `vantagepeers okf — OKF bundles of a namespace (memories, briefing notes of that topic, tasks of that project)

  vantagepeers okf export   --namespace NS --out FILE|- [--tenant T]
  vantagepeers okf validate --in FILE|-
  vantagepeers okf import   --namespace NS --in FILE|- [--mode dry-run|merge|replace] [--tenant T]

A bundle is an OKF v0.2 folder packed as a deterministic .okf.tar.gz, with its lossless data
in data/*.jsonl and a checksummed data/manifest.json. import defaults to dry-run (what merge
would do, writing nothing); merge gives new ids and is idempotent; replace makes the namespace
hold exactly the bundle. The commands act as the data dir's owner (admin) in --tenant (default
"default"); validate reads no data dir. export and import also take --data-dir and --log-level.
`

// okfFlags are the flags of the okf subcommands.
type okfFlags struct{ ns, out, in, mode, tenant string }

// okfCommand exports, validates and imports bundles against the data dir,
// as the owner of the data dir: no size limit of a tool result applies.
func okfCommand() *command {
	var f okfFlags
	return &command{Name: "okf", Page: okfUsage,
		Synopsis: []string{"okf export --namespace NS --out F | validate --in F | import --namespace NS --in F [--mode M]"},
		Summary:  "vantagepeers okf help",
		Subs:     []string{"export", "validate", "import"},
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&f.ns, "namespace", "", "the namespace to export or import into")
			fs.StringVar(&f.out, "out", "", "export: the file to write (- for stdout)")
			fs.StringVar(&f.in, "in", "", "validate, import: the bundle file (- for stdin)")
			fs.StringVar(&f.mode, "mode", okfsvc.ModeDryRun, "import: dry-run, merge or replace")
			fs.StringVar(&f.tenant, "tenant", vp.DefaultTenant, "tenant id")
		},
		Run: func(ctx context.Context, e *env) error { return okfCmd(ctx, e, f) },
	}
}

func okfCmd(ctx context.Context, e *env, f okfFlags) error {
	cmd, ns, out, in, mode, tenant := e.sub, f.ns, f.out, f.in, f.mode, f.tenant
	if len(e.args) > 0 {
		return fmt.Errorf("okf %s: unexpected argument %q", cmd, e.args[0])
	}
	if !vp.ValidTenant(tenant) {
		return fmt.Errorf("okf %s: --tenant: %q is not a valid tenant id", cmd, tenant)
	}
	var data []byte
	if cmd != "export" {
		if in == "" {
			return fmt.Errorf("okf %s: --in is required (a .okf.tar.gz, or - for stdin)", cmd)
		}
		var err error
		if data, err = readInput(in, e.stdin); err != nil {
			return fmt.Errorf("okf %s: --in: %w", cmd, err)
		}
	}
	if cmd == "validate" {
		b, err := okf.Read("okf validate", bytes.NewReader(data), okf.DefaultLimits)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, okfsvc.ReportOf(b, len(data)))
	}
	if ns == "" {
		return fmt.Errorf("okf %s: --namespace is required", cmd)
	}
	if cmd == "export" && out == "" {
		return errors.New("okf export: --out is required (a file, or - for stdout)")
	}
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
	p := auth.MasterPrincipal(tenant)
	if cmd == "import" {
		res, err := a.OKF.WithMemoryBudget(cliOKFBudget()).Import(ctx, p, ns, mode, data)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, res)
	}
	res, err := a.OKF.Export(ctx, p, ns)
	if err != nil {
		return err
	}
	if out == "-" {
		_, err := e.stdout.Write(res.Data)
		return err
	}
	d, err := okfsvc.Deliver("okf export", res, p, out, true, nil)
	if err != nil {
		return err
	}
	return printJSON(e.stdout, d)
}

// cliOKFBudget is the memory budget of `vantagepeers okf import`: one call
// by the data dir's owner, which may hold a bundle as large as a file may
// be (its bytes, its text, its records and their remapped copy).
func cliOKFBudget() int64 { return okf.DefaultLimits.MaxCompressed + 4*okf.DefaultLimits.MaxTotal }

// okfDownloadTTL is how long a signed bundle download URL of `serve`
// works.
const okfDownloadTTL = 10 * time.Minute

// okfInlineMax is the largest bundle, as base64, that a tool result of
// `serve` carries; a larger one comes as a download URL. A variable so
// that the serve test needs no 4 MiB bundle, like servicesStore.
var okfInlineMax = okfsvc.MaxInlineBase64

// okfLinks returns the signer of bundle download URLs under base (the
// server's absolute URL). The signing key is the data dir's own, kept in
// the store like the cursor key, so that a link outlives a restart of the
// server for its few minutes.
func (a *app) okfLinks(ctx context.Context, base string) (*okfsvc.Links, error) {
	key, err := auth.EnsureKey(ctx, a.store, "okf-download")
	if err != nil {
		return nil, fmt.Errorf("okf download key: %w", err)
	}
	l := okfsvc.NewLinks(key, base, okfDownloadTTL)
	l.MaxInline = okfInlineMax
	return l, nil
}

// readInput reads a bundle of at most okf.DefaultLimits.MaxCompressed
// bytes: a larger file is refused before it is read; stdin is read one
// byte past the limit, which okf refuses.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(stdin, okf.DefaultLimits.MaxCompressed+1))
	}
	return okfsvc.ReadFile("okf", "--in", name, okf.DefaultLimits.MaxCompressed)
}
