package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type exportOKFIn struct {
	Namespace string `json:"namespace"`
	Path      string `json:"path,omitempty" jsonschema:"local server: write the .okf.tar.gz here"`
}

type validateOKFIn struct {
	Bundle string `json:"bundle,omitempty" jsonschema:"the .okf.tar.gz, base64"`
	Path   string `json:"path,omitempty" jsonschema:"local server: read it from this file"`
}

type importOKFIn struct {
	Namespace string `json:"namespace" jsonschema:"target"`
	Mode      string `json:"mode,omitempty" jsonschema:"dry-run (default)|merge|replace"`
	Bundle    string `json:"bundle,omitempty" jsonschema:"base64"`
	Path      string `json:"path,omitempty" jsonschema:"local server: a file"`
}

// maxPathBytes is PATH_MAX on Linux.
const maxPathBytes = 4096

// pathLimit bounds a bundle's local path; bundleLimits a bundle given
// inline (base64) or by path.
var (
	pathLimit    = vp.MaxBytes("path", maxPathBytes)
	bundleLimits = vp.Limits{vp.MaxBytes("bundle", okfsvc.MaxInlineBase64), pathLimit}
)

// addOKFTools registers the OKF bundle tools (platform spec §14.8) when
// the service is set. A file path is accepted on a local (stdio) server
// only; over HTTP a bundle too large to travel inline comes as a signed
// download URL (Options.OKFLinks). A bundle sent inline is read with the
// inline limits (64 MiB in all), within the service's memory budget.
// OKFTools are the OKF bundle tools over o; links, when set, signs the
// download URLs of bundles too large for a result (HTTP). None when o is
// nil.
func OKFTools(o *okfsvc.Service, links *okfsvc.Links) Toolset {
	if o == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addOKFTools(m, o, links) }}
}

func (s *server) addOKFTools(m *mcp.Server, o *okfsvc.Service, links *okfsvc.Links) {
	local := s.opts.LocalPrincipal != nil
	add(s, m, tool{Name: "export_okf_bundle", Title: "Export OKF bundle", Annotations: readOnly, Limits: pathLimit,
		Description: "Export a namespace (memories, briefing notes of that topic, tasks of that project) as an OKF v0.2 .okf.tar.gz: base64 up to 4 MiB, else downloadUrl or path. Example: {\"namespace\":\"project/vp\"}"},
		func(ctx context.Context, p vp.Principal, in exportOKFIn) (okfsvc.Delivery, error) {
			r, err := o.Export(ctx, p, in.Namespace)
			if err != nil {
				return okfsvc.Delivery{}, err
			}
			return okfsvc.Deliver("export_okf_bundle", r, p, in.Path, local, links)
		})
	add(s, m, tool{Name: "validate_okf_bundle", Title: "Validate OKF bundle", Annotations: readOnly, Limits: bundleLimits,
		Description: "Check an OKF bundle (format, checksums, references, limits) without writing: its counts or the first problem. Example: {\"bundle\":\"H4sI...\"}"},
		func(ctx context.Context, p vp.Principal, in validateOKFIn) (okfsvc.Report, error) {
			r, err := okfsvc.Receive("validate_okf_bundle", in.Bundle, in.Path, local, o.Limits())
			if err != nil {
				return okfsvc.Report{}, err
			}
			return o.ValidateReceived(ctx, p, r)
		})
	add(s, m, tool{Name: "import_okf_bundle", Title: "Import OKF bundle", Annotations: destructive,
		Limits:      []any{vp.MaxBytes("mode", vp.MaxNameBytes), bundleLimits},
		Description: "Import an OKF bundle into a namespace under new ids (returns idMap); mode dry-run, merge (idempotent) or replace (the namespace becomes the bundle). Example: {\"namespace\":\"project/copy\",\"mode\":\"merge\",\"bundle\":\"H4sI...\"}"},
		func(ctx context.Context, p vp.Principal, in importOKFIn) (okfsvc.ImportResult, error) {
			r, err := okfsvc.Receive("import_okf_bundle", in.Bundle, in.Path, local, o.Limits())
			if err != nil {
				return okfsvc.ImportResult{}, err
			}
			return o.ImportReceived(ctx, p, in.Namespace, in.Mode, r)
		})
}
