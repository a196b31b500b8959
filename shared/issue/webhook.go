package issue

import (
	"context"

	"github.com/vantagepeers/vantagepeers/webhooks"
)

// Deliver handles a verified GitHub webhook delivery: the
// webhooks.Dispatcher the webhook handler calls. Its writes commit with
// the delivery's dedup record, so a redelivery changes nothing.
func (s *Service) Deliver(ctx context.Context, d webhooks.Delivery) (webhooks.Outcome, error) {
	seen, err := d.Seen()
	if err != nil {
		return "", err
	}
	out, err := s.HandleEvent(ctx, Event{Tenant: d.Tenant, Name: d.Event, Body: d.Body, Seen: seen,
		IsRedelivery: func(err error) bool { return webhooks.IsRedelivery(err, d) }})
	return webhooks.Outcome(out), err
}
