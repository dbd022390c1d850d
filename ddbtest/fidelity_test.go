package ddbtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// failingWrite performs one write on item "x" (which holds v=old) whose
// condition fails, asking for the old item, and returns the old item the
// endpoint sent back.
type failingWrite func(c *dynamodb.Client, table string) (map[string]types.AttributeValue, error)

const failCond = "attribute_not_exists(pk)"

var failingWrites = map[string]failingWrite{
	"PutItem": func(c *dynamodb.Client, table string) (map[string]types.AttributeValue, error) {
		_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "new"),
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		return ccfItem(err)
	},
	"UpdateItem": func(c *dynamodb.Client, table string) (map[string]types.AttributeValue, error) {
		_, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("x"),
			UpdateExpression: aws.String("SET v = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("new")},
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		return ccfItem(err)
	},
	"DeleteItem": func(c *dynamodb.Client, table string) (map[string]types.AttributeValue, error) {
		_, err := c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("x"),
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		return ccfItem(err)
	},
	"TransactPut": transactFailing(func(table string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item("x", "new"),
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	}),
	"TransactUpdate": transactFailing(func(table string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(table), Key: key("x"),
			UpdateExpression: aws.String("SET v = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("new")},
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	}),
	"TransactDelete": transactFailing(func(table string) types.TransactWriteItem {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: key("x"),
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	}),
	"TransactConditionCheck": transactFailing(func(table string) types.TransactWriteItem {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: key("x"),
			ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	}),
}

// transactFailing makes a transaction of a write on "other" and the
// failing action, and returns the failing action's cancellation item.
func transactFailing(action func(table string) types.TransactWriteItem) failingWrite {
	return func(c *dynamodb.Client, table string) (map[string]types.AttributeValue, error) {
		_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(table), Item: item("other", "new")}},
			action(table),
		}})
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" {
			return nil, errors.New("want a TransactionCanceledException with reason 1 ConditionalCheckFailed, got " + errString(err))
		}
		return tce.CancellationReasons[1].Item, nil
	}
}

func ccfItem(err error) (map[string]types.AttributeValue, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, errors.New("want a ConditionalCheckFailedException, got " + errString(err))
	}
	return ccf.Item, nil
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestOldItems shows, for each conditional write, which old item a failed
// condition with ALL_OLD returns: always the old item like DynamoDB, only
// where minidyn implements it when the departure is kept, never when
// stripped (which forces callers onto their GetItem fallback).
func TestOldItems(t *testing.T) {
	emulatorReturnsOld := map[string]bool{"UpdateItem": true, "TransactUpdate": true, "TransactConditionCheck": true}
	for _, mode := range []struct {
		name string
		mode ddbtest.OldItems
		want func(write string) bool
	}{
		{"LikeDynamoDB", ddbtest.OldItemsLikeDynamoDB, func(string) bool { return true }},
		{"LikeEmulator", ddbtest.OldItemsLikeEmulator, func(w string) bool { return emulatorReturnsOld[w] }},
		{"Never", ddbtest.OldItemsNever, func(string) bool { return false }},
	} {
		for name, write := range failingWrites {
			t.Run(mode.name+"/"+name, func(t *testing.T) {
				ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Departures.OldItems = mode.mode })
				p := ep.RequireProxy(t)
				c := ep.Client()
				table := newTable(t, c)
				put(t, c, table, item("x", "old"))
				old, err := write(c, table)
				if err != nil {
					t.Fatal(err)
				}
				want := mode.want(name)
				if mode.mode == ddbtest.OldItemsLikeEmulator && p.Backend().Departs.OldItems == ddbtest.OldItemsLikeDynamoDB {
					want = true // a backend that returns old items as DynamoDB does is passed through
				}
				if got := value(old, "v") == "old"; got != want {
					t.Fatalf("old item returned = %v (%v); want %v", got, old, want)
				}
				if value(get(t, c, table, "x"), "v") != "old" || get(t, c, table, "other") != nil {
					t.Fatal("a failed write changed the table")
				}
			})
		}
	}
}

