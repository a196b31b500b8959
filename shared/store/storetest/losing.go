package storetest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// LosingWrites is a store whose writes, once Armed, lose their condition
// (store.ErrConditionFailed) after running Meanwhile (another writer's
// change, when set): the worst case of a read-modify-write loop. Lost
// counts the writes it refused.
type LosingWrites struct {
	store.Store
	Armed     atomic.Bool
	Lost      atomic.Int32
	Meanwhile func()
}

func (s *LosingWrites) Write(ctx context.Context, ops ...store.Op) error {
	if !s.Armed.Load() {
		return s.Store.Write(ctx, ops...)
	}
	s.Lost.Add(1)
	if s.Meanwhile != nil {
		s.Meanwhile()
	}
	return fmt.Errorf("put: %w", store.ErrConditionFailed)
}
