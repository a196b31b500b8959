package opensearch

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// obj is a JSON object of the query DSL.
type obj = map[string]any

// Field names of the index.
const (
	fTenant    = "tenant"
	fID        = "id"
	fKind      = "kind"
	fNamespace = "namespace"
	fType      = "type"
	fOwner     = "owner"
	fTitle     = "title"
	fText      = "text"
	fCreated   = "created_at"
	fExpires   = "expires_at"
)

// analyzerName is the text analyzer: Unicode words, lower case, ASCII
// folding (diacritics removed) and the Porter stemmer, as search/local
// does. Stop words are kept in the index so that a query made of them only
// ("to be or not to be") still finds something; queryText drops them from
// other queries.
const analyzerName = "vp_text"

// indexBody is the body of PUT /<index>: k-NN enabled, the analyzer, and
// the mapping of every non-vector field. Vector fields (one per embedder)
// are added by ensureVectorField.
func indexBody(shards, replicas int) obj {
	return obj{
		"settings": obj{
			"index": obj{
				"knn":                true,
				"number_of_shards":   shards,
				"number_of_replicas": replicas,
			},
			"analysis": obj{
				"analyzer": obj{
					analyzerName: obj{
						"type":      "custom",
						"tokenizer": "standard",
						"filter":    []string{"lowercase", "asciifolding", "porter_stem"},
					},
				},
			},
		},
		"mappings": obj{
			"dynamic": "strict",
			"properties": obj{
				fTenant:    obj{"type": "keyword"},
				fID:        obj{"type": "keyword"},
				fKind:      obj{"type": "keyword"},
				fNamespace: obj{"type": "keyword"},
				fType:      obj{"type": "keyword"},
				fOwner:     obj{"type": "keyword"},
				fTitle:     obj{"type": "text", "analyzer": analyzerName},
				fText:      obj{"type": "text", "analyzer": analyzerName},
				fCreated:   obj{"type": "long"},
				fExpires:   obj{"type": "long"},
			},
		},
	}
}

// vectorField names the knn_vector field of an embedder: readable, and
// unique thanks to a hash of the exact name.
func vectorField(embedder string) string {
	var b strings.Builder
	b.WriteString("vec_")
	for _, r := range strings.ToLower(embedder) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() > 64 {
			break
		}
	}
	h := fnv.New32a()
	h.Write([]byte(embedder))
	fmt.Fprintf(&b, "_%08x", h.Sum32())
	return b.String()
}

// vectorMapping is the mapping of one embedder's field: HNSW on the
// Lucene engine, cosine similarity (Lucene supports filtered k-NN search
// natively, so filters apply during the graph search, not after it).
func vectorMapping(field string, dim int) obj {
	return obj{"properties": obj{field: obj{
		"type":      "knn_vector",
		"dimension": dim,
		"method": obj{
			"name":       "hnsw",
			"engine":     "lucene",
			"space_type": "cosinesimil",
			"parameters": obj{"m": 16, "ef_construction": 128},
		},
	}}}
}

// pipelineBody is the search pipeline of hybrid queries: Reciprocal Rank
// Fusion (OpenSearch ≥ 2.19). weights, when set, weigh the sub-queries
// (text, vector); OpenSearch wants them in [0, 1] summing to 1, so they
// are scaled — RRF's ranking does not change under a common factor.
func pipelineBody(weights []float64) obj {
	comb := obj{"technique": "rrf", "rank_constant": search.RRFK}
	if len(weights) > 0 {
		var sum float64
		for _, w := range weights {
			sum += w
		}
		ws := make([]float64, len(weights))
		for i, w := range weights {
			ws[i] = w / sum
		}
		comb["parameters"] = obj{"weights": ws}
	}
	return obj{
		"description": "VantagePeers hybrid search: Reciprocal Rank Fusion of BM25 and k-NN (k = 60)",
		"phase_results_processors": []any{
			obj{"score-ranker-processor": obj{"combination": comb}},
		},
	}
}