// TestOldItemsOnlyWhenAsked: like DynamoDB, a failed condition that did not
// ask for ALL_OLD gets no item, and one on an absent item gets none.
func TestOldItemsOnlyWhenAsked(t *testing.T) {
	ep := ddbtest.Start(t)
	ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	put(t, c, table, item("x", "old"))
	_, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("x"),
		UpdateExpression: aws.String("SET v = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("new")},
		ConditionExpression: aws.String(failCond)})
	if old, err := ccfItem(err); err != nil || old != nil {
		t.Fatalf("without ALL_OLD: item %v, %v; want a failure with no item", old, err)
	}
	_, err = c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("absent"),
		ConditionExpression: aws.String("attribute_exists(pk)"), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if old, err := ccfItem(err); err != nil || old != nil {
		t.Fatalf("absent item: item %v, %v; want a failure with no item", old, err)
	}
}

// counterTx adds 1 to the counter "n" of item "c" and puts item "p": a
// transaction whose second run would show.
func counterTx(table, token string) *dynamodb.TransactWriteItemsInput {
	return &dynamodb.TransactWriteItemsInput{
		ClientRequestToken: aws.String(token),
		TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String(table), Key: key("c"), UpdateExpression: aws.String("ADD n :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}},
			{Put: &types.Put{TableName: aws.String(table), Item: item("p", "v"), ConditionExpression: aws.String(failCond)}},
		},
	}
}

func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return errString(err)
}

// TestClientRequestTokenReplay: like DynamoDB, an identical transaction
// replayed with a successful ClientRequestToken within 10 minutes succeeds
// and writes nothing; a different one with that token is refused; after
// the window it runs again. With the departure kept, the replay runs again
// and is cancelled.
func TestClientRequestTokenReplay(t *testing.T) {
	now := time.Now()
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Now = func() time.Time { return now } })
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()

	if _, err := c.TransactWriteItems(ctx, counterTx(table, "tok-1")); err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	now = now.Add(9 * time.Minute)
	if _, err := c.TransactWriteItems(ctx, counterTx(table, "tok-1")); err != nil {
		t.Fatalf("replay within 10 minutes: %v; want success", err)
	}
	if n := value(get(t, c, table, "c"), "n"); n != "1" {
		t.Fatalf("counter after replay = %s; want 1 (the replay wrote nothing)", n)
	}
	other := counterTx(table, "tok-1")
	other.TransactItems[1].Put.Item = item("p2", "v")
	if _, err := c.TransactWriteItems(ctx, other); apiCode(err) != "IdempotentParameterMismatchException" {
		t.Fatalf("different request, same token: %v; want IdempotentParameterMismatchException", err)
	}
	if !p.Backend().Departs.TokenReplayCancelled {
		return // the backend keeps tokens itself, by its own clock; the rest pins minidyn's departure
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.TransactWriteItems(ctx, counterTx(table, "tok-1")); apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("replay after 11 minutes: %v; want it to run again and be cancelled", err)
	}

	p.SetDepartures(ddbtest.Departures{TokenReplayCancelled: true})
	if _, err := c.TransactWriteItems(ctx, counterTx(table, "tok-2")); apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("new token on existing item p: %v; want cancelled", err)
	}
	tx := counterTx(table, "tok-3")
	tx.TransactItems[1].Put.Item = item("p3", "v")
	if _, err := c.TransactWriteItems(ctx, tx); err != nil {
		t.Fatalf("transaction: %v", err)
	}
	if _, err := c.TransactWriteItems(ctx, tx); apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("replay with the departure kept: %v; want the emulator's cancellation", err)
	}
}

// TestPutItemAttributes: like DynamoDB, PutItem returns no Attributes, or
// the old item for ReturnValues=ALL_OLD; with the departure kept, the
// emulator's new item.
func TestPutItemAttributes(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	out, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "1")})
	if err != nil || out.Attributes != nil {
		t.Fatalf("PutItem = %v, %v; want no Attributes", out.Attributes, err)
	}
	out, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "2"), ReturnValues: types.ReturnValueAllOld})
	if err != nil || value(out.Attributes, "v") != "1" {
		t.Fatalf("PutItem ALL_OLD = %v, %v; want the old item", out.Attributes, err)
	}
	if !p.Backend().Departs.PutItemAttributes {
		return // nothing to keep: the backend answers as DynamoDB (TestBackendDepartures)
	}
	p.SetDepartures(ddbtest.Departures{PutItemAttributes: true})
	out, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "3")})
	if err != nil || value(out.Attributes, "v") != "3" {
		t.Fatalf("PutItem with the departure kept = %v, %v; want the emulator's new item", out.Attributes, err)
	}
}

