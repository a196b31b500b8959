package vp

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// crockford is Crockford's base32 alphabet in lower case: ids sort by time
// as plain strings, which the store's sort keys rely on.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// IDs mints time-ordered identifiers ("msg_01jd..."): 48 bits of Unix
// milliseconds then 80 random bits, 26 characters, monotonic within one
// generator so that two ids minted in the same millisecond still sort in
// minting order.
type IDs struct {
	mu      sync.Mutex
	lastMS  uint64
	lastRnd [10]byte
	now     func() time.Time
}

// NewIDs returns a generator reading time from now (time.Now when nil).
func NewIDs(now func() time.Time) *IDs {
	if now == nil {
		now = time.Now
	}
	return &IDs{now: now}
}

// New returns a fresh id with the given prefix, such as "msg".
func (g *IDs) New(prefix string) string {
	id, _ := g.NewTimed(prefix)
	return id
}

// NewTimed returns a fresh id and the Unix milliseconds written into it.
// Records that carry both an id and a creation time take the time from here:
// the clock may tick between two separate readings, and an id-ordered "since"
// query must agree with the creation time it reports.
func (g *IDs) NewTimed(prefix string) (string, int64) {
	g.mu.Lock()
	ms := uint64(g.now().UnixMilli())
	if ms <= g.lastMS {
		ms = g.lastMS
		incr(&g.lastRnd)
	} else {
		g.lastMS = ms
		_, _ = rand.Read(g.lastRnd[:])
		g.lastRnd[0] &= 0x7f // headroom so that increments never wrap
	}
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], ms<<16)
	copy(raw[6:], g.lastRnd[:])
	g.mu.Unlock()
	return prefix + "_" + encode128(raw), int64(ms)
}

func incr(b *[10]byte) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// encode128 writes 128 bits as 26 base32 characters (the first holds 3 bits).
func encode128(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// TimeOfID returns the minting time of an id made by IDs, or false.
func TimeOfID(id string) (time.Time, bool) {
	i := len(id) - 26
	if i < 0 {
		return time.Time{}, false
	}
	var ms uint64
	for _, c := range id[i : i+10] {
		v := indexCrockford(byte(c))
		if v < 0 {
			return time.Time{}, false
		}
		ms = ms<<5 | uint64(v)
	}
	// 26 characters hold 130 bits, the top two always zero: the first ten
	// characters are exactly the 48-bit millisecond time.
	return time.UnixMilli(int64(ms)), true
}

func indexCrockford(c byte) int {
	for i := 0; i < len(crockford); i++ {
		if crockford[i] == c {
			return i
		}
	}
	return -1
}

// IDFloor returns the smallest id with the given prefix minted at or after t:
// a sort-key bound for "created since".
func IDFloor(prefix string, t time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(t.UnixMilli())<<16)
	return prefix + "_" + encode128(raw)
}
