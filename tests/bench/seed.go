package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/message"
	peerprofile "github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The database and search index files inside a data dir, as
// functions/vantagepeers names them.
const (
	dbFile     = "vantagepeers.db"
	searchFile = "search.db"
)

// orchestrators of the seeded team; the measured calls go from alice to bob.
var orchestrators = []string{
	"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
	"mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yvonne",
}

// seedConfig describes the history to write.
type seedConfig struct {
	DataDir  string
	Messages int
	// Unread is how many of the most recent receipts each orchestrator
	// leaves unread; all older ones are marked read.
	Unread int
	// Span is how far back in time the history starts.
	Span time.Duration
	// Seed makes the history reproducible.
	Seed uint64
	// Synchronous is the SQLite durability level used while seeding.
	Synchronous string
}

// seedStats reports what seeding wrote and how long it took.
type seedStats struct {
	Messages  int
	Receipts  int
	Unread    map[string]int
	Sends     time.Duration
	MarkReads time.Duration
	Index     time.Duration
	Total     time.Duration
}

// services is the product's embedded wiring (functions/vantagepeers/app.go
// openApp), minus the master-token bootstrap the benchmark does not need.
type services struct {
	store   *sqlite.Store
	index   *searchlocal.Index
	keyword *keyword.Service // with the keyword-search index, as the binary wires it
	// unindexed is the same service without the index: seeding writes
	// through it and backfills the index once at the end, as a server
	// upgraded to keyword search would.
	unindexed *keyword.Service
	profiles  *peerprofile.Service
	iframes   *iframe.Service
	mandates  *mandate.Service
	// messages is searchable by keyword; unindexedMessages, like
	// unindexed, is what seeding writes through.
	messages          *message.Service
	unindexedMessages *message.Service
}

func openServices(ctx context.Context, dataDir string, opts sqlite.Options, now func() time.Time) (*services, error) {
	opts.Path = filepath.Join(dataDir, dbFile)
	st, err := sqlite.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	key, err := auth.EnsureKey(ctx, st, "cursor")
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	signer, err := listing.NewSigner(key)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dataDir, searchFile), Synchronous: opts.Synchronous})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	profiles := peerprofile.New(peerprofile.Options{Store: st, Cursors: signer, Now: now})
	msgs := message.New(message.Options{Store: st, Cursors: signer, Now: now, Directory: profiles, Search: &search.Writer{Index: idx}})
	// check_messages reads the recipient's stuck work, as app.Build wires it.
	msgs.UseWork(task.New(task.Options{Store: st, Cursors: signer, Now: now}))
	return &services{store: st, index: idx,
		keyword:           keyword.New(keyword.Options{Store: st, Cursors: signer, Now: now, Index: idx}),
		unindexed:         keyword.New(keyword.Options{Store: st, Cursors: signer, Now: now}),
		profiles:          profiles,
		iframes:           iframe.New(iframe.Options{Store: st, Now: now}),
		mandates:          mandate.New(mandate.Options{Store: st, Cursors: signer, Now: now}),
		messages:          msgs,
		unindexedMessages: message.New(message.Options{Store: st, Cursors: signer, Now: now, Directory: profiles}),
	}, nil
}

// mcpOptions is o with the tools of the services the benchmarks use.
func (s *services) mcpOptions(o mcpserver.Options) mcpserver.Options {
	o.Toolsets = append(o.Toolsets, mcpserver.KeywordTools(s.keyword), mcpserver.ProfileTools(s.profiles),
		mcpserver.MessageTools(s.messages), mcpserver.IframeTools(s.iframes), mcpserver.MandateTools(s.mandates))
	return o
}

func (s *services) Close() error { return errors.Join(s.index.Close(), s.store.Close()) }

// localAdmin is the principal the stdio server acts as: the local owner,
// admin of the default tenant.
func localAdmin() vp.Principal {
	p := auth.MasterPrincipal(vp.DefaultTenant)
	p.TokenID = "local-owner"
	return p
}

// fakeClock hands out times from start, advancing by step on every call, so
// that a seeded history is spread over days instead of one second.
// It never passes limit, so seeded ids always sort before the ones the
// benchmark mints later with the real clock.
type fakeClock struct {
	t, limit time.Time
	step     time.Duration
}

func (c *fakeClock) now() time.Time {
	t := c.t
	if t.After(c.limit) {
		return c.limit
	}
	c.t = c.t.Add(c.step)
	return t
}

