package coord

// maxUpsertAttempts bounds the optimistic-concurrency loop of a write that
// many writers may race on (iframe sessions). It was declared next to the
// diary's upsert, which moved to shared/diary with its own copy; delete it
// once iframe.go stops using it.
const maxUpsertAttempts = 40
