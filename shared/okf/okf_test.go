package okf_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func sample(n int) okf.ExportInput {
	in := okf.ExportInput{Exporter: "vantagepeers/test", Origin: "abc123", Namespace: "project/vp"}
	est := 30.0
	for i := range n {
		m := vp.Memory{ID: fmt.Sprintf("mem_%03d", i), CreationTime: int64(1_700_000_000_000 + i), Namespace: "project/vp",
			Type: vp.MemoryTypes[i%len(vp.MemoryTypes)], Content: fmt.Sprintf("Memory %d <b>&</b>\nsecond line", i),
			CreatedBy: "pi", IsLatest: true, UpdatedAt: int64(1_700_000_000_000 + i)}
		if m.Type == vp.MemoryTypeEpisode {
			m.Episode = &vp.Episode{Context: "c", Goal: "g", Action: "a", Outcome: "o", Insight: "i", Severity: "low"}
		}
		if i > 0 {
			m.Relations = []vp.Relation{{Type: vp.RelationReferences, TargetID: fmt.Sprintf("mem_%03d", i-1)}}
		}
		in.Memories = append(in.Memories, m)
		in.Notes = append(in.Notes, vp.BriefingNote{ID: fmt.Sprintf("brf_%03d", i), CreationTime: 5, Title: fmt.Sprintf("Note %d", i),
			Topic: "project/vp", Participants: []string{"pi"}, Content: "said", Decisions: []string{"ship"},
			LinkedMemoryIDs: []string{m.ID}, CreatedBy: "pi", CreatedAt: 5})
		t := vp.Task{ID: fmt.Sprintf("tsk_%03d", i), CreationTime: 7, Title: fmt.Sprintf("Task %d", i), Project: "project/vp",
			Tags: []string{"a"}, AssignedTo: "pi", Priority: "high", Status: vp.TaskTodo, CreatedBy: "pi", UpdatedAt: 8, EstimatedMinutes: &est}
		if i > 0 {
			t.DependsOn = []string{fmt.Sprintf("tsk_%03d", i-1)}
		}
		in.Tasks = append(in.Tasks, t)
	}
	return in
}

func write(t testing.TB, in okf.ExportInput) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := okf.Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func read(data []byte) (*okf.Bundle, error) {
	return okf.Read("test", bytes.NewReader(data), okf.DefaultLimits)
}

func TestWriteIsDeterministic(t *testing.T) {
	in := sample(12)
	a := write(t, in)
	// The same data in another order gives the same bytes.
	for i, j := 0, len(in.Memories)-1; i < j; i, j = i+1, j-1 {
		in.Memories[i], in.Memories[j] = in.Memories[j], in.Memories[i]
	}
	b := write(t, in)
	if !bytes.Equal(a, b) {
		t.Fatalf("two exports of the same data differ (%d vs %d bytes)", len(a), len(b))
	}
	// gzip header: no mtime (bytes 4..7), no name flag (byte 3).
	if a[3] != 0 || !bytes.Equal(a[4:8], []byte{0, 0, 0, 0}) {
		t.Fatalf("gzip header carries a name or time: % x", a[:10])
	}
	zr, _ := gzip.NewReader(bytes.NewReader(a))
	tr := tar.NewReader(zr)
	prev := ""
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Name <= prev || h.ModTime.Unix() != 0 || h.Uid != 0 || h.Gid != 0 || h.Mode != 0o644 {
			t.Fatalf("entry %q: order/mtime/owner/mode not fixed (%v %d %d %o)", h.Name, h.ModTime, h.Uid, h.Gid, h.Mode)
		}
		prev = h.Name
	}
}

