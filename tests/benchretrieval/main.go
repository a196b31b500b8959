// Command benchretrieval measures retrieval quality and latency on LoCoMo
// (snap-research/locomo's data/locomo10.json, or five of its conversations,
// 999 questions, in locomo-dev.json; -data names the file) with
// the protocol of basic-memory-benchmarks:
//
//   - session granularity: one document per session, its turns as
//     "speaker: text" lines under the session date; the ground truth of a
//     question is the set of sessions named by its evidence ("D3:14" is
//     session 3);
//   - turn granularity: one document per dialogue turn ("speaker: text");
//     the ground truth is the set of evidence turns;
//   - recall@k is the share of a question's ground truth found in the top k,
//     averaged over all questions (adversarial ones included; a question
//     whose evidence names nothing usable counts as 0); MRR is 1/rank of
//     the first ground-truth hit in the top 10 (0 if none);
//   - latency is the time of one search call, query embedding included,
//     reported as p50/p95 over all questions, in wall-clock time and in CPU
//     time of the process (robust to other load on the machine).
//
// Each conversation is its own namespace and every question searches its
// conversation's namespace only. Three modes: text (BM25), vector (cosine
// over the offline embedder's vectors) and hybrid (RRF of both).
//
//	go run ./tests/benchretrieval                 # markdown table
//	go run ./tests/benchretrieval -data path/to/locomo-dev.json
//	go run ./tests/benchretrieval -via index -misses 2>misses.txt   # what the top 5 missed
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/embed"
)

func main() {
	data := flag.String("data", "", "path of the LoCoMo JSON, e.g. locomo10.json (default: $VP_LOCOMO, else shared/bench/locomo-dev.json next to the repository)")
	gran := flag.String("granularity", "session,turn", "granularities to run: session, turn")
	modes := flag.String("modes", "text,vector,hybrid", "modes to run: text, vector, hybrid")
	verbose := flag.Bool("v", false, "print progress")
	via := flag.String("via", "memory", "memory: store and search through the memory service (the tools' code path); index: straight to search/local")
	misses := flag.Bool("misses", false, "print to stderr each question whose top 5 lacks part of its ground truth")
	embName := flag.String("embedder", "", "offline embedder: local-concept-v1 (default) or local-hash-v1, optionally /dimension")
	vw := flag.Float64("vector-weight", 0, "with -via index: weight of the vector ranking in hybrid fusion (default: the embedder's, embed.FusionWeight)")
	flag.Parse()
	emb, err := app.LocalEmbedder(*embName)
	if err == nil {
		err = run(context.Background(), *data, split(*gran), split(*modes), *via, emb, *vw, *verbose, *misses)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchretrieval:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func run(ctx context.Context, dataPath string, grans, modes []string, via string, emb embed.Embedder, vectorWeight float64, verbose, misses bool) error {
	path, err := findData(dataPath)
	if err != nil {
		return err
	}
	convs, err := load(path)
	if err != nil {
		return err
	}
	nq := 0
	for _, c := range convs {
		nq += len(c.QA)
	}
	fmt.Printf("LoCoMo dev: %d conversations, %d questions (%s); stored via %s; embedder %s\n\n", len(convs), nq, path, via, emb.Name())
	var storeLat []time.Duration
	fmt.Println("| granularity | docs | mode | recall@5 | recall@10 | MRR | p50 ms | p95 ms | cpu p50 ms | cpu p95 ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, g := range grans {
		docs, err := buildDocs(convs, g)
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "benchretrieval-")
		if err != nil {
			return err
		}
		var b backend
		switch via {
		case "memory":
			b, err = openMemoryBackend(ctx, dir, emb)
		case "index":
			b, err = openIndexBackend(ctx, dir, emb, vectorWeight)
		default:
			err = fmt.Errorf("-via %q: want memory or index", via)
		}
		if err != nil {
			return err
		}
		start := time.Now()
		if err := b.store(ctx, docs); err != nil {
			return err
		}
		if mb, ok := b.(*memoryBackend); ok {
			storeLat = append(storeLat, mb.storeLat...)
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "%s: stored %d documents (and their vectors) in %v\n", g, len(docs), time.Since(start))
		}
		for _, m := range modes {
			res, err := evaluate(ctx, b, convs, g, m, misses)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %d | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f |\n",
				g, len(docs), m, res.recall5, res.recall10, res.mrr, ms(res.p50), ms(res.p95), ms(res.cpu50), ms(res.cpu95))
		}
		_ = b.close()
		_ = os.RemoveAll(dir)
	}
	if len(storeLat) > 0 {
		sort.Slice(storeLat, func(i, j int) bool { return storeLat[i] < storeLat[j] })
		fmt.Printf("\nstore_memory (memory service, SQLite synchronous=NORMAL, embedding excluded): n=%d p50 %.2f ms, p95 %.2f ms\n",
			len(storeLat), ms(storeLat[len(storeLat)/2]), ms(storeLat[len(storeLat)*95/100]))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// findData locates the LoCoMo data: the flag, else $VP_LOCOMO, else
// shared/bench/locomo-dev.json in a folder next to the repository (where
// this project's checkouts keep it).
func findData(flagPath string) (string, error) {
	if flagPath == "" {
		flagPath = os.Getenv("VP_LOCOMO")
	}
	if flagPath != "" {
		if _, err := os.Stat(flagPath); err != nil {
			return "", fmt.Errorf("-data: %w", err)
		}
		return flagPath, nil
	}
	var cands []string
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			cands = append(cands, filepath.Join(d, "..", "shared", "bench", "locomo-dev.json"))
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil || d == filepath.Dir(d) {
				break
			}
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			return filepath.Clean(c), nil
		}
	}
	return "", errors.New("no LoCoMo data: download data/locomo10.json from https://github.com/snap-research/locomo " +
		"(CC BY-NC 4.0; ten conversations, the README's figures are on five of them) and run " +
		"make bench-retrieval ARGS='-data path/to/locomo10.json' (or set VP_LOCOMO)")
}

