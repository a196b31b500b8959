// Package dynamo implements the store port on one DynamoDB table.
//
// Item layout (attribute names are fixed; see CreateTable):
//
//	pk, sk           S  the table key
//	gsiNpk, gsiNsk   S  the item's key in index gsiN (N = 1..4); absent when
//	                    the item's key there is zero, which keeps the indexes sparse
//	ttl              N  Unix seconds after which the item is dead; absent for 0.
//	                    DynamoDB's TTL deletes it eventually; until then every
//	                    read and every condition treats it as absent
//	ver              N  version, maintained here: 1 on creation, +1 on every put
//	data             B  the entity
//
// A single op is one conditional UpdateItem or DeleteItem (a lone Check is a
// consistent GetItem); several ops are one TransactWriteItems.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Attribute names of the table.
const (
	AttrPK      = "pk"
	AttrSK      = "sk"
	AttrTTL     = "ttl"
	AttrVersion = "ver"
	AttrData    = "data"
)

// GSIName returns the name of secondary index idx ("gsi1".."gsi4").
func GSIName(idx store.Index) string { return fmt.Sprintf("gsi%d", int(idx)) }

// GSIAttrs returns the partition and sort key attribute names of index idx.
func GSIAttrs(idx store.Index) (pk, sk string) {
	return fmt.Sprintf("gsi%dpk", int(idx)), fmt.Sprintf("gsi%dsk", int(idx))
}

// Options configures New.
type Options struct {
	// Client talks to DynamoDB (or DynamoDB Local).
	Client *dynamodb.Client
	// Table is the table name.
	Table string
	// Now is the clock used for TTL checks (time.Now when nil).
	Now func() time.Time
}

// Store is the DynamoDB backend. It is safe for concurrent use.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

var _ store.Store = (*Store)(nil)

// New returns a store on opts.Table. It makes no call; see CreateTable.
func New(_ context.Context, opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("store.dynamo.New: nil client")
	}
	if opts.Table == "" {
		return nil, errors.New("store.dynamo.New: empty table name")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{db: opts.Client, table: opts.Table, now: now}, nil
}

// Table is the name of the table.
func (s *Store) Table() string { return s.table }

// Close releases nothing: the client belongs to the caller.
func (s *Store) Close() error { return nil }

// Retry bounds for contention that is not the caller's precondition:
// transaction conflicts, and the rare race of an unconditional put with an
// item expiring or being re-created under it.
const (
	maxAttempts = 25
	backoffBase = 5 * time.Millisecond
	backoffCap  = 400 * time.Millisecond
)