func TestRoundTripIsLossless(t *testing.T) {
	in := sample(15)
	in.Memories[3].IsLatest, in.Memories[3].SupersededBy, in.Memories[3].SupersededAt = false, "mem_004", 99
	in.Memories[2].TTL, in.Memories[2].ExpiresAt = "2099-01-01T00:00:00Z", 4070908800000
	in.Memories[5].Embedder = "titan-v2"
	// Every optional field of a task, set.
	end, done, mins, due := int64(20), int64(30), 12.5, int64(99)
	tk := &in.Tasks[4]
	tk.Status, tk.Paused, tk.MissionID, tk.ActualMinutes, tk.ActualMinutesInferred = vp.TaskDone, true, "msn_1", &mins, true
	tk.StartedAt, tk.CompletedAt, tk.DueDate, tk.CompletionNote, tk.BlockedBy, tk.CancelReason = &end, &done, &due, "done", "x", "y"
	tk.AssignedToInstance, tk.WorkSegments = "pi-main", []vp.WorkSegment{{Start: 10, End: &end}, {Start: 25}}
	in.Notes[1].UpdatedAt, in.Notes[1].UpdatedBy = 9, "sigma"
	b, err := read(write(t, in))
	if err != nil {
		t.Fatal(err)
	}
	if b.Foreign() || len(b.Memories) != 15 || len(b.Notes) != 15 || len(b.Tasks) != 15 {
		t.Fatalf("read %d memories, %d notes, %d tasks; want 15 each", len(b.Memories), len(b.Notes), len(b.Tasks))
	}
	if !reflect.DeepEqual(b.Memories, in.Memories) || !reflect.DeepEqual(b.Notes, in.Notes) || !reflect.DeepEqual(b.Tasks, in.Tasks) {
		t.Fatal("entities changed on the round trip")
	}
	if b.Manifest.Counts[okf.KindMemory] != 15 || b.Manifest.Namespace != "project/vp" || b.Manifest.Exporter != "vantagepeers/test" {
		t.Fatalf("manifest %+v", b.Manifest)
	}
}

func TestMarkdownLayerIsOKF(t *testing.T) {
	files := untar(t, write(t, sample(3)))
	idx := string(files["index.md"])
	if !strings.Contains(idx, "okf_version: \"0.2\"") || !strings.HasPrefix(idx, "---\n") {
		t.Fatalf("index.md:\n%s", idx)
	}
	if !strings.Contains(string(files["log.md"]), "## 2023-11-14") {
		t.Fatalf("log.md has no dated entry:\n%s", files["log.md"])
	}
	n := 0
	for name, b := range files {
		if strings.HasPrefix(name, "memories/") {
			n++
			s := string(b)
			if !strings.Contains(s, "\ntype: \"") || !strings.Contains(s, "generated: {by: \"vantagepeers/test\", at: \"") || !strings.Contains(s, "status: \"stable\"") {
				t.Fatalf("%s front matter:\n%s", name, s)
			}
		}
	}
	if n != 3 {
		t.Fatalf("%d memory files, want 3", n)
	}
	for _, p := range []string{"memories/fact/", "briefings/project-vp/", "tasks/todo/", "data/memories.jsonl", "data/manifest.json"} {
		found := false
		for name := range files {
			found = found || strings.HasPrefix(name, p)
		}
		if !found {
			t.Errorf("no entry under %s", p)
		}
	}
}

func untar(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		out[h.Name] = b.Bytes()
	}
	return out
}

type entry struct {
	h    tar.Header
	body []byte
}

