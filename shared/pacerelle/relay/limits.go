package relay

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Limits bounds pairing. The pairing code stops a relay that grinds keys
// (seal's pairing v2); these bound what anyone else can do with pairing
// attempts: how often a person's token (or the holder of a stolen one) can
// put a code in front of an agent's owner, and how often a pending pairing
// can be probed with wrong reveals or confirmations.
type Limits struct {
	// StartsPerPerson and StartsPerAgent are the most pairing starts in
	// any Window, by person and by agent.
	StartsPerPerson int
	StartsPerAgent  int
	Window          time.Duration
	// MaxFailures is how many reveals that do not match the commitment,
	// or confirmations that do not verify, a pending pairing takes before
	// it is dropped (the person starts again, within the start limits).
	MaxFailures int
}

// DefaultLimits: five starts per person and twenty per agent an hour,
// three failures per pending pairing.
var DefaultLimits = Limits{StartsPerPerson: 5, StartsPerAgent: 20, Window: time.Hour, MaxFailures: 3}

func (l Limits) withDefaults() Limits {
	return Limits{
		StartsPerPerson: cmp.Or(l.StartsPerPerson, DefaultLimits.StartsPerPerson),
		StartsPerAgent:  cmp.Or(l.StartsPerAgent, DefaultLimits.StartsPerAgent),
		Window:          cmp.Or(l.Window, DefaultLimits.Window),
		MaxFailures:     cmp.Or(l.MaxFailures, DefaultLimits.MaxFailures),
	}
}

// PairingLimit is the start times of one person's or agent's pairings in
// the last window, in the store so that every relay process (every
// Lambda) counts the same starts.
type PairingLimit struct {
	Scope     string  `json:"scope"` // "person" or "agent"
	Party     string  `json:"party"`
	Starts    []int64 `json:"starts"` // Unix ms, oldest first
	ExpiresAt int64   `json:"expiresAt"`
}

var pairingLimits = table.Declare(table.Schema[PairingLimit]{
	Entity:  "pacerelle pairing limit",
	Primary: table.Key{PK: "PRLIMIT#{scope}", SK: "{party}", Pattern: "the pairing starts of a person or an agent in the last window", Note: "expires a window after its last start"},
	Fields:  func(l PairingLimit) table.Values { return table.Values{"scope": l.Scope, "party": l.Party} },
	Expires: func(l PairingLimit) int64 { return l.ExpiresAt },
})

// startLimitOps counts one pairing start for person and for agent, as
// writes conditioned on the counts read (retry on a failed condition) that
// commit with the start itself, so a start that fails is not counted; or
// refuses it naming the limit and when to retry.
func (r *Relay) startLimitOps(ctx context.Context, tenant, person, agent string) ([]store.Op, error) {
	const op = "pacerelle.pair"
	type scope struct {
		field, name, party string
		limit              int
	}
	scopes := []scope{{"person", "person", person, r.limits.StartsPerPerson}, {"agent", "agent", agent, r.limits.StartsPerAgent}}
	now := r.now()
	cutoff := now.Add(-r.limits.Window).UnixMilli()
	var ops []store.Op
	for _, s := range scopes {
		k := pairingLimits.KeyOf(tenant, table.Values{"scope": s.name, "party": s.party})
		cur, it, err := records.Get[PairingLimit](ctx, r.st, op, s.field, s.party, k)
		cond := store.IfVersion(it.Version)
		if vp.IsKind(err, vp.KindNotFound) {
			cur, cond, err = PairingLimit{Scope: s.name, Party: s.party}, store.IfNotExists, nil
		}
		if err != nil {
			return nil, err
		}
		cur.Starts = slices.DeleteFunc(cur.Starts, func(at int64) bool { return at <= cutoff })
		if len(cur.Starts) >= s.limit {
			retry := time.UnixMilli(cur.Starts[len(cur.Starts)-s.limit]).Add(r.limits.Window)
			wait := retry.Sub(now).Round(time.Second)
			e := vp.Errorf(op, vp.KindRateLimited, s.field, "at most %d pairing starts per %s per %s, and %s has reached it; retry after %s (in %s)",
				s.limit, s.name, r.limits.Window, s.party, retry.UTC().Format(time.RFC3339), wait)
			e.RetryAfter = wait
			return nil, e
		}
		cur.Starts = append(cur.Starts, now.UnixMilli())
		cur.ExpiresAt = now.Add(r.limits.Window).Unix() + 1
		item, err := pairingLimits.Item(op, tenant, cur)
		if err != nil {
			return nil, err
		}
		ops = append(ops, store.Put(item, cond))
	}
	return ops, nil
}

// failureLeft says what a failed pairing step leaves, for its refusal.
func (r *Relay) failureLeft(p wire.Pairing) string {
	if p.Failures >= r.limits.MaxFailures {
		return fmt.Sprintf("that is %d of %d failures: the pending pairing is dropped; start it again (at most %d starts per person per %s)",
			p.Failures, r.limits.MaxFailures, r.limits.StartsPerPerson, r.limits.Window)
	}
	return fmt.Sprintf("failure %d of %d: at %d the pending pairing is dropped", p.Failures, r.limits.MaxFailures, r.limits.MaxFailures)
}