func backoff(ctx context.Context, attempt int) error {
	d := backoffBase << min(attempt, 10)
	if d > backoffCap {
		d = backoffCap
	}
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ---- expressions ----

// expr accumulates the placeholders of one request; DynamoDB refuses
// placeholders that no expression uses, so they are added on use.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// n returns the placeholder of attribute name a.
func (e *expr) n(a string) string {
	p := "#" + a
	e.names[p] = a
	return p
}

// v binds a value to placeholder name (without the colon) and returns it.
func (e *expr) v(name string, av types.AttributeValue) string {
	p := ":" + name
	e.values[p] = av
	return p
}

func (e *expr) num(name string, x int64) string {
	return e.v(name, &types.AttributeValueMemberN{Value: strconv.FormatInt(x, 10)})
}

func (e *expr) namesOrNil() map[string]string {
	if len(e.names) == 0 {
		return nil
	}
	return e.names
}

func (e *expr) valuesOrNil() map[string]types.AttributeValue {
	if len(e.values) == 0 {
		return nil
	}
	return e.values
}

// expired holds when the item has a TTL that has passed at now.
func (e *expr) expired(now int64) string {
	t := e.n(AttrTTL)
	return fmt.Sprintf("(attribute_exists(%s) AND %s > %s AND %s <= %s)", t, t, e.num("zero", 0), t, e.num("now", now))
}

// live holds when a live item has the key.
func (e *expr) live(now int64) string {
	return fmt.Sprintf("(attribute_exists(%s) AND NOT %s)", e.n(AttrPK), e.expired(now))
}

// absent holds when no live item has the key.
func (e *expr) absent(now int64) string {
	return fmt.Sprintf("(attribute_not_exists(%s) OR %s)", e.n(AttrPK), e.expired(now))
}

// cond renders a port precondition ("" for Always).
func (e *expr) cond(c store.Cond, now int64) (string, error) {
	switch c.Kind {
	case store.CondNone:
		return "", nil
	case store.CondNotExists:
		return e.absent(now), nil
	case store.CondExists:
		return e.live(now), nil
	case store.CondVersion:
		return fmt.Sprintf("%s AND %s = %s", e.live(now), e.n(AttrVersion), e.num("want", c.Version)), nil
	}
	return "", fmt.Errorf("%w: unknown condition kind %d", store.ErrInvalid, c.Kind)
}

func keyAV(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// ---- writes ----

// putMode says how an unconditional put computes the new version: an item
// that is live (or absent) gets ver+1 (1 when absent); an expired item is
// absent to the port, so replacing it creates version 1. The two cases need
// different update expressions, so the put is conditioned on the case it
// assumes and flips to the other when that condition fails.
type putMode uint8

const (
	modeLiveOrAbsent putMode = iota
	modeExpired
)

// request is one op rendered for DynamoDB.
type request struct {
	key       map[string]types.AttributeValue
	update    string // UpdateItem for puts
	condition string
	e         *expr
}

func (s *Store) render(op store.Op, mode putMode, now int64) (request, error) {
	e := newExpr()
	r := request{key: keyAV(op.Key), e: e}
	var err error
	switch op.Kind {
	case store.OpPut:
		if op.Cond.Kind == store.CondNone {
			if mode == modeExpired {
				r.condition = e.expired(now)
			} else {
				r.condition = fmt.Sprintf("(attribute_not_exists(%s) OR NOT %s)", e.n(AttrPK), e.expired(now))
			}
		} else if r.condition, err = e.cond(op.Cond, now); err != nil {
			return r, err
		}
		var ver string
		switch {
		case op.Cond.Kind == store.CondNotExists, op.Cond.Kind == store.CondNone && mode == modeExpired:
			ver = e.num("one", 1)
		default:
			ver = fmt.Sprintf("if_not_exists(%s, %s) + %s", e.n(AttrVersion), e.num("zero", 0), e.num("one", 1))
		}
		it := op.Item
		data := it.Data
		if data == nil {
			data = []byte{}
		}
		set := []string{
			e.n(AttrData) + " = " + e.v("data", &types.AttributeValueMemberB{Value: data}),
			e.n(AttrVersion) + " = " + ver,
		}
		var remove []string
		if it.ExpiresAt != 0 {
			set = append(set, e.n(AttrTTL)+" = "+e.num("ttl", it.ExpiresAt))
		} else {
			remove = append(remove, e.n(AttrTTL))
		}
		for g, k := range it.GSI {
			pkA, skA := GSIAttrs(store.Index(g + 1))
			if k.IsZero() {
				remove = append(remove, e.n(pkA), e.n(skA))
				continue
			}
			set = append(set,
				e.n(pkA)+" = "+e.v(pkA, &types.AttributeValueMemberS{Value: k.PK}),
				e.n(skA)+" = "+e.v(skA, &types.AttributeValueMemberS{Value: k.SK}))
		}
		r.update = "SET " + strings.Join(set, ", ")
		if len(remove) > 0 {
			r.update += " REMOVE " + strings.Join(remove, ", ")
		}
	case store.OpDelete, store.OpCheck:
		if r.condition, err = e.cond(op.Cond, now); err != nil {
			return r, err
		}
	default:
		return r, fmt.Errorf("%w: unknown operation kind %d", store.ErrInvalid, op.Kind)
	}
	return r, nil
}

// Write applies ops: one op is a single conditional write, several are one
// TransactWriteItems.
func (s *Store) Write(ctx context.Context, ops ...store.Op) error {
	if err := store.Validate(ops); err != nil {
		return err
	}
	for i, op := range ops {
		if op.Kind < store.OpPut || op.Kind > store.OpCheck {
			return fmt.Errorf("%w: op %d has unknown kind %d", store.ErrInvalid, i, op.Kind)
		}
		if op.Cond.Kind > store.CondVersion {
			return fmt.Errorf("%w: op %d has unknown condition kind %d", store.ErrInvalid, i, op.Cond.Kind)
		}
	}
	if len(ops) == 1 {
		return s.writeOne(ctx, ops[0])
	}
	return s.transact(ctx, ops)
}

func isCondFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

func isConflict(err error) bool {
	var tc *types.TransactionConflictException
	return errors.As(err, &tc)
}

func (s *Store) writeOne(ctx context.Context, op store.Op) error {
	if op.Kind == store.OpCheck {
		return s.checkOne(ctx, op)
	}
	mode := modeLiveOrAbsent
	for attempt := 0; ; attempt++ {
		r, err := s.render(op, mode, s.now().Unix())
		if err != nil {
			return err
		}
		var cond *string
		if r.condition != "" {
			cond = aws.String(r.condition)
		}
		if op.Kind == store.OpPut {
			_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 &s.table,
				Key:                       r.key,
				UpdateExpression:          aws.String(r.update),
				ConditionExpression:       cond,
				ExpressionAttributeNames:  r.e.namesOrNil(),
				ExpressionAttributeValues: r.e.valuesOrNil(),
			})
		} else {
			_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:                 &s.table,
				Key:                       r.key,
				ConditionExpression:       cond,
				ExpressionAttributeNames:  r.e.namesOrNil(),
				ExpressionAttributeValues: r.e.valuesOrNil(),
			})
		}
		switch {
		case err == nil:
			return nil
		case isCondFailed(err) && op.Kind == store.OpPut && op.Cond.Kind == store.CondNone:
			// Not the caller's condition: the item is not in the state this
			// mode assumed. Switch and try again.
			mode = 1 - mode
		case isCondFailed(err):
			return &store.ConditionError{Index: 0, Key: op.Key}
		case isConflict(err):
			// A transaction holds the item; try again.
		default:
			return classify(fmt.Errorf("store.dynamo: %s %s / %s: %w", opName(op.Kind), op.Key.PK, op.Key.SK, err))
		}
		if attempt+1 >= maxAttempts {
			return fmt.Errorf("store.dynamo: %s %s / %s: gave up after %d attempts under contention: %w",
				opName(op.Kind), op.Key.PK, op.Key.SK, maxAttempts, err)
		}
		if mode == modeExpired && isCondFailed(err) {
			continue // flipping needs no pause
		}
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("store.dynamo: %s %s / %s: %w", opName(op.Kind), op.Key.PK, op.Key.SK, err)
		}
	}
}