// docID is the OpenSearch _id of a document: tenant and id, unambiguous
// whatever characters they hold.
func docID(tenant, id string) string { return fmt.Sprintf("%d:%s:%s", len(tenant), tenant, id) }

// source is the indexed JSON of a document (vector fields apart).
func source(d search.Doc) obj {
	return obj{
		fTenant: d.Tenant, fID: d.ID, fKind: d.Kind, fNamespace: d.Namespace, fType: d.Type, fOwner: d.Owner,
		fTitle: d.Title, fText: d.Text, fCreated: d.CreatedAt, fExpires: d.ExpiresAt,
	}
}

// filters renders f as filter clauses. The tenant term is always the
// first: no query leaves without it.
func filters(f search.Filter) []any {
	out := []any{obj{"term": obj{fTenant: f.Tenant}}}
	if len(f.Kinds) > 0 {
		out = append(out, obj{"terms": obj{fKind: f.Kinds}})
	}
	if len(f.Types) > 0 {
		out = append(out, obj{"terms": obj{fType: f.Types}})
	}
	if f.Owner != "" {
		out = append(out, obj{"term": obj{fOwner: f.Owner}})
	}
	if len(f.Namespaces) > 0 && !hasStar(f.Namespaces) {
		var should []any
		for _, p := range f.Namespaces {
			if strings.HasSuffix(p, "/") {
				should = append(should,
					obj{"term": obj{fNamespace: p[:len(p)-1]}},
					obj{"prefix": obj{fNamespace: p}})
			} else {
				should = append(should, obj{"term": obj{fNamespace: p}})
			}
		}
		out = append(out, obj{"bool": obj{"should": should, "minimum_should_match": 1}})
	}
	if f.NowMS > 0 {
		out = append(out, obj{"bool": obj{"should": []any{
			obj{"term": obj{fExpires: 0}},
			obj{"range": obj{fExpires: obj{"gt": f.NowMS}}},
		}, "minimum_should_match": 1}})
	}
	return out
}

func hasStar(ns []string) bool {
	for _, p := range ns {
		if p == "*" {
			return true
		}
	}
	return false
}

// queryText is what the match query analyses: the words of the user's
// text (never its syntax: a match query does not parse operators anyway),
// without stop words unless there is nothing else, each once.
func queryText(text string) string {
	toks := analysis.Tokens(text)
	var out []string
	seen := map[string]bool{}
	for _, keepStop := range []bool{false, true} {
		for _, t := range toks {
			if !keepStop && (analysis.IsStopWord(t) || len(t) == 1 && (t[0] < '0' || t[0] > '9')) {
				continue
			}
			if st := analysis.Stem(t); !seen[st] {
				seen[st] = true
				out = append(out, t)
			}
		}
		if len(out) > 0 {
			break
		}
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return strings.Join(out, " ")
}

// textQuery is BM25 over title (boosted) and text, OR of the words, inside
// a bool whose filter clauses carry the tenant and the filter. cross_fields
// scores each word once, in the field where it weighs most, with its
// document frequency blended across the fields — as if title and text
// were one field where title words count more, which is what search/local
// does (most_fields would give a title word the title field's own, tiny,
// IDF when few documents have titles).
func textQuery(q string, f search.Filter, titleBoost float64) obj {
	return obj{"bool": obj{
		"must": []any{obj{"multi_match": obj{
			"query":    q,
			"fields":   []string{fmt.Sprintf("%s^%g", fTitle, titleBoost), fText},
			"type":     "cross_fields",
			"operator": "or",
		}}},
		"filter": filters(f),
	}}
}

// knnQuery is k-NN on an embedder's field with the filter applied during
// the search (efficient filtering).
func knnQuery(field string, v []float32, f search.Filter, k int) obj {
	return obj{"knn": obj{field: obj{
		"vector": v,
		"k":      k,
		"filter": obj{"bool": obj{"filter": filters(f)}},
	}}}
}

// searchBody wraps a query: k hits, only the fields a Hit needs.
func searchBody(query obj, k int) obj {
	return obj{
		"size":             k,
		"query":            query,
		"_source":          []string{fID, fKind},
		"track_total_hits": false,
	}
}
