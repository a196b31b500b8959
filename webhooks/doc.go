// Package webhooks receives GitHub webhook deliveries: it verifies each
// one, hands it to a Dispatcher, and answers GitHub.
//
// The handler (New) serves POST /webhooks/github (the default tenant) and
// POST /webhooks/github/{tenant}. For every request it
//
//   - refuses it with 401 unless X-Hub-Signature-256 is the HMAC-SHA256 of
//     the raw body under the tenant's secret, compared in constant time.
//     The secret is read on every request, so that a rotated secret takes
//     effect at once; a tenant without one refuses everything. The SHA-1
//     X-Hub-Signature is never accepted, and an empty secret never means
//     "unsigned is fine" (both are how go-github's ValidatePayload fails
//     open, which is why it is not used here);
//   - reads at most Options.MaxBody bytes (GitHub's 25 MB cap) and answers
//     413 beyond, without holding a larger body in memory;
//   - answers a ping itself and gives every other event to the Dispatcher,
//     unknown events and actions included: GitHub adds them over time, and
//     the Dispatcher answers Ignored for what it does not handle.
//
// # Exactly once
//
// GitHub does not retry by itself: failed deliveries are redelivered by
// hand or through its API, up to 30 days later, with the same
// X-GitHub-Delivery id. A Dispatcher therefore commits what a delivery
// writes in one store transaction with Delivery.Seen, the dedup record of
// (tenant, delivery id), kept for those 30 days; when that write fails on
// the record (IsRedelivery) the delivery was handled before and the
// Dispatcher answers Duplicate, having changed nothing. A delivery that
// failed (5xx) wrote nothing, so its redelivery is processed afresh.
//
// The same event can also arrive twice with two delivery ids: a repository
// hook and an organisation hook both see it. Delivery dedup cannot catch
// that; the Dispatcher does, by keying its writes by the GitHub entity
// (repository and issue number, say) rather than by the delivery.
//
// # Answers
//
// Every answer is JSON: {"outcome":"accepted|duplicate|ignored",
// "delivery":"<id>"} with 202, 200 or 200, {"ok":true,"event":"ping"} for
// a ping, and {"error":"..."} for a refusal. A Dispatcher error of kind
// vp.KindInvalid is a 400 with its message; vp.KindUnavailable and
// vp.KindRateLimited a 503 (with Retry-After when known), so that the
// operator knows a redelivery will work; anything else a 500 whose details
// are only in the log.
package webhooks
