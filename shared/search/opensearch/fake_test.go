package opensearch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// fake is an in-memory OpenSearch that implements just enough of the REST
// API for the adapter — index creation and mapping, search pipelines,
// _bulk (update with doc_as_upsert, delete), _search (bool + multi_match
// with BM25, knn with filter, hybrid through an RRF pipeline) — and that
// CHECKS every request against the documented query DSL: unknown
// endpoints, unknown query shapes, a search or k-NN query without the
// tenant filter, a bulk without refresh, a vector field used before its
// mapping... each fails the test.
type fake struct {
	t *testing.T

	mu        sync.Mutex
	index     string // created index name ("" before creation)
	settings  map[string]any
	props     map[string]map[string]any // field -> mapping
	pipelines map[string]map[string]any // name -> combination
	docs      map[string]map[string]any // _id -> _source
	requests  []recorded
}

type recorded struct {
	Method, Path, Query string
	Body                []byte
}

func newFake(t *testing.T) *fake {
	return &fake{t: t, props: map[string]map[string]any{}, pipelines: map[string]map[string]any{}, docs: map[string]map[string]any{}}
}

// last returns the recorded requests whose path ends with suffix.
func (f *fake) last(suffix string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.requests {
		if strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet && r.URL.Path == "/_nodes/_local/stats/jvm,breaker,thread_pool" {
		// opensearch-go polls a node's load every 5 s for its load
		// shedding, in the background: a healthy node's answer, kept out
		// of the requests the tests count.
		reply(w, 200, map[string]any{"_nodes": map[string]any{"total": 1, "successful": 1, "failed": 0}, "cluster_name": "fake",
			"nodes": map[string]any{"fake-node": map[string]any{"jvm": map[string]any{"mem": map[string]any{"heap_used_percent": 20}},
				"breakers": map[string]any{}, "thread_pool": map[string]any{}}}})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, body})
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		reply(w, 200, map[string]any{"version": map[string]any{"distribution": "opensearch", "number": "2.19.0"}})
	case r.Method == http.MethodHead && len(parts) == 1:
		if parts[0] == f.index {
			w.WriteHeader(200)
		} else {
			w.WriteHeader(404)
		}
	case r.Method == http.MethodPut && len(parts) == 1:
		f.createIndex(w, parts[0], body)
	case r.Method == http.MethodPut && len(parts) == 2 && parts[1] == "_mapping":
		f.putMapping(w, parts[0], body)
	case r.Method == http.MethodGet && len(parts) == 2 && parts[1] == "_mapping":
		if !f.checkIndex(w, parts[0]) {
			return
		}
		reply(w, 200, map[string]any{f.index: map[string]any{"mappings": map[string]any{"properties": f.props}}})
	case r.Method == http.MethodPut && len(parts) == 3 && parts[0] == "_search" && parts[1] == "pipeline":
		f.putPipeline(w, parts[2], body)
	case r.Method == http.MethodPost && len(parts) == 2 && parts[1] == "_bulk":
		f.bulk(w, r, parts[0], body)
	case (r.Method == http.MethodPost || r.Method == http.MethodGet) && len(parts) == 2 && parts[1] == "_search":
		f.search(w, r, parts[0], body)
	default:
		f.t.Errorf("fake OpenSearch: unexpected request %s %s", r.Method, r.URL.Path)
		fail(w, 400, "illegal_argument_exception", "unexpected request")
	}
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, typ, reason string) {
	reply(w, status, map[string]any{
		"error":  map[string]any{"root_cause": []any{map[string]any{"type": typ, "reason": reason}}, "type": typ, "reason": reason},
		"status": status,
	})
}

func (f *fake) checkIndex(w http.ResponseWriter, name string) bool {
	if name != f.index || f.index == "" {
		fail(w, 404, "index_not_found_exception", "no such index ["+name+"]")
		return false
	}
	return true
}