// conversation is one LoCoMo sample.
type conversation struct {
	ID       string
	Sessions []session
	QA       []question
}

type session struct {
	N     int
	Date  string
	Turns []turn
}

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type question struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

func load(path string) ([]conversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []question                 `json:"qa"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []conversation
	for _, s := range samples {
		c := conversation{ID: s.SampleID, QA: s.QA}
		for k, v := range s.Conversation {
			m := sessionKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			var ss session
			ss.N = n
			if err := json.Unmarshal(v, &ss.Turns); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.SampleID, k, err)
			}
			if d, ok := s.Conversation[k+"_date_time"]; ok {
				_ = json.Unmarshal(d, &ss.Date)
			}
			c.Sessions = append(c.Sessions, ss)
		}
		sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].N < c.Sessions[j].N })
		out = append(out, c)
	}
	return out, nil
}

// doc is one benchmark document before it reaches the backend.
type doc struct {
	Conv  string
	ID    string
	Title string
	Text  string
}

func buildDocs(convs []conversation, gran string) ([]doc, error) {
	var docs []doc
	for _, c := range convs {
		for _, s := range c.Sessions {
			switch gran {
			case "session":
				var b strings.Builder
				fmt.Fprintf(&b, "Session %d, %s\n", s.N, s.Date)
				for _, t := range s.Turns {
					fmt.Fprintf(&b, "%s: %s\n", t.Speaker, t.Text)
				}
				docs = append(docs, doc{Conv: c.ID, ID: sessionID(c.ID, s.N), Text: b.String()})
			case "turn":
				for _, t := range s.Turns {
					docs = append(docs, doc{Conv: c.ID, ID: turnID(c.ID, t.DiaID),
						Text: t.Speaker + ": " + t.Text})
				}
			default:
				return nil, fmt.Errorf("unknown granularity %q (want session or turn)", gran)
			}
		}
	}
	return docs, nil
}

func sessionID(conv string, n int) string { return fmt.Sprintf("%s.s%d", conv, n) }
func turnID(conv, dia string) string      { return conv + "." + strings.ReplaceAll(dia, ":", "-") }

// evidenceRef reads evidence ids, tolerating the few malformed ones of the
// data set ("D8:6; D9:17", "D:11:26").
var evidenceRef = regexp.MustCompile(`D:?(\d+):(\d+)`)

// truth is the set of ground-truth document ids of a question.
func truth(conv string, q question, gran string) map[string]bool {
	out := map[string]bool{}
	for _, e := range q.Evidence {
		for _, m := range evidenceRef.FindAllStringSubmatch(e, -1) {
			s, _ := strconv.Atoi(m[1])
			if gran == "session" {
				out[sessionID(conv, s)] = true
			} else {
				out[turnID(conv, "D"+m[1]+":"+m[2])] = true
			}
		}
	}
	return out
}

type result struct {
	recall5, recall10, mrr float64
	p50, p95               time.Duration
	cpu50, cpu95           time.Duration
}

func evaluate(ctx context.Context, b backend, convs []conversation, gran, mode string, misses bool) (result, error) {
	var (
		r    result
		lat  []time.Duration
		cpu  []time.Duration
		n    int
		hits []string
		err  error
	)
	for _, c := range convs {
		for _, q := range c.QA {
			gt := truth(c.ID, q, gran)
			start, cstart := time.Now(), cpuTime()
			switch mode {
			case "text":
				hits, err = b.text(ctx, c.ID, q.Question, 10)
			case "vector":
				hits, err = b.vector(ctx, c.ID, q.Question, 10)
			case "hybrid":
				hits, err = b.hybrid(ctx, c.ID, q.Question, 10)
			default:
				return r, fmt.Errorf("unknown mode %q (want text, vector or hybrid)", mode)
			}
			lat = append(lat, time.Since(start))
			cpu = append(cpu, cpuTime()-cstart)
			if err != nil {
				return r, fmt.Errorf("%s %q: %w", mode, q.Question, err)
			}
			n++
			if len(gt) == 0 {
				continue
			}
			found5, found10 := 0, 0
			first := 0
			for i, id := range hits {
				if i >= 10 {
					break
				}
				if gt[id] {
					if i < 5 {
						found5++
					}
					found10++
					if first == 0 {
						first = i + 1
					}
				}
			}
			if misses && found5 < len(gt) {
				fmt.Fprintf(os.Stderr, "miss %s %s %d/%d category %d %q truth=%v hits=%v\n", gran, mode, found5, len(gt), q.Category, q.Question, keys(gt), hits)
			}
			r.recall5 += float64(found5) / float64(len(gt))
			r.recall10 += float64(found10) / float64(len(gt))
			if first > 0 {
				r.mrr += 1 / float64(first)
			}
		}
	}
	r.recall5 /= float64(n)
	r.recall10 /= float64(n)
	r.mrr /= float64(n)
	r.p50, r.p95 = pct(lat)
	r.cpu50, r.cpu95 = pct(cpu)
	return r, nil
}

// pct returns the 50th and 95th percentiles.
func pct(d []time.Duration) (p50, p95 time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], d[len(d)*95/100]
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
