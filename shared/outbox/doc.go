// Package outbox makes side effects outside the store reliable: a change
// and the jobs it causes are committed in one transaction, and a worker
// runs the jobs afterwards with retries, exponential backoff with jitter,
// and dead letters. Nothing that must happen is logged and dropped.
//
// It serves two shapes of side effect:
//
//   - Jobs (Handle + Enqueue): one handler per topic, for effects the
//     writer owns — an index write after a commit, a GitHub comment.
//   - Events (Subscribe + Publish): after-commit observers. A capability
//     subscribes in wiring (main) to another's topic ("task.completed")
//     without editing the publisher's package. The publisher writes one
//     event in its transaction; the worker fans it out to one delivery job
//     per subscriber (in one transaction with the event's removal), so each
//     subscriber has its own attempts, backoff and dead letter: one that
//     fails does not replay the others. PublishInline does that fan-out at
//     publish time instead, for an event its caller delivers itself right
//     after the commit (RunInline): each delivery then costs its handler
//     and its removal, like a job of EnqueueInline.
//
// # In a domain package
//
// The caller declares the small interface it needs and appends the ops to
// its own Write, so that one user action stays one transaction:
//
//	type effects interface {
//		Publish(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (outbox.Pending, error)
//		Kick(p ...outbox.Pending)
//	}
//
//	func (s *Service) Complete(ctx context.Context, tenant, id string) error {
//		ops := []store.Op{store.Put(taskItem, store.IfVersion(v))}
//		ev, err := s.effects.Publish(ctx, tenant, "task.completed", id, payload)
//		if err != nil {
//			return err
//		}
//		ops = append(ops, ev.Ops()...)
//		if err := s.st.Write(ctx, ops...); err != nil {
//			return err
//		}
//		s.effects.Kick(ev) // near-synchronous; the committed job is the backstop
//		return nil
//	}
//
// # In wiring
//
//	ob, _ := outbox.New(outbox.Options{Store: st, Logger: log})
//	_ = ob.Handle("search.index", indexer.HandleJob)
//	_ = ob.Subscribe("task.completed", "mission.autocomplete", missions.OnTaskCompleted)
//	_ = ob.Subscribe("task.completed", "github.comment", gh.OnTaskCompleted)
//	go ob.Run(ctx) // registration is closed from here on
//
// On AWS a scheduled Lambda calls Drain, and a Lambda that committed jobs
// calls Flush before it returns (there is no background worker in a
// Lambda).
//
// # Deduplication
//
// A non-empty dedup key makes the job's id a hash of (tenant, topic, dedup
// key), and the transaction also writes a dedup record under that id, kept
// for Options.DedupWindow after the job is gone. Enqueue and Publish read
// that record first: when it exists they return a Pending whose Duplicate
// is true and which has no ops, so a redelivered webhook commits its own
// writes without a second job instead of failing. Two callers racing with
// the same key before either commits both get ops; the second Write fails
// with a *store.ConditionError that IsDuplicate recognises — retry the
// transaction (its next Enqueue sees the duplicate) or treat it as done.
//
// # The handler contract
//
// Delivery is at least once: a runner that dies after the external call
// but before the job's removal commits leaves a job that runs again after
// its lease expires. A handler must therefore be idempotent under Job.ID,
// which is stable across retries, crashes and redeliveries: pass it as the
// idempotency key of the external call (GitHub, a push service), or check
// before acting. A handler returns:
//
//   - nil: done; the job is deleted.
//   - an error of kind vp.KindRateLimited: retried after its RetryAfter
//     (vp.RateLimited(op, retryAfter, err)), or after the backoff when it
//     gives none.
//   - Permanent(err): never retried; the job goes to dead letters at once.
//   - any other error (vp.KindUnavailable included): retried with
//     exponential backoff and jitter; after Options.MaxAttempts deliveries
//     the job goes to dead letters with its last error.
//
// A handler must finish within Options.Lease (its context says so): past
// it another runner may take the job.
//
// # Leases
//
// A runner leases a due job with a conditional write on its version
// (store.IfVersion) that moves its due time to the end of the lease: of any
// number of goroutines, processes on one SQLite file or Lambdas on one
// DynamoDB table, exactly one wins each lease. Success deletes the job;
// failure writes the next due time or the dead letter, again conditional
// on the leased version so that a runner whose lease ran out changes
// nothing.
//
// # Keys (shared/store/KEYS.md)
//
//	job                   table  T#<tenant>#OB#<id> / JOB
//	dedup record (TTL)    table  T#<tenant>#OB#<id> / DEDUP
//	due jobs              gsi1   OB#READY / <dueAt 13 digits>#<id>
//	dead letters          gsi1   OB#DEAD  / <deadAt 13 digits>#<id>
//	dead letters, tenant  gsi2   T#<tenant>#OBDEAD / <deadAt 13 digits>#<id>
//
// The due and dead partitions are global, like the embedding queue's: one
// worker serves every tenant; each entry names its tenant.
//
// # Why not queue/storequeue
//
// storequeue is the local implementation of the queue.Queue port, whose
// other implementation is SQS, and memory, jobs and awsapp are written
// against that port. The outbox needs what SQS cannot give (enqueueing in
// a DynamoDB transaction, on AWS too) and what the port does not say: a
// retry-after per failure, permanent failures, jitter, per-tenant dead
// letters, dedup records that outlive the job, fan-out to subscribers and
// running specific jobs right after their commit (Kick, Flush — on
// DynamoDB the due index lags its writes). Growing queue.Queue for that
// would change SQS and its users for nothing, so the outbox keeps
// storequeue's lease design (IfVersion on a due-time index) in its own
// records.
package outbox