func (f *fake) createIndex(w http.ResponseWriter, name string, body []byte) {
	t := f.t
	if f.index != "" {
		fail(w, 400, "resource_already_exists_exception", "index ["+name+"] already exists")
		return
	}
	var b struct {
		Settings struct {
			Index    map[string]any `json:"index"`
			Analysis struct {
				Analyzer map[string]map[string]any `json:"analyzer"`
			} `json:"analysis"`
		} `json:"settings"`
		Mappings struct {
			Dynamic    string                    `json:"dynamic"`
			Properties map[string]map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Errorf("create index body: %v", err)
	}
	if b.Settings.Index["knn"] != true {
		t.Errorf("index.knn = %v, want true (k-NN fields need it)", b.Settings.Index["knn"])
	}
	for field, typ := range map[string]string{"tenant": "keyword", "id": "keyword", "kind": "keyword", "namespace": "keyword",
		"type": "keyword", "owner": "keyword", "title": "text", "text": "text", "created_at": "long", "expires_at": "long"} {
		p := b.Mappings.Properties[field]
		if p["type"] != typ {
			t.Errorf("mapping of %s = %v, want type %s", field, p, typ)
		}
		if typ == "text" {
			a, _ := p["analyzer"].(string)
			if _, ok := b.Settings.Analysis.Analyzer[a]; !ok {
				t.Errorf("field %s uses analyzer %q, not defined in settings.analysis", field, a)
			}
		}
	}
	for name, a := range b.Settings.Analysis.Analyzer {
		filters, _ := a["filter"].([]any)
		var fs []string
		for _, x := range filters {
			fs = append(fs, fmt.Sprint(x))
		}
		if a["tokenizer"] != "standard" || strings.Join(fs, ",") != "lowercase,asciifolding,porter_stem" {
			t.Errorf("analyzer %s = %v", name, a)
		}
	}
	f.index = name
	f.settings = b.Settings.Index
	f.props = b.Mappings.Properties
	reply(w, 200, map[string]any{"acknowledged": true, "shards_acknowledged": true, "index": name})
}

func (f *fake) putMapping(w http.ResponseWriter, name string, body []byte) {
	if !f.checkIndex(w, name) {
		return
	}
	var b struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Properties) == 0 {
		f.t.Errorf("put mapping body %s: %v", body, err)
	}
	for field, p := range b.Properties {
		if p["type"] != "knn_vector" {
			f.t.Errorf("mapping of %s: type %v, want knn_vector", field, p["type"])
		}
		dim, _ := p["dimension"].(float64)
		m, _ := p["method"].(map[string]any)
		if dim <= 0 || m["name"] != "hnsw" || m["space_type"] != "cosinesimil" || (m["engine"] != "lucene" && m["engine"] != "faiss") {
			f.t.Errorf("knn_vector mapping of %s = %v", field, p)
		}
		if old, ok := f.props[field]; ok && old["dimension"] != p["dimension"] {
			fail(w, 400, "illegal_argument_exception", fmt.Sprintf("mapper [%s] cannot be changed from dimension [%v] to [%v]", field, old["dimension"], p["dimension"]))
			return
		}
		f.props[field] = p
	}
	reply(w, 200, map[string]any{"acknowledged": true})
}

