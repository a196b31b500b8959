package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

type setKey struct{ tenant, embedder string }

// rowMeta is what the pre-filter of a vector query reads.
type rowMeta struct {
	id                   string
	kind, ns, typ, owner string
	expires              int64
}

// vectorSet is the in-memory copy of one (tenant, embedder)'s vectors:
// row i is data[i*dim : (i+1)*dim], unit length, described by meta[i] and,
// for the filter, by code[i]: its kind, namespace, type and owner interned
// as small integers, so that a query checks a row with four array reads.
//
// Where int8 arithmetic is fast (useInt8), each row is also kept
// quantised (q8[i*dim:(i+1)*dim], times scale[i]): a large set is scanned
// on the codes, a quarter of the memory traffic, and the best candidates
// are rescored exactly (see scan).
type vectorSet struct {
	mu    sync.RWMutex
	dim   int
	data  []float32
	q8    []int8
	scale []float32
	meta  []rowMeta
	code  []rowCode
	dict  [4]dict // kind, namespace, type, owner
	slot  map[string]int
}

type rowCode struct {
	f       [4]uint32
	expires int64
}

// dict interns strings; entries are never removed (a set holds few
// distinct kinds, namespaces, types and owners).
type dict struct {
	id    map[string]uint32
	names []string
}

func (d *dict) intern(s string) uint32 {
	if id, ok := d.id[s]; ok {
		return id
	}
	if d.id == nil {
		d.id = map[string]uint32{}
	}
	id := uint32(len(d.names))
	d.id[s] = id
	d.names = append(d.names, s)
	return id
}

func (s *vectorSet) codeOf(m rowMeta) rowCode {
	return rowCode{f: [4]uint32{s.dict[0].intern(m.kind), s.dict[1].intern(m.ns), s.dict[2].intern(m.typ), s.dict[3].intern(m.owner)}, expires: m.expires}
}

// mask is a compiled filter: allow[j][id] says whether value id of field j
// passes (nil: any value does).
type mask struct {
	allow [4][]bool
	now   int64
}

// mask compiles the fields of f other than the tenant, or returns nil when
// nothing filters. The caller holds s.mu.
func (s *vectorSet) mask(f search.Filter) *mask {
	ns := f.Namespaces
	if containsStar(ns) {
		ns = nil
	}
	if len(f.Kinds) == 0 && len(ns) == 0 && len(f.Types) == 0 && f.Owner == "" && f.NowMS == 0 {
		return nil
	}
	m := &mask{now: f.NowMS}
	build := func(j int, ok func(string) bool) {
		m.allow[j] = make([]bool, len(s.dict[j].names))
		for i, n := range s.dict[j].names {
			m.allow[j][i] = ok(n)
		}
	}
	if len(f.Kinds) > 0 {
		build(0, func(v string) bool { return slices.Contains(f.Kinds, v) })
	}
	if len(ns) > 0 {
		build(1, func(v string) bool { return search.NamespaceAllowed(ns, v) })
	}
	if len(f.Types) > 0 {
		build(2, func(v string) bool { return slices.Contains(f.Types, v) })
	}
	if f.Owner != "" {
		build(3, func(v string) bool { return v == f.Owner })
	}
	return m
}

func (m *mask) pass(c *rowCode) bool {
	for j := range m.allow {
		if a := m.allow[j]; a != nil && !a[c.f[j]] {
			return false
		}
	}
	return m.now == 0 || c.expires == 0 || c.expires > m.now
}

// dimension is the length of the set's vectors (0 while empty of any).
func (s *vectorSet) dimension() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dim
}

// put adds or replaces a row; a vector of another length is refused.
func (s *vectorSet) put(m rowMeta, v []float32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dim == 0 {
		s.dim = len(v)
	}
	if len(v) != s.dim {
		return false
	}
	if i, ok := s.slot[m.id]; ok {
		copy(s.data[i*s.dim:(i+1)*s.dim], v)
		if useInt8 {
			s.scale[i] = quantise(v, s.q8[i*s.dim:(i+1)*s.dim])
		}
		s.meta[i] = m
		s.code[i] = s.codeOf(m)
		return true
	}
	s.slot[m.id] = len(s.meta)
	s.meta = append(s.meta, m)
	s.code = append(s.code, s.codeOf(m))
	s.data = append(s.data, v...)
	if useInt8 {
		s.q8 = slices.Grow(s.q8, s.dim)[:len(s.q8)+s.dim]
		s.scale = append(s.scale, quantise(v, s.q8[len(s.q8)-s.dim:]))
	}
	return true
}