// tarball packs entries as given (no checks): the reader's adversary.
func tarball(t testing.TB, es ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		h := e.h
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

func file(name, body string) entry { return entry{h: tar.Header{Name: name}, body: []byte(body)} }

// rewrite unpacks a valid bundle, lets edit change its files, fixes the
// manifest's checksums unless keepSums, and packs it again.
func rewrite(t *testing.T, edit func(files map[string][]byte), keepSums bool) []byte {
	t.Helper()
	files := untar(t, write(t, sample(3)))
	edit(files)
	if !keepSums {
		var man map[string]any
		if err := json.Unmarshal(files[okf.ManifestPath], &man); err != nil {
			t.Fatal(err)
		}
		sums := map[string]any{}
		for name, b := range files {
			if name != okf.ManifestPath {
				s := sha256.Sum256(b)
				sums[name] = hex.EncodeToString(s[:])
			}
		}
		man["files"] = sums
		files[okf.ManifestPath], _ = json.Marshal(man)
	}
	var es []entry
	for name, b := range files {
		es = append(es, entry{h: tar.Header{Name: name}, body: b})
	}
	return tarball(t, es...)
}

func setManifest(key string, v any) func(map[string][]byte) {
	return func(files map[string][]byte) {
		var man map[string]any
		_ = json.Unmarshal(files[okf.ManifestPath], &man)
		man[key] = v
		files[okf.ManifestPath], _ = json.Marshal(man)
	}
}

func TestReadRefuses(t *testing.T) {
	gzBomb := func() []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		// 32 MiB of zeros, about 32 KB compressed: 32 times the 1 MiB limit
		// below from a thirty-second of it is bomb enough, and cheap under -race.
		_ = tw.WriteHeader(&tar.Header{Name: "big.md", Size: 32 << 20, Mode: 0o644, Typeflag: tar.TypeReg})
		zero := make([]byte, 1<<20)
		for range 32 {
			_, _ = tw.Write(zero)
		}
		_ = tw.Close()
		_ = zw.Close()
		return buf.Bytes()
	}
	many := func() []byte {
		var es []entry
		for i := range 60 {
			es = append(es, file(fmt.Sprintf("c/%d.md", i), "---\ntype: note\n---\nx\n"))
		}
		return tarball(t, es...)
	}
	cases := []struct {
		name string
		data []byte
		lim  *okf.Limits
		want []string
	}{
		{"not gzip", []byte("hello"), nil, []string{"bundle", "not a gzip stream"}},
		{"traversal", tarball(t, file("../evil.md", "x")), nil, []string{"leaves the bundle folder (../)"}},
		{"inner traversal", tarball(t, file("a/../../evil.md", "x")), nil, []string{"leaves the bundle folder"}},
		{"absolute", tarball(t, file("/etc/passwd", "x")), nil, []string{"absolute path"}},
		{"backslash", tarball(t, file(`..\evil.md`, "x")), nil, []string{"backslash"}},
		{"symlink", tarball(t, entry{h: tar.Header{Name: "l.md", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}), nil, []string{"l.md", "is a link"}},
		{"hardlink", tarball(t, entry{h: tar.Header{Name: "h.md", Typeflag: tar.TypeLink, Linkname: "index.md"}}), nil, []string{"h.md", "is a link"}},
		{"device", tarball(t, entry{h: tar.Header{Name: "dev", Typeflag: tar.TypeChar}}), nil, []string{"dev", "device"}},
		{"duplicate", tarball(t, file("a.md", "---\ntype: note\n---\nx"), file("a.md", "---\ntype: note\n---\ny")), nil, []string{"a.md", "appears twice"}},
		{"per-file size", tarball(t, file("a.md", strings.Repeat("x", 2000))), &okf.Limits{MaxCompressed: 1 << 20, MaxTotal: 1 << 20, MaxFile: 1000, MaxEntries: 10}, []string{"a.md", "limit per file is 1000"}},
		{"entry count", many(), &okf.Limits{MaxCompressed: 1 << 20, MaxTotal: 1 << 20, MaxFile: 1000, MaxEntries: 50}, []string{"over 50 entries"}},
		{"compressed size", many(), &okf.Limits{MaxCompressed: 100, MaxTotal: 1 << 20, MaxFile: 1000, MaxEntries: 100}, []string{"over 100 bytes compressed"}},
		{"gzip bomb", gzBomb(), &okf.Limits{MaxCompressed: 10 << 20, MaxTotal: 1 << 20, MaxFile: 1 << 30, MaxEntries: 10}, []string{"decompresses to over 1048576 bytes"}},
		{"checksum", rewrite(t, func(f map[string][]byte) { f["index.md"] = append(f["index.md"], '!') }, true), nil, []string{"index.md", "checksum mismatch"}},
		{"unlisted file", rewrite(t, func(f map[string][]byte) { f["extra.md"] = []byte("---\ntype: note\n---\n") }, true), nil, []string{"extra.md", "not listed"}},
		{"schema version", rewrite(t, setManifest("schemaVersion", 2), false), nil, []string{"schemaVersion", "is 2", "reads schema version 1"}},
		{"format", rewrite(t, setManifest("format", "other"), false), nil, []string{"format", "\"other\""}},
		{"counts", rewrite(t, setManifest("counts", map[string]int{"memory": 9, "briefing": 3, "task": 3}), false), nil, []string{"counts", "says 9 memory"}},
		{"jsonl line", rewrite(t, func(f map[string][]byte) {
			f[okf.TasksPath] = append(f[okf.TasksPath], []byte("{not json\n")...)
		}, false), nil, []string{"data/tasks.jsonl:4", "not a valid record"}},
		{"unknown field", rewrite(t, func(f map[string][]byte) {
			f[okf.MemoriesPath] = bytes.Replace(f[okf.MemoriesPath], []byte(`{"_id"`), []byte(`{"secret":1,"_id"`), 1)
		}, false), nil, []string{"data/memories.jsonl:1", "unknown field"}},
		{"duplicate id", rewrite(t, func(f map[string][]byte) {
			lines := bytes.SplitAfter(f[okf.TasksPath], []byte("\n"))
			f[okf.TasksPath] = bytes.Join([][]byte{lines[0], lines[1], lines[0]}, nil)
		}, false), nil, []string{"data/tasks.jsonl:3: _id", "appears twice"}},
		{"dangling", rewrite(t, func(f map[string][]byte) {
			f[okf.TasksPath] = bytes.Replace(f[okf.TasksPath], []byte(`"dependsOn":["tsk_000"]`), []byte(`"dependsOn":["tsk_zzz"]`), 1)
		}, false), nil, []string{"data/tasks.jsonl:2: dependsOn", "tsk_zzz", "neither in the bundle"}},
		{"no okf_version", rewrite(t, func(f map[string][]byte) {
			f["index.md"] = bytes.Replace(f["index.md"], []byte(`okf_version: "0.2"`), []byte(`okf_version: "9"`), 1)
		}, false), nil, []string{"index.md: okf_version", "\"9\""}},
		{"concept without type", rewrite(t, func(f map[string][]byte) { f["extra.md"] = []byte("---\ntitle: x\n---\nbody") }, false), nil, []string{"extra.md: type", "required"}},
		{"foreign without type", tarball(t, file("a.md", "---\ntitle: x\n---\nbody")), nil, []string{"a.md: type", "required"}},
		{"foreign without front matter", tarball(t, file("a.md", "# hi")), nil, []string{"a.md", "no YAML front matter"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := okf.DefaultLimits
			if c.lim != nil {
				lim = *c.lim
			}
			_, err := okf.Read("test", bytes.NewReader(c.data), lim)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestReadForeign(t *testing.T) {
	data := tarball(t,
		file("index.md", "---\nokf_version: \"0.2\"\ntype: index\n---\n# Root\n"),
		file("log.md", "---\ntype: log\n---\n## 2026-01-01\n- made\n"),
		file("concepts/db.md", "---\ntype: decision\nstatus: stable\nunknown_key: [1, 2]\n---\n\n# Use Postgres\n\nWe chose Postgres.\n"),
		file("concepts/term.md", "---\ntype: glossary\ntitle: 'Widget''s term'\n---\nA widget is a thing.\n"),
		file("notes/readme.txt", "not markdown"),
	)
	b, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Foreign() || len(b.Docs) != 2 {
		t.Fatalf("foreign=%v docs=%+v", b.Foreign(), b.Docs)
	}
	d := b.Docs[0]
	if d.Type != "decision" || d.Title != "Use Postgres" || d.Body != "We chose Postgres.\n" || d.Meta["status"] != "stable" {
		t.Fatalf("doc %+v", d)
	}
	if d := b.Docs[1]; d.Title != "Widget's term" || okf.ForeignMemoryType(d.Type) != "fact" {
		t.Fatalf("doc %+v", d)
	}
}

// FuzzRead: whatever the bytes, Read returns a bundle or an error, never
// panics, and a bundle it accepts is one it accepts again once rewritten.
func FuzzRead(f *testing.F) {
	f.Add(write(f, sample(2)))
	f.Add(tarball(f, file("a.md", "---\ntype: note\n---\nx")))
	f.Add([]byte{0x1f, 0x8b})
	lim := okf.Limits{MaxCompressed: 1 << 20, MaxTotal: 4 << 20, MaxFile: 1 << 20, MaxEntries: 100}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := okf.Read("fuzz", bytes.NewReader(data), lim)
		if err != nil || b.Foreign() {
			return
		}
		var buf bytes.Buffer
		if _, err := okf.Write(&buf, okf.ExportInput{Exporter: b.Manifest.Exporter, Origin: b.Manifest.Origin,
			Namespace: b.Manifest.Namespace, Memories: b.Memories, Notes: b.Notes, Tasks: b.Tasks}); err != nil {
			t.Fatal(err)
		}
		if _, err := okf.Read("fuzz", &buf, okf.DefaultLimits); err != nil {
			t.Fatalf("an accepted bundle, rewritten, is refused: %v", err)
		}
	})
}