func (f *fake) putPipeline(w http.ResponseWriter, name string, body []byte) {
	var b struct {
		Processors []map[string]struct {
			Combination map[string]any `json:"combination"`
		} `json:"phase_results_processors"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Processors) != 1 {
		f.t.Errorf("pipeline body %s: %v", body, err)
		fail(w, 400, "parse_exception", "bad pipeline")
		return
	}
	p, ok := b.Processors[0]["score-ranker-processor"]
	if !ok || p.Combination["technique"] != "rrf" || p.Combination["rank_constant"] != 60.0 {
		f.t.Errorf("pipeline %s: want a score-ranker-processor with rrf and rank_constant 60, got %s", name, body)
	}
	if params, ok := p.Combination["parameters"].(map[string]any); ok {
		ws, _ := params["weights"].([]any)
		sum := 0.0
		for _, x := range ws {
			v := x.(float64)
			if v < 0 || v > 1 {
				f.t.Errorf("pipeline %s: weight %v outside [0, 1]", name, v)
			}
			sum += v
		}
		if len(ws) != 2 || math.Abs(sum-1) > 1e-9 {
			f.t.Errorf("pipeline %s: weights %v must be 2 and sum to 1", name, ws)
		}
	}
	f.pipelines[name] = p.Combination
	reply(w, 200, map[string]any{"acknowledged": true})
}

func (f *fake) bulk(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	t := f.t
	if !f.checkIndex(w, name) {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		t.Errorf("bulk Content-Type %q", ct)
	}
	if ref := r.URL.Query().Get("refresh"); ref != "wait_for" && ref != "true" {
		t.Errorf("bulk refresh=%q: writes must be searchable when they return", ref)
	}
	if len(body) == 0 || body[len(body)-1] != '\n' {
		t.Errorf("bulk body must end with a newline")
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("bulk line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	var items []any
	errs := false
	for i := 0; i < len(lines); i++ {
		if len(lines[i]) != 1 {
			t.Errorf("bulk action line %v: want one action", lines[i])
			continue
		}
		for action, meta := range lines[i] {
			id, _ := meta.(map[string]any)["_id"].(string)
			if id == "" {
				t.Errorf("bulk %s without _id", action)
			}
			switch action {
			case "update":
				i++
				item, bad := f.update(id, lines[i])
				errs = errs || bad
				items = append(items, map[string]any{"update": item})
			case "delete":
				item := map[string]any{"_index": f.index, "_id": id, "result": "deleted", "status": 200}
				if _, ok := f.docs[id]; !ok {
					item["result"], item["status"] = "not_found", 404
				}
				delete(f.docs, id)
				items = append(items, map[string]any{"delete": item})
			default:
				t.Errorf("bulk action %q: the adapter uses update and delete", action)
			}
		}
	}
	reply(w, 200, map[string]any{"took": 1, "errors": errs, "items": items})
}

func (f *fake) update(id string, line map[string]any) (map[string]any, bool) {
	doc, _ := line["doc"].(map[string]any)
	upsert, _ := line["doc_as_upsert"].(bool)
	item := map[string]any{"_index": f.index, "_id": id}
	for field := range doc {
		if _, ok := f.props[field]; !ok {
			item["status"] = 400
			item["error"] = map[string]any{"type": "strict_dynamic_mapping_exception", "reason": "mapping set to strict, dynamic introduction of [" + field + "] within [_doc] is not allowed"}
			return item, true
		}
		if f.props[field]["type"] == "knn_vector" {
			v, _ := doc[field].([]any)
			if cosine(v, v) == 0 {
				item["status"] = 400
				item["error"] = map[string]any{"type": "mapper_parsing_exception", "reason": "zero vector is not supported when space type is [cosinesimil]"}
				return item, true
			}
			if float64(len(v)) != f.props[field]["dimension"] {
				item["status"] = 400
				item["error"] = map[string]any{"type": "mapper_parsing_exception", "reason": "vector dimension mismatch"}
				return item, true
			}
		}
	}
	cur, ok := f.docs[id]
	if !ok && !upsert {
		item["status"] = 404
		item["error"] = map[string]any{"type": "document_missing_exception", "reason": "[" + id + "]: document missing"}
		return item, true
	}
	if !ok {
		if doc["tenant"] == nil || doc["tenant"] == "" {
			f.t.Errorf("upserted document %s without a tenant", id)
		}
		cur = map[string]any{}
		f.docs[id] = cur
		item["result"], item["status"] = "created", 201
	} else {
		item["result"], item["status"] = "updated", 200
	}
	for k, v := range doc {
		cur[k] = v
	}
	return item, false
}

// ---- search ----

type scored struct {
	id    string
	score float64
}

func (f *fake) search(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	t := f.t
	if !f.checkIndex(w, name) {
		return
	}
	var b struct {
		Size           *int           `json:"size"`
		Query          map[string]any `json:"query"`
		Source         []string       `json:"_source"`
		TrackTotalHits *bool          `json:"track_total_hits"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Errorf("search body %s: %v", body, err)
	}
	if b.Size == nil {
		t.Errorf("search without size: %s", body)
		b.Size = new(int)
		*b.Size = 10
	}
	if strings.Join(b.Source, ",") != "id,kind" {
		t.Errorf("_source = %v, want [id kind]", b.Source)
	}
	pipeline := r.URL.Query().Get("search_pipeline")
	var hits []scored
	if h, ok := b.Query["hybrid"].(map[string]any); ok {
		comb, ok := f.pipelines[pipeline]
		if !ok {
			t.Errorf("hybrid query with search_pipeline=%q, not a pipeline created before", pipeline)
			fail(w, 400, "illegal_argument_exception", "pipeline missing")
			return
		}
		depth, _ := h["pagination_depth"].(float64)
		qs, _ := h["queries"].([]any)
		if len(qs) != 2 || depth < float64(*b.Size) {
			t.Errorf("hybrid: %d sub-queries, pagination_depth %v (size %d)", len(qs), depth, *b.Size)
		}
		var lists [][]scored
		for _, q := range qs {
			lists = append(lists, f.run(q.(map[string]any), int(depth)))
		}
		hits = rrf(lists, comb)
	} else {
		if pipeline != "" {
			t.Errorf("search_pipeline=%s on a non-hybrid query", pipeline)
		}
		hits = f.run(b.Query, *b.Size)
	}
	if len(hits) > *b.Size {
		hits = hits[:*b.Size]
	}
	out := []any{}
	var maxScore any
	for i, h := range hits {
		src := f.docs[h.id]
		if i == 0 {
			maxScore = h.score
		}
		out = append(out, map[string]any{"_index": f.index, "_id": h.id, "_score": h.score,
			"_source": map[string]any{"id": src["id"], "kind": src["kind"]}})
	}
	reply(w, 200, map[string]any{"took": 2, "timed_out": false,
		"_shards": map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
		"hits":    map[string]any{"max_score": maxScore, "hits": out}})
}

