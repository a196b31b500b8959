package okf

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Read reads and validates a bundle (.tar.gz): Scan, then Scanned.Read,
// without a budget between them. op names the caller in errors; every
// error is a *vp.Error whose field is the file (and line) at fault, or
// "bundle".
func Read(op string, r io.Reader, lim Limits) (*Bundle, error) {
	raw, err := io.ReadAll(io.LimitReader(r, lim.MaxCompressed+1))
	if err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, "bundle", "cannot be read: %v", err)
	}
	s, err := Scan(op, raw, lim)
	if err != nil {
		return nil, err
	}
	return s.Read()
}

// entryName refuses names that could escape the folder the bundle is
// extracted into, or mean different files on different systems.
func entryName(op, name string) (string, error) {
	shown := name
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	switch {
	case name == "":
		return "", vp.E(op, vp.KindInvalid, "bundle", "has an entry without a name")
	case !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\:") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }):
		return "", vp.Errorf(op, vp.KindInvalid, "bundle", "entry %q has a backslash, colon or control character in its name", shown)
	case strings.HasPrefix(name, "/"):
		return "", vp.Errorf(op, vp.KindInvalid, "bundle", "entry %q is an absolute path; entries are relative to the bundle folder", shown)
	}
	name = strings.TrimPrefix(name, "./")
	dir := strings.HasSuffix(name, "/")
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if seg == ".." {
			return "", vp.Errorf(op, vp.KindInvalid, "bundle", "entry %q leaves the bundle folder (../)", shown)
		}
		if seg == "" || seg == "." {
			return "", vp.Errorf(op, vp.KindInvalid, "bundle", "entry %q is not a clean path", shown)
		}
	}
	if clean := path.Clean(name); clean != strings.TrimSuffix(name, "/") {
		return "", vp.Errorf(op, vp.KindInvalid, "bundle", "entry %q is not a clean path", shown)
	}
	if dir {
		return name, nil
	}
	return name, nil
}

func readMachine(op string, c *content) (*Bundle, error) {
	var man Manifest
	dec := json.NewDecoder(bytes.NewReader(c.manifest))
	if err := dec.Decode(&man); err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, ManifestPath, "is not a valid manifest: %v", err)
	}
	c.manifest = nil // decoded: the text is no longer needed
	switch {
	case man.Format != FormatID:
		return nil, vp.Errorf(op, vp.KindInvalid, ManifestPath+": format", "is %q; this server reads %q", man.Format, FormatID)
	case man.SchemaVersion != SchemaVersion:
		return nil, vp.Errorf(op, vp.KindInvalid, ManifestPath+": schemaVersion", "is %d; this server reads schema version %d", man.SchemaVersion, SchemaVersion)
	case man.OKFVersion != OKFVersion:
		return nil, vp.Errorf(op, vp.KindInvalid, ManifestPath+": okfVersion", "is %q; this server reads OKF %q", man.OKFVersion, OKFVersion)
	}
	if err := vp.CheckNamespace(op, ManifestPath+": namespace", man.Namespace, true); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(c.digests)) {
		want, listed := man.Files[name]
		if !listed {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "is not listed in %s (files)", ManifestPath)
		}
		sum := c.digests[name]
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "checksum mismatch: sha256 is %s, the manifest says %s", got, want)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(man.Files)) {
		if _, ok := c.digests[name]; !ok {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "is listed in %s but missing from the tarball", ManifestPath)
		}
	}
	if err := checkMarkdown(op, c); err != nil {
		return nil, err
	}
	b := &Bundle{Manifest: man}
	var err error
	if b.Memories, err = decodeLines[vp.Memory](op, c.lines, MemoriesPath); err != nil {
		return nil, err
	}
	if b.Notes, err = decodeLines[vp.BriefingNote](op, c.lines, BriefingsPath); err != nil {
		return nil, err
	}
	if b.Tasks, err = decodeLines[vp.Task](op, c.lines, TasksPath); err != nil {
		return nil, err
	}
	for kind, n := range map[string]int{KindMemory: len(b.Memories), KindBriefing: len(b.Notes), KindTask: len(b.Tasks)} {
		if man.Counts[kind] != n {
			return nil, vp.Errorf(op, vp.KindInvalid, ManifestPath+": counts", "says %d %s entities; the data has %d", man.Counts[kind], kind, n)
		}
	}
	if err := b.checkEntities(op); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeLines reads a JSON Lines file strictly: an unknown field is an
// error (a newer schema), named with its file and line.
func decodeLines[T any](op string, files map[string][]byte, name string) ([]T, error) {
	data, ok := files[name]
	if !ok {
		return nil, vp.Errorf(op, vp.KindInvalid, name, "is missing (every bundle with a manifest has it, empty or not)")
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, vp.Errorf(op, vp.KindInvalid, fmt.Sprintf("%s:%d", name, line), "is not a valid record: %v", err)
		}
		if dec.More() {
			return nil, vp.Errorf(op, vp.KindInvalid, fmt.Sprintf("%s:%d", name, line), "holds more than one JSON value")
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, name, "cannot be read line by line: %v", err)
	}
	delete(files, name) // decoded: the text is no longer needed
	return out, nil
}