// checkOne evaluates a lone Check with a consistent read.
func (s *Store) checkOne(ctx context.Context, op store.Op) error {
	if op.Cond.Kind == store.CondNone {
		return nil
	}
	it, err := s.Get(ctx, op.Key)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	ok := false
	switch op.Cond.Kind {
	case store.CondNotExists:
		ok = !found
	case store.CondExists:
		ok = found
	case store.CondVersion:
		ok = found && it.Version == op.Cond.Version
	}
	if !ok {
		return &store.ConditionError{Index: 0, Key: op.Key}
	}
	return nil
}

func opName(k store.OpKind) string {
	switch k {
	case store.OpPut:
		return "put"
	case store.OpDelete:
		return "delete"
	case store.OpCheck:
		return "check"
	}
	return "op"
}

func (s *Store) transact(ctx context.Context, ops []store.Op) error {
	modes := make([]putMode, len(ops))
	for attempt := 0; ; attempt++ {
		now := s.now().Unix()
		var items []types.TransactWriteItem
		var opIndex []int // TransactItems[i] is ops[opIndex[i]]
		for i, op := range ops {
			if op.Kind == store.OpCheck && op.Cond.Kind == store.CondNone {
				continue // a check without a condition checks nothing
			}
			r, err := s.render(op, modes[i], now)
			if err != nil {
				return err
			}
			var cond *string
			if r.condition != "" {
				cond = aws.String(r.condition)
			}
			var ti types.TransactWriteItem
			switch op.Kind {
			case store.OpPut:
				ti.Update = &types.Update{TableName: &s.table, Key: r.key, UpdateExpression: aws.String(r.update),
					ConditionExpression: cond, ExpressionAttributeNames: r.e.namesOrNil(), ExpressionAttributeValues: r.e.valuesOrNil()}
			case store.OpDelete:
				ti.Delete = &types.Delete{TableName: &s.table, Key: r.key,
					ConditionExpression: cond, ExpressionAttributeNames: r.e.namesOrNil(), ExpressionAttributeValues: r.e.valuesOrNil()}
			case store.OpCheck:
				ti.ConditionCheck = &types.ConditionCheck{TableName: &s.table, Key: r.key,
					ConditionExpression: cond, ExpressionAttributeNames: r.e.namesOrNil(), ExpressionAttributeValues: r.e.valuesOrNil()}
			}
			items = append(items, ti)
			opIndex = append(opIndex, i)
		}
		if len(items) == 0 {
			return nil
		}
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			if isConflict(err) {
				if attempt+1 < maxAttempts {
					if berr := backoff(ctx, attempt); berr != nil {
						return fmt.Errorf("store.dynamo: transaction: %w", berr)
					}
					continue
				}
			}
			return classify(fmt.Errorf("store.dynamo: transaction of %d ops: %w", len(ops), err))
		}
		flipped, conflict := false, false
		for ri, reason := range tce.CancellationReasons {
			if ri >= len(opIndex) {
				break
			}
			i := opIndex[ri]
			switch aws.ToString(reason.Code) {
			case "ConditionalCheckFailed":
				if ops[i].Kind == store.OpPut && ops[i].Cond.Kind == store.CondNone {
					modes[i] = 1 - modes[i]
					flipped = true
					continue
				}
				return &store.ConditionError{Index: i, Key: ops[i].Key}
			case "TransactionConflict":
				conflict = true
			}
		}
		if (!flipped && !conflict) || attempt+1 >= maxAttempts {
			return classify(fmt.Errorf("store.dynamo: transaction of %d ops: %w", len(ops), err))
		}
		if conflict {
			if berr := backoff(ctx, attempt); berr != nil {
				return fmt.Errorf("store.dynamo: transaction: %w", berr)
			}
		}
	}
}