// run evaluates a top-level query: bool{must:[multi_match], filter} or knn.
func (f *fake) run(q map[string]any, size int) []scored {
	t := f.t
	if knn, ok := q["knn"].(map[string]any); ok {
		if len(knn) != 1 {
			t.Errorf("knn on %d fields", len(knn))
		}
		for field, spec := range knn {
			s := spec.(map[string]any)
			k, _ := s["k"].(float64)
			vec, _ := s["vector"].([]any)
			filter, _ := s["filter"].(map[string]any)
			if f.props[field]["type"] != "knn_vector" {
				t.Errorf("knn on %s, not a knn_vector field", field)
				return nil
			}
			if float64(len(vec)) != f.props[field]["dimension"] || k < 1 {
				t.Errorf("knn on %s: %d dims (field: %v), k %v", field, len(vec), f.props[field]["dimension"], k)
			}
			fb, _ := filter["bool"].(map[string]any)
			fl, _ := fb["filter"].([]any)
			f.requireTenant(fl)
			var out []scored
			for id, d := range f.docs {
				dv, ok := d[field].([]any)
				if !ok || !f.matchAll(d, fl) {
					continue
				}
				out = append(out, scored{id, (1 + cosine(vec, dv)) / 2})
			}
			return top(out, min(int(k), size))
		}
	}
	bq, ok := q["bool"].(map[string]any)
	if !ok || len(q) != 1 {
		t.Errorf("query %v: the adapter sends bool or knn", q)
		return nil
	}
	fl, _ := bq["filter"].([]any)
	f.requireTenant(fl)
	must, _ := bq["must"].([]any)
	if len(must) != 1 {
		t.Errorf("bool.must = %v, want one multi_match", must)
		return nil
	}
	mm, _ := must[0].(map[string]any)["multi_match"].(map[string]any)
	text, _ := mm["query"].(string)
	if mm == nil || mm["type"] != "cross_fields" || mm["operator"] != "or" || text == "" {
		t.Errorf("multi_match = %v", mm)
		return nil
	}
	boosts := map[string]float64{}
	for _, fs := range mm["fields"].([]any) {
		name, boost, _ := strings.Cut(fs.(string), "^")
		b := 1.0
		if boost != "" {
			b, _ = strconv.ParseFloat(boost, 64)
		}
		boosts[name] = b
	}
	var out []scored
	terms := analyzeQuery(text)
	st := f.stats(boosts)
	for id, d := range f.docs {
		if !f.matchAll(d, fl) {
			continue
		}
		if s := st.score(d, terms, boosts); s > 0 {
			out = append(out, scored{id, s})
		}
	}
	return top(out, size)
}

func (f *fake) requireTenant(filters []any) {
	if len(filters) == 0 {
		f.t.Errorf("query without filter clauses: the tenant filter is mandatory")
		return
	}
	term, _ := filters[0].(map[string]any)["term"].(map[string]any)
	if tn, _ := term["tenant"].(string); tn == "" {
		f.t.Errorf("first filter clause %v is not the tenant term", filters[0])
	}
}

func (f *fake) matchAll(d map[string]any, filters []any) bool {
	for _, c := range filters {
		if !f.match(d, c.(map[string]any)) {
			return false
		}
	}
	return true
}

