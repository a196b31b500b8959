package reservation

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// ExpiringWithin is how long before its expiry a reservation is "about to
// expire" for wait_for_activity: time to renew it.
const ExpiringWithin = 10 * time.Minute

// maxHolderScan bounds the reservations of one holder a look reads.
const maxHolderScan = 200

// Expiring is the wait_for_activity source of the caller's reservations
// about to expire (within ExpiringWithin): each arrives when it enters
// that window, so a renewal (which moves its expiry) makes it arrive again
// only when it nears its new expiry.
func (s *Service) Expiring() activity.Source { return expiring{s} }

type expiring struct{ s *Service }

func (expiring) Kind() string { return activity.KindReservations }

func (e expiring) Pending(ctx context.Context, q activity.Query) ([]activity.Item, bool, error) {
	const op = "wait_for_activity"
	rq := rows.Query(q.Tenant, store.GSI1, table.Values{"holder": q.Who})
	items, err := records.QueryAll(ctx, e.s.st, rq, maxHolderScan)
	if err != nil {
		return nil, false, records.Err(op, err)
	}
	now := e.s.now().UnixMilli()
	window := ExpiringWithin.Milliseconds()
	var out []activity.Item
	more := false
	for _, it := range items {
		r, err := records.Decode[row](op, it)
		if err != nil {
			return nil, false, err
		}
		at := r.ExpiresAt - window
		if r.Holder != q.Who || r.ExpiresAt <= now || at > now || at <= q.Since {
			continue
		}
		if len(out) == q.Limit {
			more = true
			break
		}
		mins := (r.ExpiresAt - now + 59_999) / 60_000
		out = append(out, activity.Item{Kind: activity.KindReservations, ID: r.ID, At: at,
			Title: fmt.Sprintf("%s in %s expires in %d min: renew_reservations to keep it", strings.Join(r.Paths, ", "), r.Project, mins)})
	}
	return out, more, nil
}