// codeLevels is the largest magnitude of a row code; queryLevels that of
// a quantised query value. The query gets 12 bits: its error is then
// negligible beside the rows', and the int32 sum of maxDimInt8 products
// of at most codeLevels x queryLevels cannot overflow.
const (
	codeLevels  = 127
	queryLevels = 2047
	maxDimInt8  = 8192
)

// quantise writes v / scale, rounded, into dst (len(v) codes) and returns
// scale = max|v| / codeLevels.
func quantise(v []float32, dst []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := codeLevels / m
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x * inv)))
	}
	return m / codeLevels
}

// quantiseQuery is quantise to int16 codes of at most queryLevels; the
// scale is dropped (it is the same for every row).
func quantiseQuery(v []float32) []int16 {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	out := make([]int16, len(v))
	if m == 0 {
		return out
	}
	inv := queryLevels / m
	for i, x := range v {
		out[i] = int16(math.Round(float64(x * inv)))
	}
	return out
}

// remove deletes a row by moving the last row into its place.
func (s *vectorSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.slot[id]
	if !ok {
		return
	}
	last := len(s.meta) - 1
	if i != last {
		copy(s.data[i*s.dim:(i+1)*s.dim], s.data[last*s.dim:(last+1)*s.dim])
		if useInt8 {
			copy(s.q8[i*s.dim:(i+1)*s.dim], s.q8[last*s.dim:(last+1)*s.dim])
			s.scale[i] = s.scale[last]
		}
		s.meta[i] = s.meta[last]
		s.code[i] = s.code[last]
		s.slot[s.meta[i].id] = i
	}
	s.meta = s.meta[:last]
	s.code = s.code[:last]
	s.data = s.data[:last*s.dim]
	if useInt8 {
		s.q8 = s.q8[:last*s.dim]
		s.scale = s.scale[:last]
	}
	delete(s.slot, id)
}

// drop removes a row and reports whether the set is now empty.
func (s *vectorSet) drop(id string) bool {
	s.remove(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.meta) == 0
}

// setMeta refreshes the filter fields of a row after a re-upsert.
func (s *vectorSet) setMeta(d search.Doc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.slot[d.ID]; ok {
		s.meta[i] = metaOf(d)
		s.code[i] = s.codeOf(s.meta[i])
	}
}

func metaOf(d search.Doc) rowMeta {
	return rowMeta{id: d.ID, kind: d.Kind, ns: d.Namespace, typ: d.Type, owner: d.Owner, expires: d.ExpiresAt}
}

