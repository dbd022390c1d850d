package ddbtest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// TestKitCarriesTheOutboxTable: a handler over the kit's store stages
// outbox messages without any setup; they commit to the kit's outbox
// table, one item per operation, in key order; a table the options name is
// the one created and used.
func TestKitCarriesTheOutboxTable(t *testing.T) {
	ctx := context.Background()
	for _, named := range []bool{false, true} {
		var optFns []func(*dynamostore.Options)
		if named {
			own := TableName(t, "own-outbox")
			optFns = append(optFns, func(o *dynamostore.Options) { o.OutboxTable = own })
		}
		kit := NewKit(t, optFns...)
		if kit.Outbox == "" || kit.Outbox == kit.Table || kit.Store.Options().OutboxTable != kit.Outbox {
			t.Fatalf("kit outbox %q, table %q, store's %q", kit.Outbox, kit.Table, kit.Store.Options().OutboxTable)
		}
		guard, err := lambdaidem.New(kit.Store)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"b", "a", "b"} {
			_, err := lambdaidem.Do(ctx, guard, lambdaidem.Call[string]{Operation: "Accept", Key: key}, func(ctx context.Context) (string, error) {
				_, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: key})
				return "", err
			})
			if err != nil {
				t.Fatalf("named %v: %v", named, err)
			}
		}
		items, err := kit.OutboxItems(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 {
			t.Fatalf("named %v: %d outbox items; want 2 (one per operation)", named, len(items))
		}
		first := items[0]["id"].(*types.AttributeValueMemberS).Value
		second := items[1]["id"].(*types.AttributeValueMemberS).Value
		if first >= second {
			t.Fatalf("outbox items not in key order: %s, %s", first, second)
		}
	}
}
