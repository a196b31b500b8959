package okf

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ExportInput is what Write packs.
type ExportInput struct {
	Exporter  string // "vantagepeers/<version>"
	Origin    string
	Namespace string
	Memories  []vp.Memory
	Notes     []vp.BriefingNote
	Tasks     []vp.Task
}

// Write packs in as a bundle. The output depends on in alone: entities are
// sorted by id, tar entries by name, every header has the same mtime,
// owner and mode, and the gzip header carries no time or name.
func Write(w io.Writer, in ExportInput) (Manifest, error) {
	ms, ns, ts := slices.Clone(in.Memories), slices.Clone(in.Notes), slices.Clone(in.Tasks)
	slices.SortFunc(ms, func(a, b vp.Memory) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(ns, func(a, b vp.BriefingNote) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(ts, func(a, b vp.Task) int { return cmp.Compare(a.ID, b.ID) })

	var latest int64
	for _, m := range ms {
		latest = max(latest, m.CreationTime, m.UpdatedAt)
	}
	for _, n := range ns {
		latest = max(latest, n.CreatedAt, n.UpdatedAt)
	}
	for _, t := range ts {
		latest = max(latest, t.CreationTime, t.UpdatedAt)
	}
	at := time.UnixMilli(latest).UTC().Format(time.RFC3339)
	gen := generated{By: in.Exporter, At: at}

	files := map[string][]byte{}
	var err error
	if files[MemoriesPath], err = jsonl(ms); err != nil {
		return Manifest{}, err
	}
	if files[BriefingsPath], err = jsonl(ns); err != nil {
		return Manifest{}, err
	}
	if files[TasksPath], err = jsonl(ts); err != nil {
		return Manifest{}, err
	}
	inBundle := map[string]bool{}
	for _, m := range ms {
		inBundle[m.ID] = true
	}
	external := map[string]bool{}
	var index []indexEntry
	for _, m := range ms {
		p := uniquePath(files, "memories/"+segment(m.Type)+"/"+slug(m.Content, m.ID))
		files[p] = memoryMarkdown(m, gen)
		index = append(index, indexEntry{p, firstLine(m.Content), "memory"})
		for _, id := range MemoryRefs(m) {
			if !inBundle[id] {
				external[id] = true
			}
		}
	}
	for _, n := range ns {
		p := uniquePath(files, "briefings/"+segment(n.Topic)+"/"+slug(n.Title, n.ID))
		files[p] = noteMarkdown(n, gen)
		index = append(index, indexEntry{p, n.Title, "briefing"})
		for _, id := range n.LinkedMemoryIDs {
			if !inBundle[id] {
				external[id] = true
			}
		}
	}
	inTasks := map[string]bool{}
	for _, t := range ts {
		inTasks[t.ID] = true
	}
	for _, t := range ts {
		p := uniquePath(files, "tasks/"+segment(t.Status)+"/"+slug(t.Title, t.ID))
		files[p] = taskMarkdown(t, gen)
		index = append(index, indexEntry{p, t.Title, "task"})
		for _, id := range t.DependsOn {
			if !inTasks[id] {
				external[id] = true
			}
		}
	}
	counts := map[string]int{KindMemory: len(ms), KindBriefing: len(ns), KindTask: len(ts)}
	files[IndexPath] = indexMarkdown(in.Namespace, gen, counts, index)
	files[LogPath] = logMarkdown(gen, in.Namespace, counts)

	man := Manifest{
		Format: FormatID, SchemaVersion: SchemaVersion, OKFVersion: OKFVersion, Exporter: in.Exporter,
		Origin: in.Origin, Namespace: in.Namespace, GeneratedAt: at, Counts: counts,
		External: slices.Sorted(maps.Keys(external)), Files: map[string]string{},
	}
	for p, b := range files {
		man.Files[p] = digest(b)
	}
	mb, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	files[ManifestPath] = append(mb, '\n')
	return man, pack(w, files)
}

// epoch is every entry's mtime: a fixed instant, so that equal content
// gives equal bytes.
var epoch = time.Unix(0, 0).UTC()

func pack(w io.Writer, files map[string][]byte) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	// The zero gzip.Header has no name and no mtime; OS stays "unknown".
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		b := files[name]
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(b)), Mode: 0o644,
			ModTime: epoch, Uid: 0, Gid: 0, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// jsonl encodes one value per line, without HTML escaping (the content
// is read back byte for byte either way; this keeps it legible).
func jsonl[T any](vs []T) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// ---- Markdown

type generated struct{ By, At string }

// fm writes YAML front matter. Values are JSON literals, which YAML reads
// as the same scalars (double-quoted strings, numbers, booleans, flow
// sequences), so no YAML library is needed on either side.
type fm struct{ b strings.Builder }

func (f *fm) kv(k string, v any) {
	if v == nil {
		return
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	}
	j, _ := json.Marshal(v)
	fmt.Fprintf(&f.b, "%s: %s\n", k, j)
}

func (f *fm) generated(g generated) {
	by, _ := json.Marshal(g.By)
	at, _ := json.Marshal(g.At)
	fmt.Fprintf(&f.b, "generated: {by: %s, at: %s}\n", by, at)
}

func (f *fm) doc(title, body string) []byte {
	var out strings.Builder
	out.WriteString("---\n")
	out.WriteString(f.b.String())
	out.WriteString("---\n\n")
	if title != "" {
		out.WriteString("# " + oneLine(title) + "\n\n")
	}
	out.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		out.WriteString("\n")
	}
	return []byte(out.String())
}

