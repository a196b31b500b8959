package okf

import (
	"encoding/json"
	"errors"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// readForeign reads a bundle without a machine layer (written by another
// OKF tool): every Markdown concept but the reserved files is a Doc. Its
// type is the front matter's; the title is the front matter's, else the
// first heading; the body is the rest.
func readForeign(op string, files map[string][]byte) (*Bundle, error) {
	b := &Bundle{}
	if idx, ok := files[IndexPath]; ok {
		meta, _, err := frontMatter(idx)
		if err != nil {
			return nil, vp.Errorf(op, vp.KindInvalid, IndexPath, "%v", err)
		}
		if v := meta["okf_version"]; v != "" && !strings.HasPrefix(v, "0.") {
			return nil, vp.Errorf(op, vp.KindInvalid, IndexPath+": okf_version", "is %q; this server reads OKF 0.x bundles", v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		base := path.Base(name)
		if !strings.HasSuffix(name, ".md") || base == "index.md" || base == "log.md" {
			continue
		}
		meta, body, err := frontMatter(files[name])
		if err != nil {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "%v", err)
		}
		if meta["type"] == "" {
			return nil, vp.Errorf(op, vp.KindInvalid, name+": type", "is required in the front matter (OKF's one required key)")
		}
		title := meta["title"]
		body = strings.TrimLeft(body, "\n")
		if h, rest, ok := strings.Cut(body, "\n"); ok || strings.HasPrefix(body, "# ") {
			if strings.HasPrefix(h, "# ") {
				if title == "" {
					title = strings.TrimSpace(h[2:])
				}
				body = strings.TrimLeft(rest, "\n")
			}
		}
		if strings.TrimSpace(body) == "" {
			body = title
		}
		if strings.TrimSpace(body) == "" {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "has no content and no title to import")
		}
		b.Docs = append(b.Docs, Doc{Path: name, Type: meta["type"], Title: title, Body: body, Meta: meta})
	}
	if len(b.Docs) == 0 {
		return nil, vp.E(op, vp.KindInvalid, "bundle", "has neither "+ManifestPath+" nor any Markdown concept: is it an OKF bundle?")
	}
	return b, nil
}

// frontMatter splits a Markdown file into its front matter's top-level
// scalar keys and its body. It reads the YAML subset OKF files use —
// "key: value" lines with plain, single- or double-quoted scalars; nested
// blocks, sequences and flow collections are kept as raw text — which is
// all this reader needs of a foreign file (type, title, status...).
func frontMatter(b []byte) (map[string]string, string, error) {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, "", errors.New("has no YAML front matter (an OKF concept starts with ---)")
	}
	rest := s[4:]
	var head, body string
	if rest == "---" || strings.HasPrefix(rest, "---\n") {
		body = strings.TrimPrefix(rest[3:], "\n")
	} else {
		end := strings.Index(rest, "\n---")
		if end < 0 {
			return nil, "", errors.New("front matter is not closed by a --- line")
		}
		head, body = rest[:end], rest[end+4:]
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		} else {
			body = ""
		}
	}
	meta := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '-' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		meta[strings.TrimSpace(k)] = scalar(strings.TrimSpace(v))
	}
	return meta, body, nil
}

func scalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			return s
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// ForeignMemoryType maps an OKF concept type onto a memory type: a memory
// type as such, a few common synonyms, else "note".
func ForeignMemoryType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if slices.Contains(vp.MemoryTypes, t) {
		return t
	}
	switch t {
	case "concept", "doc", "document", "page", "topic", "entity":
		return "note"
	case "howto", "how-to", "runbook", "playbook", "guide":
		return "procedure"
	case "adr", "decision-record":
		return "decision"
	case "glossary", "definition":
		return "fact"
	}
	return "note"
}
