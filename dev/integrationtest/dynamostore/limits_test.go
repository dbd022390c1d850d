package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// What a user stages must fail in the test world as it fails on AWS
// (issue 31: "a user's 410 KB business item or 101st action must fail in
// the kit as it fails on AWS"). DynamoDB refuses an item over 400 KB
// ("Constraints in Amazon DynamoDB", Items) and a TransactWriteItems of
// more than 100 actions (API Reference, TransactWriteItems). These tests
// run in whichever world the endpoint gives (the embedded one, or Dynoxide
// with LAMBDAIDEM_WORLD=dynoxide): both must refuse.

// bigOrder is a business write of an order item of size bytes, as
// DynamoDB counts them.
func (e *env) bigOrder(id string, size int) types.TransactWriteItem {
	it := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}
	it["blob"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", size-ddbtest.ItemSize(it)-len("blob"))}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(e.orders), Item: it}}
}

// TestStagedItemOver400KB: a handler stages a 410 KB order. The commit
// fails, the order is not written, and the record is not COMPLETED: a
// retry runs the handler again and, with a 400 KB order, commits.
func TestStagedItemOver400KB(t *testing.T) {
	for _, mode := range modes {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			e := newEnv(t)
			g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Mode = mode })
			size := 410 * 1024
			runs := 0
			handler := func(ctx context.Context) (string, error) {
				runs++
				if err := dynamostore.Stage(ctx, *e.bigOrder("o1", size).Put); err != nil {
					return "", err
				}
				return "ok", nil
			}
			_, err := lambdaidem.Do(context.Background(), g, call("k"), handler)
			if !errors.Is(err, lambdaidem.ErrEffectRejected) {
				t.Fatalf("a 410 KB staged item = %v; want ErrEffectRejected (DynamoDB refuses an item over 400 KB)", err)
			}
			t.Logf("410 KB: %v", err)
			if e.written(t, "o1") {
				t.Fatal("the 410 KB order was written")
			}
			size = 400 * 1024
			out, err := lambdaidem.Do(context.Background(), g, call("k"), handler)
			if err != nil || out != "ok" || runs != 2 || !e.written(t, "o1") {
				t.Fatalf("retry with a 400 KB order = %q, %v after %d runs (written %v); want ok, a second run, the order written", out, err, runs, e.written(t, "o1"))
			}
		})
	}
}

// TestHundredAndFirstAction: the library refuses a 100th staged write
// (with the record, the 101st action) before DynamoDB sees it, and the
// world refuses a TransactWriteItems of 101 actions too, while it commits
// 99 staged writes and the record (100 actions).
func TestHundredAndFirstAction(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t, nil)
	stage := func(n int) func(ctx context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			for i := range n {
				if err := dynamostore.Stage(ctx, *e.order(fmt.Sprintf("o%03d", i)).Put); err != nil {
					return "", err
				}
			}
			return "ok", nil
		}
	}
	_, err := lambdaidem.Do(context.Background(), g, call("k101"), stage(dynamostore.MaxEffects+1))
	if !errors.Is(err, dynamostore.ErrInvalidEffect) {
		t.Fatalf("%d staged writes = %v; want ErrInvalidEffect", dynamostore.MaxEffects+1, err)
	}
	if n := e.orderCount(t); n != 0 {
		t.Fatalf("%d orders written", n)
	}
	if out, err := lambdaidem.Do(context.Background(), g, call("k100"), stage(dynamostore.MaxEffects)); err != nil || out != "ok" {
		t.Fatalf("%d staged writes = %q, %v; want ok", dynamostore.MaxEffects, out, err)
	}
	if n := e.orderCount(t); n != dynamostore.MaxEffects {
		t.Fatalf("%d orders written; want %d", n, dynamostore.MaxEffects)
	}
	var raw []types.TransactWriteItem
	for i := range 101 {
		raw = append(raw, e.order(fmt.Sprintf("raw%03d", i)))
	}
	_, err = e.client.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: raw})
	if err == nil || !strings.Contains(err.Error(), "ValidationException") {
		t.Fatalf("a TransactWriteItems of 101 actions = %v; want ValidationException", err)
	}
}