func ms(v int64) string {
	if v == 0 {
		return ""
	}
	return time.UnixMilli(v).UTC().Format(time.RFC3339Nano)
}

func memoryMarkdown(m vp.Memory, g generated) []byte {
	var f fm
	f.kv("type", m.Type)
	f.kv("id", m.ID)
	f.kv("title", firstLine(m.Content))
	f.kv("namespace", m.Namespace)
	status := "stable"
	if !m.IsLatest {
		status = "deprecated"
	}
	f.kv("status", status)
	f.kv("created", ms(m.CreationTime))
	f.kv("updated", ms(m.UpdatedAt))
	f.kv("author", m.CreatedBy)
	f.kv("superseded_by", m.SupersededBy)
	f.kv("stale_after", m.TTL)
	var rels []string
	for _, r := range m.Relations {
		rels = append(rels, r.Type+":"+r.TargetID)
	}
	f.kv("relations", rels)
	f.generated(g)
	body := m.Content
	if e := m.Episode; e != nil {
		body += fmt.Sprintf("\n\n## Episode\n\n- Context: %s\n- Goal: %s\n- Action: %s\n- Outcome: %s\n- Insight: %s\n- Severity: %s\n",
			oneLine(e.Context), oneLine(e.Goal), oneLine(e.Action), oneLine(e.Outcome), oneLine(e.Insight), e.Severity)
	}
	return f.doc("", body)
}

func noteMarkdown(n vp.BriefingNote, g generated) []byte {
	var f fm
	f.kv("type", "briefing")
	f.kv("id", n.ID)
	f.kv("title", n.Title)
	f.kv("topic", n.Topic)
	f.kv("status", "stable")
	f.kv("created", ms(n.CreatedAt))
	f.kv("updated", ms(n.UpdatedAt))
	f.kv("author", n.CreatedBy)
	f.kv("participants", n.Participants)
	f.kv("linked_memories", n.LinkedMemoryIDs)
	f.generated(g)
	body := n.Content
	if len(n.Decisions) > 0 {
		body += "\n\n## Decisions\n\n"
		for _, d := range n.Decisions {
			body += "- " + oneLine(d) + "\n"
		}
	}
	return f.doc(n.Title, body)
}

func taskMarkdown(t vp.Task, g generated) []byte {
	var f fm
	f.kv("type", "task")
	f.kv("id", t.ID)
	f.kv("title", t.Title)
	f.kv("status", t.Status)
	f.kv("priority", t.Priority)
	f.kv("assignee", t.AssignedTo)
	f.kv("project", t.Project)
	f.kv("tags", t.Tags)
	f.kv("depends_on", t.DependsOn)
	f.kv("created", ms(t.CreationTime))
	f.kv("updated", ms(t.UpdatedAt))
	f.kv("author", t.CreatedBy)
	f.generated(g)
	return f.doc(t.Title, t.Description)
}

type indexEntry struct{ path, title, kind string }

func indexMarkdown(ns string, g generated, counts map[string]int, es []indexEntry) []byte {
	var f fm
	f.kv("okf_version", OKFVersion)
	f.kv("type", "index")
	f.kv("title", "VantagePeers namespace "+ns)
	f.generated(g)
	var b strings.Builder
	fmt.Fprintf(&b, "%d memories, %d briefing notes, %d tasks. The lossless data is in data/ (see data/manifest.json).\n",
		counts[KindMemory], counts[KindBriefing], counts[KindTask])
	for _, kind := range []string{"memory", "briefing", "task"} {
		first := true
		for _, e := range es {
			if e.kind != kind {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n## %s\n\n", map[string]string{"memory": "Memories", "briefing": "Briefing notes", "task": "Tasks"}[kind])
				first = false
			}
			fmt.Fprintf(&b, "- [%s](%s)\n", strings.ReplaceAll(oneLine(e.title), "]", ")"), e.path)
		}
	}
	return f.doc("Namespace "+ns, b.String())
}

func logMarkdown(g generated, ns string, counts map[string]int) []byte {
	var f fm
	f.kv("type", "log")
	f.generated(g)
	day := g.At
	if len(day) >= 10 {
		day = day[:10]
	}
	body := fmt.Sprintf("## %s\n\n- Exported namespace %q by %s: %d memories, %d briefing notes, %d tasks (latest change %s).\n",
		day, ns, g.By, counts[KindMemory], counts[KindBriefing], counts[KindTask], g.At)
	return f.doc("Log", body)
}

// ---- paths

// segment makes a folder name of s: lower-case letters, digits and '-'.
func segment(s string) string {
	out := slugify(s, 40)
	if out == "" {
		return "other"
	}
	return out
}

// slug is a file name: a few words of text, then the entity id (unique).
func slug(text, id string) string {
	words := slugify(firstLine(text), 40)
	idPart := slugify(id, 60)
	if words == "" {
		return idPart + ".md"
	}
	return words + "--" + idPart + ".md"
}

func slugify(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_'
		if ok {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= n {
			break
		}
	}
	return b.String()
}

// uniquePath guards against two ids slugging alike.
func uniquePath(files map[string][]byte, p string) string {
	if _, taken := files[p]; !taken {
		return p
	}
	base := strings.TrimSuffix(p, ".md")
	for i := 2; ; i++ {
		q := fmt.Sprintf("%s-%d.md", base, i)
		if _, taken := files[q]; !taken {
			return q
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "# ")
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