// match evaluates term, terms, prefix, range and bool filter clauses.
func (f *fake) match(d map[string]any, c map[string]any) bool {
	if len(c) != 1 {
		f.t.Errorf("filter clause %v", c)
		return false
	}
	for op, arg := range c {
		a := arg.(map[string]any)
		switch op {
		case "term", "terms", "prefix", "range":
			if len(a) != 1 {
				f.t.Errorf("%s on %d fields", op, len(a))
			}
			for field, want := range a {
				got := d[field]
				switch op {
				case "term":
					return fmt.Sprint(got) == fmt.Sprint(want)
				case "terms":
					for _, x := range want.([]any) {
						if fmt.Sprint(got) == fmt.Sprint(x) {
							return true
						}
					}
					return false
				case "prefix":
					s, _ := got.(string)
					return strings.HasPrefix(s, want.(string))
				case "range":
					n, _ := got.(float64)
					r := want.(map[string]any)
					if gt, ok := r["gt"].(float64); ok && !(n > gt) {
						return false
					}
					if len(r) != 1 {
						f.t.Errorf("range %v", r)
					}
					return true
				}
			}
		case "bool":
			should, _ := a["should"].([]any)
			if a["minimum_should_match"] != 1.0 || len(should) == 0 {
				f.t.Errorf("bool filter %v: want should with minimum_should_match 1", a)
			}
			for _, s := range should {
				if f.match(d, s.(map[string]any)) {
					return true
				}
			}
			return false
		default:
			f.t.Errorf("filter clause %q not in the adapter's vocabulary", op)
		}
	}
	return false
}

// analyze mimics the vp_text analyzer: standard tokens, lower case, ASCII
// folding, Porter stems.
func analyze(s string) []string {
	var out []string
	for _, t := range analysis.Tokens(s) {
		out = append(out, analysis.Stem(t))
	}
	return out
}

func analyzeQuery(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range analyze(s) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// fieldStats are BM25 statistics over every document of the index (as on
// one shard).
type fieldStats struct {
	n     map[string]float64            // field -> documents with the field
	avg   map[string]float64            // field -> average length
	df    map[string]map[string]float64 // field -> term -> document frequency
	total float64                       // documents
}

func (f *fake) stats(fields map[string]float64) fieldStats {
	st := fieldStats{n: map[string]float64{}, avg: map[string]float64{}, df: map[string]map[string]float64{}, total: float64(len(f.docs))}
	for field := range fields {
		st.df[field] = map[string]float64{}
		sum := 0.0
		for _, o := range f.docs {
			toks := analyze(str(o[field]))
			if len(toks) == 0 {
				continue
			}
			st.n[field]++
			sum += float64(len(toks))
			seen := map[string]bool{}
			for _, t := range toks {
				if !seen[t] {
					seen[t] = true
					st.df[field][t]++
				}
			}
		}
		if st.n[field] > 0 {
			st.avg[field] = sum / st.n[field]
		}
	}
	return st
}

// score is cross_fields BM25 (k1 1.2, b 0.75): each term scores in the
// field where it weighs most, with a document frequency blended across the
// fields (the largest).
func (st fieldStats) score(d map[string]any, terms []string, boosts map[string]float64) float64 {
	s := 0.0
	for _, t := range terms {
		df := 0.0
		for field := range boosts {
			df = math.Max(df, st.df[field][t])
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (st.total-df+0.5)/(df+0.5))
		best := 0.0
		for field, boost := range boosts {
			toks := analyze(str(d[field]))
			tf := 0.0
			for _, x := range toks {
				if x == t {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			v := boost * idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(len(toks))/st.avg[field]))
			best = math.Max(best, v)
		}
		s += best
	}
	return s
}

func cosine(a, b []any) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := a[i].(float64), b[i].(float64)
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func top(s []scored, k int) []scored {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].id < s[j].id
	})
	if len(s) > k {
		s = s[:k]
	}
	return s
}

// rrf fuses ranked lists as the score-ranker processor does.
func rrf(lists [][]scored, comb map[string]any) []scored {
	k := comb["rank_constant"].(float64)
	weights := []float64{1, 1}
	if p, ok := comb["parameters"].(map[string]any); ok {
		for i, w := range p["weights"].([]any) {
			weights[i] = w.(float64)
		}
	}
	sum := map[string]float64{}
	for li, l := range lists {
		for rank, h := range l {
			sum[h.id] += weights[li] / (k + float64(rank+1))
		}
	}
	var out []scored
	for id, s := range sum {
		out = append(out, scored{id, s})
	}
	return top(out, len(out))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
