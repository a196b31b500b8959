package clerk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The exchange's rate limit: a sliding window per Clerk user, in the store.
const (
	RateLimit  = 5 // requests per user per RateWindow
	RateWindow = time.Minute
)

// window is a Clerk user's recent requests (Unix ms), stored as the list
// alone, and when the record may vanish.
type window struct {
	sub     string
	times   []int64
	expires int64
}

var windows = table.Declare(table.Schema[window]{
	Entity:  "Clerk rate-limit window",
	Global:  true,
	Primary: table.Key{PK: "CLERKRL#{sub}", SK: "RL", Pattern: "Clerk rate-limit window", Note: "2-minute TTL"},
	Fields:  func(w window) table.Values { return table.Values{"sub": w.sub} },
	Encode:  func(w window) ([]byte, error) { return json.Marshal(w.times) },
	Expires: func(w window) int64 { return w.expires },
})

// WindowDoc describes the window's key for KEYS.md.
func WindowDoc() table.Doc { return windows.Doc() }

// Allow records one request of sub at now() and reports whether it is
// within RateLimit per RateWindow. A refused request is not counted.
func Allow(ctx context.Context, st store.Store, sub string, now func() time.Time) (bool, error) {
	const op = "clerk.rate"
	key := windows.KeyOf("", table.Values{"sub": sub})
	allowed := false
	err := table.Conflicts{Op: op, Max: 10, Exhausted: func() error { return errors.New("rate-limit record kept changing") }}.Retry(ctx, func() error {
		now := now()
		var times []int64
		cond := store.IfNotExists
		it, err := st.Get(ctx, key)
		switch {
		case err == nil:
			_ = json.Unmarshal(it.Data, &times)
			cond = store.IfVersion(it.Version)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		cut := now.Add(-RateWindow).UnixMilli()
		kept := times[:0]
		for _, t := range times {
			if t > cut {
				kept = append(kept, t)
			}
		}
		if len(kept) >= RateLimit {
			allowed = false
			return nil
		}
		kept = append(kept, now.UnixMilli())
		next, err := windows.Item(op, "", window{sub: sub, times: kept, expires: now.Add(2 * RateWindow).Unix()})
		if err != nil {
			return err
		}
		if err := st.Write(ctx, store.Put(next, cond)); err != nil {
			return err
		}
		allowed = true
		return nil
	})
	return allowed && err == nil, err
}

// UserName is the name a Clerk user acts as: the username, the name claim,
// the e-mail's local part, or user-<end of the id>; made a valid
// orchestrator id.
func UserName(c Claims) string {
	for _, v := range []string{c.Username, c.Name, strings.SplitN(c.Email, "@", 2)[0]} {
		v = strings.TrimSpace(v)
		if v != "" && vp.CheckName("", "", v, true) == nil && vp.NormalizeOrchestrator(v) != vp.SystemCaller {
			return v
		}
	}
	tail := c.Sub
	if len(tail) > 8 {
		tail = tail[len(tail)-8:]
	}
	return "user-" + strings.ToLower(tail)
}