// TestTimeToLive: the proxy answers UpdateTimeToLive and
// DescribeTimeToLive, which the emulator does not implement.
func TestTimeToLive(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	desc := func() *types.TimeToLiveDescription {
		out, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatalf("DescribeTimeToLive: %v", err)
		}
		return out.TimeToLiveDescription
	}
	if d := desc(); d.TimeToLiveStatus != types.TimeToLiveStatusDisabled {
		t.Fatalf("before: %+v; want DISABLED", d)
	}
	_, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiration"), Enabled: aws.Bool(true)}})
	if err != nil {
		t.Fatalf("UpdateTimeToLive: %v", err)
	}
	if d := desc(); d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "expiration" {
		t.Fatalf("after: %+v; want ENABLED on expiration", d)
	}
	if _, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("missing")}); apiCode(err) != "ResourceNotFoundException" {
		t.Fatalf("TTL of a missing table: %v; want ResourceNotFoundException", err)
	}
	if !p.Backend().Departs.NoTimeToLive {
		return // nothing to keep: the backend answers as DynamoDB (TestBackendDepartures)
	}
	p.SetDepartures(ddbtest.Departures{NoTimeToLive: true})
	if _, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)}); err == nil {
		t.Fatal("with the departure kept, DescribeTimeToLive succeeded; want the emulator's refusal")
	}
}

// TestUpdateRemove: the proxy makes REMOVE in an UpdateItem remove the
// attributes it names, placeholders resolved, from the item and from the
// Attributes returned, as DynamoDB does (the emulator keeps them); with the
// departure kept, the emulator's behaviour shows.
func TestUpdateRemove(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	update := func(pk string) map[string]types.AttributeValue {
		put(t, c, table, map[string]types.AttributeValue{"pk": s(pk), "v": s("1"), "gone": s("x"), "alias": s("y")})
		out, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key(pk),
			UpdateExpression:          aws.String("SET v = :v REMOVE gone, #a"),
			ExpressionAttributeNames:  map[string]string{"#a": "alias"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("2")},
			ReturnValues:              types.ReturnValueAllNew})
		if err != nil {
			t.Fatalf("UpdateItem: %v", err)
		}
		return out.Attributes
	}
	returned := update("x")
	stored := get(t, c, table, "x")
	for _, it := range []map[string]types.AttributeValue{returned, stored} {
		if value(it, "v") != "2" || it["gone"] != nil || it["alias"] != nil {
			t.Fatalf("after SET v REMOVE gone, #a: %v; want v = 2 and neither gone nor alias", it)
		}
	}
	if !p.Backend().Departs.RemoveIgnored {
		return // nothing to keep: the backend answers as DynamoDB (TestBackendDepartures)
	}
	p.SetDepartures(ddbtest.Departures{RemoveIgnored: true})
	if it := update("y"); it["gone"] == nil {
		t.Fatal("with the departure kept, REMOVE removed the attribute; want the emulator's behaviour")
	}
}

// TestRememberCancellations: with the switch on, the proxy is a DynamoDB
// that remembers a cancelled TransactWriteItems under its token for 10
// minutes: the same request under that token gets the same cancellation
// without running (though it would now succeed), another request under it
// IdempotentParameterMismatchException; a new token runs. Off, a resend
// runs.
func TestRememberCancellations(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	put(t, c, table, item("x", "taken"))
	tx := func(token, v string) error {
		_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token),
			TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(table), Item: item("x", v),
				ConditionExpression: aws.String("attribute_not_exists(pk)")}}}})
		return err
	}
	p.SetRememberCancellations(true)
	if err := tx("t1", "mine"); apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("first = %v; want cancelled", err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("x")}); err != nil {
		t.Fatal(err)
	}
	if err := tx("t1", "mine"); apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("resend under the cancelled token = %v; want the cancellation remembered", err)
	}
	if err := tx("t1", "other"); apiCode(err) != "IdempotentParameterMismatchException" {
		t.Fatalf("another request under it = %v; want IdempotentParameterMismatchException", err)
	}
	if get(t, c, table, "x") != nil {
		t.Fatal("a remembered cancellation ran")
	}
	if err := tx("t2", "mine"); err != nil || value(get(t, c, table, "x"), "v") != "mine" {
		t.Fatalf("a new token = %v; want it run", err)
	}
	p.SetRememberCancellations(false)
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("x")}); err != nil {
		t.Fatal(err)
	}
	if err := tx("t1", "mine"); err != nil {
		t.Fatalf("switch off, resend under t1 = %v; want it run", err)
	}
}