// checkEntities checks ids (present, unique) and references: every id an
// entity names is in the bundle or declared external in the manifest.
func (b *Bundle) checkEntities(op string) error {
	seen := map[string]string{}
	ext := map[string]bool{}
	for _, id := range b.Manifest.External {
		ext[id] = true
	}
	add := func(file string, i int, id string) error {
		where := fmt.Sprintf("%s:%d", file, i+1)
		if err := vp.CheckName(op, where+": _id", id, true); err != nil {
			return err
		}
		if prev, dup := seen[id]; dup {
			return vp.Errorf(op, vp.KindInvalid, where+": _id", "%q appears twice (first in %s)", id, prev)
		}
		seen[id] = where
		return nil
	}
	for i, m := range b.Memories {
		if err := add(MemoriesPath, i, m.ID); err != nil {
			return err
		}
		where := fmt.Sprintf("%s:%d", MemoriesPath, i+1)
		if !slices.Contains(vp.MemoryTypes, m.Type) {
			return vp.Errorf(op, vp.KindInvalid, where+": type", "%q is not a memory type; use one of %s", m.Type, strings.Join(vp.MemoryTypes, ", "))
		}
		if m.Namespace != b.Manifest.Namespace {
			return vp.Errorf(op, vp.KindInvalid, where+": namespace", "is %q; the manifest's namespace is %q", m.Namespace, b.Manifest.Namespace)
		}
	}
	for i, n := range b.Notes {
		if err := add(BriefingsPath, i, n.ID); err != nil {
			return err
		}
	}
	for i, t := range b.Tasks {
		if err := add(TasksPath, i, t.ID); err != nil {
			return err
		}
	}
	ids := b.ids()
	ref := func(where, field, id, kind string) error {
		if ext[id] || ids[id] == kind {
			return nil
		}
		return vp.Errorf(op, vp.KindInvalid, where+": "+field, "refers to %s %q, which is neither in the bundle nor listed in %s (external)", kind, id, ManifestPath)
	}
	for i, m := range b.Memories {
		where := fmt.Sprintf("%s:%d", MemoriesPath, i+1)
		for _, r := range m.Relations {
			if err := ref(where, "relations", r.TargetID, KindMemory); err != nil {
				return err
			}
		}
		if m.SupersededBy != "" {
			if err := ref(where, "supersededBy", m.SupersededBy, KindMemory); err != nil {
				return err
			}
		}
	}
	for i, n := range b.Notes {
		for _, id := range n.LinkedMemoryIDs {
			if err := ref(fmt.Sprintf("%s:%d", BriefingsPath, i+1), "linkedMemoryIds", id, KindMemory); err != nil {
				return err
			}
		}
	}
	for i, t := range b.Tasks {
		for _, id := range t.DependsOn {
			if err := ref(fmt.Sprintf("%s:%d", TasksPath, i+1), "dependsOn", id, KindTask); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMarkdown checks the OKF layer: the root index.md carries
// okf_version "0.2", and every other concept has a type. Only the
// concepts' heads were kept (content.heads).
func checkMarkdown(op string, c *content) error {
	front := func(name string) (map[string]string, error) {
		meta, _, err := frontMatter(c.heads[name])
		if err != nil && c.cut[name] {
			return nil, vp.Errorf(op, vp.KindTooLarge, name, "front matter is not closed within its first %d bytes (the limit)", MaxFrontMatter)
		}
		if err != nil {
			return nil, vp.Errorf(op, vp.KindInvalid, name, "%v", err)
		}
		return meta, nil
	}
	if _, ok := c.heads[IndexPath]; !ok {
		return vp.Errorf(op, vp.KindInvalid, IndexPath, "is missing: an OKF bundle has a root index.md carrying okf_version %q", OKFVersion)
	}
	meta, err := front(IndexPath)
	if err != nil {
		return err
	}
	if v := meta["okf_version"]; v != OKFVersion {
		return vp.Errorf(op, vp.KindInvalid, IndexPath+": okf_version", "is %q; this server reads OKF %q", v, OKFVersion)
	}
	for _, name := range slices.Sorted(maps.Keys(c.heads)) {
		if path.Base(name) == "index.md" || path.Base(name) == "log.md" {
			continue
		}
		meta, err := front(name)
		if err != nil {
			return err
		}
		if meta["type"] == "" {
			return vp.Errorf(op, vp.KindInvalid, name+": type", "is required in the front matter (OKF's one required key)")
		}
	}
	return nil
}
