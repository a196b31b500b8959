package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TableInput is the CreateTable request of the store's table: pk/sk, four
// GSIs gsi1..gsi4 on gsiNpk/gsiNsk projecting ALL, on-demand billing. The
// infrastructure code can use it to keep the deployed table identical.
func TableInput(table string) *dynamodb.CreateTableInput {
	s := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s(AttrPK), s(AttrSK)},
		KeySchema:            key(AttrPK, AttrSK),
	}
	for i := store.GSI1; i <= store.GSI4; i++ {
		pk, sk := GSIAttrs(i)
		in.AttributeDefinitions = append(in.AttributeDefinitions, s(pk), s(sk))
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(GSIName(i)),
			KeySchema:  key(pk, sk),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return in
}

// CreateTable creates the table when it is missing, waits until it and its
// indexes are ACTIVE, and enables TTL on the ttl attribute. It is idempotent.
func (s *Store) CreateTable(ctx context.Context) error {
	const op = "store.dynamo.CreateTable"
	_, err := s.db.CreateTable(ctx, TableInput(s.table))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("%s %s: %w", op, s.table, err)
	}
	if err := s.waitActive(ctx, 10*time.Minute); err != nil {
		return fmt.Errorf("%s %s: %w", op, s.table, err)
	}
	if err := s.enableTTL(ctx); err != nil {
		return fmt.Errorf("%s %s: %w", op, s.table, err)
	}
	return nil
}

func (s *Store) waitActive(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	delay := 100 * time.Millisecond
	for {
		out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) { // not found: creation not visible yet
			return err
		}
		if err == nil && out.Table != nil && out.Table.TableStatus == types.TableStatusActive {
			ready := true
			for _, g := range out.Table.GlobalSecondaryIndexes {
				if g.IndexStatus != types.IndexStatusActive {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("table not ACTIVE after %s", max)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func (s *Store) enableTTL(ctx context.Context) error {
	out, err := s.db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &s.table})
	if err != nil {
		return err
	}
	if d := out.TimeToLiveDescription; d != nil {
		switch d.TimeToLiveStatus {
		case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
			if aws.ToString(d.AttributeName) == AttrTTL {
				return nil
			}
			return fmt.Errorf("TTL is enabled on attribute %q, want %q", aws.ToString(d.AttributeName), AttrTTL)
		}
	}
	_, err = s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: &s.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrTTL),
			Enabled:       aws.Bool(true),
		},
	})
	return err
}