// ---- reads ----

// Get returns the live item at k.
func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if k.PK == "" || k.SK == "" {
		return store.Item{}, fmt.Errorf("%w: empty key", store.ErrInvalid)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &s.table,
		Key:            keyAV(k),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, classify(fmt.Errorf("store.dynamo: get %s / %s: %w", k.PK, k.SK, err))
	}
	if out.Item == nil {
		return store.Item{}, fmt.Errorf("%w: %s / %s", store.ErrNotFound, k.PK, k.SK)
	}
	it, err := decode(out.Item)
	if err != nil {
		return store.Item{}, err
	}
	if !store.Live(it.ExpiresAt, s.now()) {
		return store.Item{}, fmt.Errorf("%w: %s / %s", store.ErrNotFound, k.PK, k.SK)
	}
	return it, nil
}

// Query returns up to q.Limit live items of a partition. DynamoDB applies
// Limit before the TTL filter, so pages are read until Limit live items are
// collected or the partition ends.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if err := store.ValidateQuery(q); err != nil {
		return nil, err
	}
	pkA, skA := AttrPK, AttrSK
	var index *string
	if q.Index != store.Primary {
		pkA, skA = GSIAttrs(q.Index)
		index = aws.String(GSIName(q.Index))
	}
	if q.SKPrefix == "" && q.SKFrom != "" && q.SKTo != "" && q.SKFrom > q.SKTo {
		return nil, nil // empty range (DynamoDB refuses BETWEEN with bounds reversed)
	}

	var start map[string]types.AttributeValue
	if q.After != nil {
		a := *q.After
		ik := a.Key
		if q.Index != store.Primary {
			ik = a.Index
		}
		if a.Key.PK == "" || a.Key.SK == "" || ik.PK == "" || ik.SK == "" {
			return nil, fmt.Errorf("%w: incomplete query position", store.ErrInvalid)
		}
		if ik.PK != q.PK {
			return nil, fmt.Errorf("%w: query position is in another partition", store.ErrInvalid)
		}
		// DynamoDB refuses a start key outside the sort-key condition; the
		// port's answer is "nothing left" past the range and "from the start"
		// before it.
		switch skPlace(ik.SK, q) {
		case beforeRange:
			start = nil
		case pastRange:
			return nil, nil
		default:
			start = keyAV(a.Key)
			if q.Index != store.Primary {
				start[pkA] = &types.AttributeValueMemberS{Value: ik.PK}
				start[skA] = &types.AttributeValueMemberS{Value: ik.SK}
			}
		}
	}

	now := s.now()
	e := newExpr()
	kc := e.n(pkA) + " = " + e.v("pk", &types.AttributeValueMemberS{Value: q.PK})
	sk := func() string { return e.n(skA) } // named only when used
	switch {
	case q.SKPrefix != "":
		kc += fmt.Sprintf(" AND begins_with(%s, %s)", sk(), e.v("prefix", &types.AttributeValueMemberS{Value: q.SKPrefix}))
	case q.SKFrom != "" && q.SKTo != "":
		kc += fmt.Sprintf(" AND %s BETWEEN %s AND %s", sk(),
			e.v("from", &types.AttributeValueMemberS{Value: q.SKFrom}), e.v("to", &types.AttributeValueMemberS{Value: q.SKTo}))
	case q.SKFrom != "":
		kc += fmt.Sprintf(" AND %s >= %s", sk(), e.v("from", &types.AttributeValueMemberS{Value: q.SKFrom}))
	case q.SKTo != "":
		kc += fmt.Sprintf(" AND %s <= %s", sk(), e.v("to", &types.AttributeValueMemberS{Value: q.SKTo}))
	}
	filter := "NOT " + e.expired(now.Unix())

	var items []store.Item
	for {
		remaining := q.Limit - len(items)
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 &s.table,
			IndexName:                 index,
			KeyConditionExpression:    aws.String(kc),
			FilterExpression:          aws.String(filter),
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
			ScanIndexForward:          aws.Bool(!q.Reverse),
			ConsistentRead:            aws.Bool(q.Index == store.Primary),
			Limit:                     aws.Int32(int32(min(remaining, math.MaxInt32))),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, classify(fmt.Errorf("store.dynamo: query %s %s: %w", q.Index, q.PK, err))
		}
		for _, av := range out.Items {
			it, err := decode(av)
			if err != nil {
				return nil, err
			}
			if !store.Live(it.ExpiresAt, now) {
				continue
			}
			items = append(items, it)
			if len(items) == q.Limit {
				return items, nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		start = out.LastEvaluatedKey
	}
}

