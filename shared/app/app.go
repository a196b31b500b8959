// Package app is the composition root: Build constructs every service of
// VantagePeers over the ports a backend provides, wires the outbox's
// handlers and subscribers, and returns them. The embedded binary
// (functions/vantagepeers), each Lambda (shared/awsapp) and the tests call
// it; nothing else calls a service's New outside that service's own tests.
//
// What each capability contributes — its tables, jobs, routes, outbox
// wiring and tools — is declared once, in its entry of Modules; KEYS.md,
// the job catalogue, the route table, the CDK stack's generated tables
// and tools/list are derived from that list.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
)

// Group is a set of modules a process builds: a Lambda function builds
// only the groups it needs (least privilege: it reads no secret and holds
// no client of a group it does not build).
type Group uint8

const (
	// Coordination: the agents' shared state — profiles, messages, tasks,
	// missions and the rest, GitHub issues and the error monitor — with the
	// outbox that carries their side effects.
	Coordination Group = 1 << iota
	// Memory: memories and their search (needs Index, Embedder and Queue).
	Memory
	// Relay: the Pacerelle relay.
	Relay
	// All groups: the embedded binary.
	All = Coordination | Memory | Relay
	// Core modules are built in every process, whatever its groups: the
	// outbox, tokens and the OAuth server, each only from its ports.
	Core Group = 1 << 7
)

// Build constructs the services of the modules of p.Groups over p, in the
// order of Modules, then wires their outbox handlers and subscribers.
func Build(ctx context.Context, p Ports) (*Services, error) {
	if p.Store == nil {
		return nil, errors.New("app: Ports.Store is required")
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Egress == nil {
		p.Egress = egress.New(egress.Options{})
	}
	s := &Services{Log: p.Logger, Store: p.Store, Index: p.Index, Limiter: p.Limiter, groups: p.Groups}
	mods := Modules()
	for _, m := range mods {
		if m.Build == nil || !m.builtIn(p.Groups) {
			continue
		}
		if err := m.Build(ctx, &p, s); err != nil {
			return nil, fmt.Errorf("app: building %s: %w", m.Name, err)
		}
	}
	if err := wireOutbox(s, mods, p.Groups); err != nil {
		return nil, err
	}
	return s, nil
}

// WireOutbox registers every built module's outbox handlers and
// subscribers on s.Outbox. Build does it; a test that stands for a
// restarted process (an outbox with another clock) does it again.
func WireOutbox(s *Services) error {
	return wireOutbox(s, Modules(), s.groups)
}

func wireOutbox(s *Services, mods []Module, g Group) error {
	if s.Outbox == nil {
		return nil
	}
	var errs []error
	for _, m := range mods {
		if m.Wire != nil && m.builtIn(g) {
			errs = append(errs, m.Wire(s))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app: wiring the outbox: %w", err)
	}
	return nil
}

// Close stops what the services run in the background; the backend closes
// its ports.
func (s *Services) Close() {
	if s.Outbox != nil {
		s.Outbox.Close() // its batched removals go to the store first
	}
}