// seed writes cfg.Messages messages among the orchestrators through the
// domain service, then marks all but the cfg.Unread most recent receipts of
// each inbox read. It must run before any server opens the data dir.
func seed(ctx context.Context, cfg seedConfig, progress func(string)) (seedStats, error) {
	start := time.Now()
	if cfg.Span <= 0 {
		cfg.Span = 30 * 24 * time.Hour
	}
	// Each Send reads the clock a few times (ids, createdAt); stepping by a
	// fraction of the span per read spreads the history over Span and keeps
	// every seeded id older than anything the benchmark sends later.
	clock := &fakeClock{t: start.Add(-cfg.Span), limit: start, step: cfg.Span / time.Duration(max(1, 8*cfg.Messages))}
	svc, err := openServices(ctx, cfg.DataDir, sqlite.Options{Synchronous: cfg.Synchronous}, clock.now)
	if err != nil {
		return seedStats{}, err
	}
	defer svc.Close()
	p := localAdmin()
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))

	// Profiles put everyone on the broadcast channel.
	for _, o := range orchestrators {
		if _, err := svc.profiles.SetSummary(ctx, p, o, o+"-main", "working on "+o+"'s backlog"); err != nil {
			return seedStats{}, fmt.Errorf("seed profile %s: %w", o, err)
		}
	}

	st := seedStats{Unread: map[string]int{}}
	inbox := map[string][]string{} // recipient -> receipt ids, oldest first
	for i := range cfg.Messages {
		from := orchestrators[rng.IntN(len(orchestrators))]
		channel := pickChannel(rng, from)
		res, err := svc.unindexedMessages.Send(ctx, p, message.SendInput{
			From: from, FromInstanceID: from + "-main", Channel: channel, Content: content(rng, i),
		})
		if err != nil {
			return seedStats{}, fmt.Errorf("seed message %d (%s -> %s): %w", i, from, channel, err)
		}
		st.Messages++
		for _, r := range res.Recipients {
			inbox[r.Orchestrator] = append(inbox[r.Orchestrator], r.ReceiptID)
			st.Receipts++
		}
		if progress != nil && (i+1)%20000 == 0 {
			progress(fmt.Sprintf("sent %s/%s", thousands(i+1), thousands(cfg.Messages)))
		}
	}
	st.Sends = time.Since(start)

	marked := 0
	for _, o := range orchestrators {
		ids := inbox[o]
		keep := min(cfg.Unread, len(ids))
		old := ids[:len(ids)-keep]
		for len(old) > 0 {
			batch := old[:min(vp.MaxReceiptIDsPerOp, len(old))]
			old = old[len(batch):]
			n, err := svc.unindexedMessages.MarkRead(ctx, p, batch)
			if err != nil {
				return seedStats{}, fmt.Errorf("seed mark read for %s: %w", o, err)
			}
			marked += n
		}
		st.Unread[o] = keep
	}
	st.MarkReads = time.Since(start) - st.Sends
	// The server backfills an index without its marker at start, in the
	// background: do it here, so that it is not measured.
	indexStart := time.Now()
	if _, err := svc.keyword.EnsureIndexed(ctx, vp.DefaultTenant); err != nil {
		return seedStats{}, fmt.Errorf("seed: indexing for keyword search: %w", err)
	}
	st.Index = time.Since(indexStart)
	if err := svc.Close(); err != nil {
		return seedStats{}, err
	}
	st.Total = time.Since(start)
	if marked != st.Receipts-sumValues(st.Unread) {
		return st, fmt.Errorf("seed: marked %d receipts read, expected %d", marked, st.Receipts-sumValues(st.Unread))
	}
	return st, nil
}

// pickChannel chooses recipients like a working team: mostly one peer,
// sometimes a few, now and then everyone.
func pickChannel(rng *rand.Rand, from string) string {
	other := func() string {
		for {
			if o := orchestrators[rng.IntN(len(orchestrators))]; o != from {
				return o
			}
		}
	}
	switch r := rng.IntN(100); {
	case r < 88:
		return other()
	case r < 97:
		n := 2 + rng.IntN(3)
		seen := map[string]bool{}
		var out []string
		for len(out) < n {
			if o := other(); !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
		return strings.Join(out, ",")
	default:
		return message.Broadcast
	}
}

var words = strings.Fields(`the api schema is merged rebase your branch tests fail on
main after the migration please review pr deploy staging looks good ticket blocked waiting
for design hero section done eta thirty minutes can you take the auth refactor cache layer
flaky on ci retry with a clean module cache i will pair on this after lunch`)

// content is a message body of 60 to 400 bytes.
func content(rng *rand.Rand, i int) string {
	n := 60 + rng.IntN(340)
	var b strings.Builder
	fmt.Fprintf(&b, "#%d ", i)
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
