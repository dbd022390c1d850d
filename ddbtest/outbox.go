package ddbtest

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// outboxKeyAttr is the outbox table's partition key, as the construct
// (lambdaidemcdk.NewOutbox) and the outbox item have it.
const outboxKeyAttr = "id"

// outboxTable returns the kit's outbox table for the idempotency table
// table: the one optFns name (dynamostore.Options.OutboxTable), else
// table+"-outbox", with optFns naming it.
func outboxTable(table string, optFns []func(*dynamostore.Options)) (string, []func(*dynamostore.Options)) {
	var o dynamostore.Options
	for _, f := range optFns {
		f(&o)
	}
	if o.OutboxTable != "" {
		return o.OutboxTable, optFns
	}
	name := table + "-outbox"
	return name, append(optFns[:len(optFns):len(optFns)], func(o *dynamostore.Options) { o.OutboxTable = name })
}

// CreateOutboxTable creates an outbox table as the construct does: the
// partition key "id" (S) and TTL on "expiration". (A stream, which the
// in-process endpoint does not have, is the relay's input in AWS: in a
// test, [Kit.OutboxItems] are what the stream would carry.)
func CreateOutboxTable(ctx context.Context, client TableAPI, table string) error {
	return CreateTable(ctx, client, table, func(o *dynamostore.Options) {
		o.KeyAttr, o.SortKeyAttr, o.SortKeyValue, o.ExpirationAttr = outboxKeyAttr, "", "", "expiration"
	})
}

// OutboxItems returns the items of the kit's outbox table as they are now,
// read with a consistent scan, ordered by key: each is the new image of
// the stream record DynamoDB Streams would carry for its last write, so a
// test runs the outbox relay on them (ddbtest/frontdoor.RelayOutbox does).
func (k *Kit) OutboxItems(ctx context.Context) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(k.Client, &dynamodb.ScanInput{TableName: aws.String(k.Outbox), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ddbtest: scan of the outbox table %s: %w", k.Outbox, err)
		}
		items = append(items, page.Items...)
	}
	key := func(i int) string {
		s, _ := items[i][outboxKeyAttr].(*types.AttributeValueMemberS)
		if s == nil {
			return ""
		}
		return s.Value
	}
	sort.SliceStable(items, func(i, j int) bool { return key(i) < key(j) })
	return items, nil
}
