package cloudwatch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/internal/errtext"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// state is what the cursor carries, per log group.
//
// A group is read in scans: FilterLogEvents over [start, end], end being
// the clock at the scan's start, page after page until no nextToken is
// left. When a scan completes, everything ingested by then with a
// timestamp up to end has been seen, and the watermark moves to end. The
// next scan starts an overlap before the watermark, for the events
// CloudWatch ingests late with older timestamps; the ids of the events
// already returned in that window are kept, so that none is returned
// twice.
//
// A Read that runs out of budget (max events, pages, time) or is
// throttled in the middle of a scan keeps the scan (its window and the
// token of the page it was on) in the cursor, and the next Read goes on
// from there: a group with more empty pages than one Read may fetch still
// gets through, and ids already returned from a page read again are
// skipped.
type state struct {
	V int `json:"v"`
	// Next is the group the next Read starts with (its index), so that
	// one busy group does not starve the others.
	Next   int                    `json:"next,omitempty"`
	Groups map[string]*groupState `json:"groups,omitempty"`
}

type groupState struct {
	// W is the watermark (ms): the end of the last complete scan, or the
	// first read's start.
	W int64 `json:"w"`
	// Floor (ms): nothing before it is read, because it was before the
	// first read's start or because the ids before it were evicted from
	// a full id set (reading there again would return them twice).
	Floor int64 `json:"floor,omitempty"`
	// Scan is the scan in progress, if any.
	Scan *scan `json:"scan,omitempty"`
	// IDs maps the hash of each event id returned in the overlap window
	// to the event's timestamp (ms), for pruning.
	IDs map[string]int64 `json:"ids,omitempty"`
}

type scan struct {
	Start int64  `json:"s"`
	End   int64  `json:"e"`
	Token string `json:"t,omitempty"`
}

const cursorVersion = 1

func decodeCursor(s string) (*state, error) {
	st := &state{V: cursorVersion, Groups: map[string]*groupState{}}
	if s == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(s), st); err != nil || st.V != cursorVersion {
		return nil, vp.Errorf(op, vp.KindInvalid, "cursor", "%q is not a CloudWatch Logs cursor", errtext.Clip(s, 64))
	}
	if st.Groups == nil {
		st.Groups = map[string]*groupState{}
	}
	for _, g := range st.Groups {
		if g.IDs == nil {
			g.IDs = map[string]int64{}
		}
	}
	return st, nil
}

func (st *state) encode() string {
	b, err := json.Marshal(st)
	if err != nil {
		// Maps of strings and integers always marshal.
		panic(fmt.Sprintf("cloudwatch: cursor: %v", err))
	}
	return string(b)
}

// idKey is the key an event id is remembered by: a 64-bit hash, since
// CloudWatch's ids are 56 digits and the cursor keeps a thousand of them.
func idKey(id string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return fmt.Sprintf("%016x", h.Sum64())
}

// seen reports whether an event was returned before, or lies where
// nothing may be read again.
func (g *groupState) seen(key string, ts int64) bool {
	if ts < g.Floor {
		return true
	}
	_, ok := g.IDs[key]
	return ok
}

// remember records a returned event, evicting the oldest ids beyond
// maxIDs (and raising the floor past them).
func (g *groupState) remember(key string, ts int64, maxIDs int) {
	g.IDs[key] = ts
	if len(g.IDs) <= maxIDs {
		return
	}
	type kv struct {
		k  string
		ts int64
	}
	all := make([]kv, 0, len(g.IDs))
	for k, ts := range g.IDs {
		all = append(all, kv{k, ts})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.ts, b.ts) })
	// Evict at least a tenth, so that a full set is not sorted per event,
	// and every id that shares the last evicted timestamp, so that the
	// floor can rise past it.
	n := max(len(all)-maxIDs, len(all)/10)
	for n < len(all) && all[n].ts == all[n-1].ts {
		n++
	}
	for _, e := range all[:n] {
		delete(g.IDs, e.k)
	}
	g.Floor = max(g.Floor, all[n-1].ts+1)
}

// prune forgets the ids that the next scan will not reach again.
func (g *groupState) prune(overlapMs int64) {
	from := max(g.W-overlapMs, g.Floor)
	for k, ts := range g.IDs {
		if ts < from {
			delete(g.IDs, k)
		}
	}
}

// reached is the log time the cursor has read every group up to: the
// least of the groups' positions, a group's being its watermark (the end
// of its last complete scan) or, in the middle of a scan, the newest
// event it returned since (events come in timestamp order). Zero when no
// group was read.
func (st *state) reached(groups []string) time.Time {
	var least int64 = -1
	for _, g := range groups {
		gs := st.Groups[g]
		if gs == nil {
			continue
		}
		at := gs.W
		if gs.Scan != nil {
			for _, ts := range gs.IDs {
				if ts <= gs.Scan.End {
					at = max(at, ts)
				}
			}
		}
		if least < 0 || at < least {
			least = at
		}
	}
	if least <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(least).UTC()
}