// SetVector implements search.Index. The vector is stored normalised to
// unit length. A document that is not indexed (deleted before its vector
// was computed) is ignored, like an absent id in Delete. It replaces the
// document's vectors of other embedders: the domain uses one embedder at
// a time and re-embeds every document when it changes, so an old vector
// is never searched again, and would otherwise stay on disk and be loaded
// at every start (Warm).
func (x *Index) SetVector(ctx context.Context, tenant, id string, v search.Vector) error {
	if tenant == "" {
		return search.ErrNoTenant
	}
	if v.Embedder == "" {
		return errors.New("search.local.SetVector: empty embedder name")
	}
	if len(v.Values) == 0 {
		return fmt.Errorf("search.local.SetVector: %w (empty vector)", search.ErrDimension)
	}
	unit := normalised(v.Values)
	set, err := x.set(ctx, tenant, v.Embedder)
	if err != nil {
		return err
	}
	if d := set.dimension(); d != 0 && d != len(unit) {
		return fmt.Errorf("search.local.SetVector: %w: %s holds %d dimensions, got %d",
			search.ErrDimension, v.Embedder, d, len(unit))
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search.local.SetVector: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var (
		rid int64
		d   = search.Doc{Tenant: tenant, ID: id}
	)
	err = tx.QueryRowContext(ctx, `SELECT rid, kind, ns, type, owner, expires FROM search_docs WHERE tenant = ? AND id = ?`, tenant, id).
		Scan(&rid, &d.Kind, &d.Namespace, &d.Type, &d.Owner, &d.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("search.local.SetVector: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_vectors (rid, embedder, v) VALUES (?, ?, ?) ON CONFLICT (rid, embedder) DO UPDATE SET v = excluded.v`,
		rid, v.Embedder, encode(unit)); err != nil {
		return fmt.Errorf("search.local.SetVector: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM search_vectors WHERE rid = ? AND embedder <> ?`, rid, v.Embedder)
	if err != nil {
		return fmt.Errorf("search.local.SetVector: %w", err)
	}
	replaced, _ := res.RowsAffected()
	versions, err := bumpVersions(ctx, tx, tenant)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search.local.SetVector: %w", err)
	}
	x.recordVersions(versions)
	set.put(metaOf(d), unit)
	if replaced > 0 {
		for k, other := range x.sets {
			if k.tenant == tenant && k.embedder != v.Embedder && other.drop(id) {
				delete(x.sets, k) // its last vector: free the set
			}
		}
	}
	return nil
}

// set returns the cache of (tenant, embedder), loading it on first use.
func (x *Index) set(ctx context.Context, tenant, embedder string) (*vectorSet, error) {
	k := setKey{tenant, embedder}
	x.mu.Lock()
	defer x.mu.Unlock()
	if s, ok := x.sets[k]; ok {
		return s, nil
	}
	s := &vectorSet{slot: map[string]int{}}
	// Size the arrays first: growing a 150 MB slice by appends costs more
	// than reading it.
	var n, bytes int
	if err := x.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(length(v.v)), 0)
		FROM search_vectors v JOIN search_docs d ON d.rid = v.rid WHERE v.embedder = ? AND d.tenant = ?`, embedder, tenant).
		Scan(&n, &bytes); err != nil {
		return nil, fmt.Errorf("search.local: load vectors: %w", err)
	}
	s.data = make([]float32, 0, n*(bytes/4))
	if useInt8 {
		s.q8 = make([]int8, 0, n*(bytes/4))
		s.scale = make([]float32, 0, n)
	}
	s.meta = make([]rowMeta, 0, n)
	s.code = make([]rowCode, 0, n)
	s.slot = make(map[string]int, n)
	rows, err := x.r.QueryContext(ctx, `SELECT d.id, d.kind, d.ns, d.type, d.owner, d.expires, v.v
		FROM search_vectors v JOIN search_docs d ON d.rid = v.rid WHERE v.embedder = ? AND d.tenant = ?`, embedder, tenant)
	if err != nil {
		return nil, fmt.Errorf("search.local: load vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			m   rowMeta
			raw []byte
		)
		if err := rows.Scan(&m.id, &m.kind, &m.ns, &m.typ, &m.owner, &m.expires, &raw); err != nil {
			return nil, fmt.Errorf("search.local: load vectors: %w", err)
		}
		s.put(m, decode(raw)) // a row of another length cannot come from SetVector
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search.local: load vectors: %w", err)
	}
	x.sets[k] = s
	return s, nil
}

// Vector implements search.Index: exact cosine similarity against every
// vector of the same embedder in the tenant that passes the filter.
// Score is the cosine similarity.
func (x *Index) Vector(ctx context.Context, v search.Vector, f search.Filter, k int) ([]search.Hit, error) {
	return x.vector(ctx, v, f, k, false)
}

// vector is Vector; exact scans the float32 rows of any set, for the
// tests that measure the quantised scan against it.
func (x *Index) vector(ctx context.Context, v search.Vector, f search.Filter, k int, exact bool) ([]search.Hit, error) {
	if f.Tenant == "" {
		return nil, search.ErrNoTenant
	}
	if k <= 0 {
		return nil, nil
	}
	if err := x.syncExternal(ctx); err != nil {
		return nil, err
	}
	if len(v.Values) == 0 {
		return nil, fmt.Errorf("search.local.Vector: %w (empty vector)", search.ErrDimension)
	}
	set, err := x.set(ctx, f.Tenant, v.Embedder)
	if err != nil {
		return nil, err
	}
	q := normalised(v.Values)
	set.mu.RLock()
	defer set.mu.RUnlock()
	if set.dim == 0 {
		return nil, nil
	}
	if set.dim != len(q) {
		return nil, fmt.Errorf("search.local.Vector: %w: %s holds %d dimensions, got %d",
			search.ErrDimension, v.Embedder, set.dim, len(q))
	}
	var top *topK
	if m := set.mask(f); exact {
		top = set.split(len(set.meta), func(from, to int) *topK { return set.scanRange(q, m, k, from, to) })
	} else {
		top = set.scan(q, m, k)
	}
	idx := top.sorted(func(a, b int) bool { return set.meta[a].id < set.meta[b].id })
	hits := make([]search.Hit, len(idx))
	for j, e := range idx {
		hits[j] = search.Hit{ID: set.meta[e.row].id, Kind: set.meta[e.row].kind, Score: float64(e.score)}
	}
	return hits, nil
}

// parallelRows is the number of rows above which a scan is split across
// CPUs (a chunk per CPU, merged at the end).
const parallelRows = 16384

// exactRows is the number of rows below which a scan reads the float32
// rows themselves: the quantised scan pays off on memory traffic, which a
// small set does not have.
const exactRows = 8192

// rescore is how many candidates beyond k the quantised scan keeps for
// exact rescoring, at least: it keeps max(2k, k+rescore).
const rescore = 64

// scan returns the k rows nearest to q among those m accepts. On a large
// set it ranks the int8 codes, keeps the best max(2k, k+rescore), and
// ranks those by their exact float32 similarity; the int8 error (under
// 1/254 of the row's largest component, per component) rarely moves a
// row that many places (BenchmarkSearch100k measures the recall against
// the exact scan).
func (s *vectorSet) scan(q []float32, m *mask, k int) *topK {
	n := len(s.meta)
	if n < exactRows || !useInt8 || s.dim > maxDimInt8 {
		return s.split(n, func(from, to int) *topK { return s.scanRange(q, m, k, from, to) })
	}
	qq := quantiseQuery(q)
	want := max(2*k, k+rescore)
	cand := s.split(n, func(from, to int) *topK { return s.scanQuantised(qq, m, want, from, to) })
	top := newTopK(k)
	dim := s.dim
	for _, e := range cand.h {
		top.offer(dot(q, s.data[e.row*dim:(e.row+1)*dim:(e.row+1)*dim]), e.row)
	}
	return top
}

// split runs scan over [0, n) in one chunk per CPU when n is large, and
// merges the chunks' heaps.
func (s *vectorSet) split(n int, scan func(from, to int) *topK) *topK {
	parts := min(runtime.GOMAXPROCS(0), n/(parallelRows/2))
	if n < parallelRows || parts < 2 {
		return scan(0, n)
	}
	tops := make([]*topK, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tops[p] = scan(p*n/parts, (p+1)*n/parts)
		}()
	}
	wg.Wait()
	top := tops[0]
	for _, t := range tops[1:] {
		for _, e := range t.h {
			top.offer(e.score, e.row)
		}
	}
	return top
}

func (s *vectorSet) scanRange(q []float32, m *mask, k, from, to int) *topK {
	top := newTopK(k)
	dim := s.dim
	data := s.data
	for i := from; i < to; i++ {
		if m != nil && !m.pass(&s.code[i]) {
			continue
		}
		top.offer(dot(q, data[i*dim:(i+1)*dim:(i+1)*dim]), i)
	}
	return top
}

func (s *vectorSet) scanQuantised(q []int16, m *mask, k, from, to int) *topK {
	top := newTopK(k)
	dim := s.dim
	codes, scale := s.q8, s.scale
	for i := from; i < to; i++ {
		if m != nil && !m.pass(&s.code[i]) {
			continue
		}
		top.offer(scale[i]*float32(dotI8(q, codes[i*dim:(i+1)*dim:(i+1)*dim])), i)
	}
	return top
}

// rowFilter compiles the fields of f other than the tenant (a text index
// is one tenant's) into a predicate, or nil when nothing filters.
func rowFilter(f search.Filter) func(*rowMeta) bool {
	ns := f.Namespaces
	if containsStar(ns) {
		ns = nil
	}
	kinds, types, owner, now := f.Kinds, f.Types, f.Owner, f.NowMS
	if len(kinds) == 0 && len(ns) == 0 && len(types) == 0 && owner == "" && now == 0 {
		return nil
	}
	return func(m *rowMeta) bool {
		if len(kinds) > 0 && !slices.Contains(kinds, m.kind) ||
			len(types) > 0 && !slices.Contains(types, m.typ) ||
			owner != "" && m.owner != owner ||
			now > 0 && m.expires > 0 && m.expires <= now {
			return false
		}
		return len(ns) == 0 || search.NamespaceAllowed(ns, m.ns)
	}
}

func normalised(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// topK keeps the k best (score, row) pairs in a min-heap.
type topK struct {
	k int
	h []scored
}

type scored struct {
	score float32
	row   int
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]scored, 0, k)} }

// wants reports whether offer(s, ...) would keep s.
func (t *topK) wants(s float32) bool { return len(t.h) < t.k || s > t.h[0].score }

func (t *topK) offer(s float32, row int) {
	if len(t.h) < t.k {
		t.h = append(t.h, scored{s, row})
		// sift up
		i := len(t.h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if t.h[p].score <= t.h[i].score {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if s <= t.h[0].score {
		return
	}
	t.h[0] = scored{s, row}
	// sift down
	i, n := 0, len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && t.h[r].score < t.h[l].score {
			m = r
		}
		if t.h[i].score <= t.h[m].score {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted returns the kept pairs best first, ties broken by less on rows.
func (t *topK) sorted(less func(a, b int) bool) []scored {
	out := append([]scored(nil), t.h...)
	sortScored(out, less)
	return out
}

func sortScored(s []scored, less func(a, b int) bool) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return less(s[i].row, s[j].row)
	})
}