type place uint8

const (
	inRange place = iota
	beforeRange
	pastRange
)

// skPlace says where sort key sk lies relative to q's sort-key condition, in
// q's reading direction.
func skPlace(sk string, q store.Query) place {
	below, above := false, false // sk < every key in range / sk > every key in range
	switch {
	case q.SKPrefix != "":
		if !strings.HasPrefix(sk, q.SKPrefix) {
			below = sk < q.SKPrefix
			above = !below
		}
	default:
		below = q.SKFrom != "" && sk < q.SKFrom
		above = q.SKTo != "" && sk > q.SKTo
	}
	if !below && !above {
		return inRange
	}
	if below != q.Reverse {
		return beforeRange
	}
	return pastRange
}

func decode(av map[string]types.AttributeValue) (store.Item, error) {
	var it store.Item
	str := func(name string) string {
		if v, ok := av[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	num := func(name string) (int64, error) {
		v, ok := av[name].(*types.AttributeValueMemberN)
		if !ok {
			return 0, nil
		}
		x, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("store.dynamo: attribute %s is not an integer: %q", name, v.Value)
		}
		return x, nil
	}
	it.Key = store.Key{PK: str(AttrPK), SK: str(AttrSK)}
	for g := range it.GSI {
		pkA, skA := GSIAttrs(store.Index(g + 1))
		it.GSI[g] = store.Key{PK: str(pkA), SK: str(skA)}
	}
	var err error
	if it.ExpiresAt, err = num(AttrTTL); err != nil {
		return it, err
	}
	if it.Version, err = num(AttrVersion); err != nil {
		return it, err
	}
	if b, ok := av[AttrData].(*types.AttributeValueMemberB); ok {
		it.Data = b.Value
	}
	return it, nil
}

// classify marks DynamoDB refusing a call for its rate — after the SDK's
// own retries gave up — as vp.KindRateLimited, so that MCP callers are told
// to retry and the outbox backs off. DynamoDB states no retry-after, so
// none is given. Other errors are returned unchanged.
func classify(err error) error {
	if err != nil && throttled(err) {
		return vp.RateLimited("store.dynamo", 0, err)
	}
	return err
}

func throttled(err error) bool {
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	if errors.As(err, &pte) || errors.As(err, &rle) {
		return true
	}
	var api interface{ ErrorCode() string } // smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "Throttling", "ProvisionedThroughputExceededException", "RequestLimitExceeded":
			return true
		}
	}
	// A transaction reports per-item reasons instead.
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
				return true
			}
		}
	}
	return false
}
