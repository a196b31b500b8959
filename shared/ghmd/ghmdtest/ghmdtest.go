// Package ghmdtest parses what the bot posts to GitHub as GitHub-flavoured
// Markdown (goldmark with its GFM extensions: tables, autolinks of bare
// URLs and www., strikethrough, task lists) and reports what in it is live,
// for tests: links, images, autolinks, raw HTML, and the text outside code
// where GitHub would find @mentions and references. Only tests import it.
package ghmdtest

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Doc is what a Markdown document shows.
type Doc struct {
	// Links are the destinations of links, images and autolinks.
	Links []string
	// HTML is every raw HTML fragment (inline) and HTML block line.
	HTML []string
	// Text is the text outside code, each node's on its own line: where
	// GitHub looks for @mentions, #references and commit SHAs.
	Text string
	// Code is the content of each code span and code block.
	Code []string
	// Blocks are the kinds of the top-level blocks, in order
	// ("Paragraph", "FencedCodeBlock", "Table", …).
	Blocks []string
	// Tables are the tables' rows (header first), each a list of its
	// cells' text (code included).
	Tables [][][]string
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Parse parses src.
func Parse(src string) Doc {
	b := []byte(src)
	root := md.Parser().Parse(text.NewReader(b))
	var d Doc
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		d.Blocks = append(d.Blocks, c.Kind().String())
	}
	var txt strings.Builder
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			d.Links = append(d.Links, string(n.Destination))
		case *ast.Image:
			d.Links = append(d.Links, string(n.Destination))
		case *ast.AutoLink:
			d.Links = append(d.Links, string(n.URL(b)))
		case *ast.RawHTML:
			var s strings.Builder
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				s.Write(seg.Value(b))
			}
			d.HTML = append(d.HTML, s.String())
		case *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				d.HTML = append(d.HTML, strings.TrimRight(string(seg.Value(b)), "\n"))
			}
			if n.HasClosure() {
				d.HTML = append(d.HTML, strings.TrimRight(string(n.ClosureLine.Value(b)), "\n"))
			}
		case *ast.CodeSpan:
			d.Code = append(d.Code, nodeText(n, b))
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			var s strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				s.Write(seg.Value(b))
			}
			d.Code = append(d.Code, s.String())
		case *extast.Table:
			var rows [][]string
			for r := n.FirstChild(); r != nil; r = r.NextSibling() {
				var cells []string
				for c := r.FirstChild(); c != nil; c = c.NextSibling() {
					cells = append(cells, nodeText(c, b))
				}
				rows = append(rows, cells)
			}
			d.Tables = append(d.Tables, rows)
		case *ast.Text:
			txt.Write(n.Segment.Value(b))
			txt.WriteByte('\n')
		case *ast.String:
			txt.Write(n.Value)
			txt.WriteByte('\n')
		}
		return ast.WalkContinue, nil
	})
	d.Text = txt.String()
	return d
}

// nodeText is the text of n's descendants, code spans' included.
func nodeText(n ast.Node, src []byte) string {
	var s strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			s.Write(c.Segment.Value(src))
		case *ast.String:
			s.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return s.String()
}

var mention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_/\x60])@[A-Za-z0-9]`)

// Mentions returns the @login mentions GitHub would find in text.
func Mentions(text string) []string { return mention.FindAllString(text, -1) }

var reference = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_&])#[0-9]|\bgh-[0-9]`)

// References returns the issue references ("#12", "owner/repo#12",
// "GH-12") GitHub would link in text.
func References(text string) []string { return reference.FindAllString(text, -1) }

// Marker matches the bot's hidden markers, the only HTML it writes besides
// the <details> of a raw log record.
var Marker = regexp.MustCompile(`^<!-- vantagepeers:[a-z0-9-]+(:[A-Za-z0-9_.-]+)+ -->$`)

// TrustedHTML reports whether an HTML fragment is one the bot composes.
func TrustedHTML(h string) bool {
	h = strings.TrimSpace(h)
	switch h {
	case "<details><summary>Raw log record</summary>", "</details>", "<details>", "<summary>", "</summary>":
		return true
	}
	return Marker.MatchString(h)
}

// Problems lists what is live in src beyond what the bot composes: every
// link, image or autolink, HTML other than TrustedHTML, @mentions and
// issue references in the text outside code, and any canary (a fragment of untrusted input) found
// in that text. Empty means src is inert.
func Problems(src string, canaries ...string) []string {
	d := Parse(src)
	var out []string
	for _, l := range d.Links {
		out = append(out, "link: "+l)
	}
	for _, h := range d.HTML {
		if !TrustedHTML(h) {
			out = append(out, "html: "+h)
		}
	}
	for _, m := range Mentions(d.Text) {
		out = append(out, "mention: "+m)
	}
	for _, r := range References(d.Text) {
		out = append(out, "reference: "+r)
	}
	for _, c := range canaries {
		if c != "" && strings.Contains(d.Text, c) {
			out = append(out, "canary outside code: "+c)
		}
	}
	return out
}
