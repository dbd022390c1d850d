package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// observation is one behaviour as an endpoint showed it: a deterministic
// description, so that two endpoints' answers compare as strings.
type observation struct {
	Name string
	// Documented is what AWS's documentation says, "" when it says nothing.
	Documented string
	Result     string
	// Volatile marks an answer that depends on timing (concurrent
	// contenders): a difference is noted, not counted.
	Volatile bool
}

// Expressions of the probes: each says once what it tests.
const (
	condAbsent     = "attribute_not_exists(id)"
	condPresent    = "attribute_exists(id)"
	condVersionIs0 = "v = :zero"
	updateSetV     = "SET v = :two"
	updateAddN     = "ADD n :one"
)

// prober sends the probes' raw requests (through the SDK directly, not the
// store, so that nothing of ours interprets the answers) to one table.
type prober struct {
	client *dynamodb.Client
	table  string
	prefix string // keeps this run's items apart
}

func (p *prober) key(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"id": s(p.prefix + name)}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

var probeValues = map[string]types.AttributeValue{":zero": n("0"), ":two": n("2")}

func (p *prober) seed(ctx context.Context, name string) error {
	_, err := p.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(p.table),
		Item: map[string]types.AttributeValue{"id": s(p.prefix + name), "v": n("1")}})
	return err
}

func (p *prober) exists(ctx context.Context, name string) (map[string]types.AttributeValue, error) {
	out, err := p.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(p.table), Key: p.key(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// probeBehaviours observes what the endpoint does where AWS documents
// little or nothing and the store depends on the answer: ALL_OLD on failed
// conditions, single and in transactions, and a ClientRequestToken resent
// after a cancellation (and, for contrast, after a success).
func probeBehaviours(ctx context.Context, p *prober) ([]observation, error) {
	var obs []observation
	add := func(name, documented, result string) {
		obs = append(obs, observation{Name: name, Documented: documented, Result: result})
	}
	for _, k := range []string{"old", "tx-old", "tx-pair", "token-cancelled"} {
		if err := p.seed(ctx, k); err != nil {
			return nil, fmt.Errorf("seed %s: %w", k, err)
		}
	}
	old := types.ReturnValuesOnConditionCheckFailureAllOld
	tbl := aws.String(p.table)

	// ALL_OLD on a failed condition, single-item writes.
	_, err := p.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "old"), "v": n("9")},
		ConditionExpression: aws.String(condAbsent), ReturnValuesOnConditionCheckFailure: old})
	add("PutItem, failed condition, ALL_OLD", "the item as it was, in the ConditionalCheckFailedException", describe(err))
	_, err = p.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "old"), "v": n("9")},
		ConditionExpression: aws.String(condAbsent)})
	add("PutItem, failed condition, no ReturnValuesOnConditionCheckFailure", "no item", describe(err))
	_, err = p.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tbl, Key: p.key("old"), UpdateExpression: aws.String(updateSetV),
		ConditionExpression: aws.String(condVersionIs0), ExpressionAttributeValues: probeValues, ReturnValuesOnConditionCheckFailure: old})
	add("UpdateItem, failed condition, ALL_OLD", "the item as it was", describe(err))
	_, err = p.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tbl, Key: p.key("absent"), UpdateExpression: aws.String(updateSetV),
		ConditionExpression: aws.String(condPresent), ExpressionAttributeValues: map[string]types.AttributeValue{":two": n("2")}, ReturnValuesOnConditionCheckFailure: old})
	add("UpdateItem on a missing item, failed condition, ALL_OLD", "", describe(err))
	_, err = p.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: p.key("old"),
		ConditionExpression: aws.String(condVersionIs0), ExpressionAttributeValues: map[string]types.AttributeValue{":zero": n("0")}, ReturnValuesOnConditionCheckFailure: old})
	add("DeleteItem, failed condition, ALL_OLD", "the item as it was", describe(err))

	// ALL_OLD in transactions: the cancellation reason of the failed action.
	zero := map[string]types.AttributeValue{":zero": n("0")}
	txs := []struct {
		name string
		item types.TransactWriteItem
	}{
		{"Put", types.TransactWriteItem{Put: &types.Put{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "tx-old"), "v": n("9")},
			ConditionExpression: aws.String(condAbsent), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}},
		{"Update", types.TransactWriteItem{Update: &types.Update{TableName: tbl, Key: p.key("tx-old"), UpdateExpression: aws.String(updateSetV),
			ConditionExpression: aws.String(condVersionIs0), ExpressionAttributeValues: probeValues, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}},
		{"Delete", types.TransactWriteItem{Delete: &types.Delete{TableName: tbl, Key: p.key("tx-old"),
			ConditionExpression: aws.String(condVersionIs0), ExpressionAttributeValues: zero, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}},
		{"ConditionCheck", types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: tbl, Key: p.key("tx-old"),
			ConditionExpression: aws.String(condVersionIs0), ExpressionAttributeValues: zero, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}},
	}
	for _, tx := range txs {
		_, err := p.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{tx.item}})
		add("TransactWriteItems, failed "+tx.name+", ALL_OLD", "the item in the failed action's CancellationReason", describe(err))
	}
	_, err = p.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: tbl, Key: p.key("tx-pair"), ConditionExpression: aws.String(condVersionIs0),
			ExpressionAttributeValues: zero, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Put: &types.Put{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "tx-pair-other")}}},
	}})
	add("TransactWriteItems, failed ConditionCheck (ALL_OLD) beside a Put that would succeed", "one reason per action, None for the others", describe(err))

	// A ClientRequestToken resent after a cancellation: first with the
	// condition still failing, then after the item in the way is gone.
	token := p.prefix + "token-cancelled"
	cancelledTx := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(tokenOf(token)), TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "token-cancelled"), "v": n("7")}, ConditionExpression: aws.String(condAbsent)}},
	}}
	_, err = p.client.TransactWriteItems(ctx, cancelledTx)
	add("token T: first send, condition fails", "cancelled", describe(err))
	_, err = p.client.TransactWriteItems(ctx, cancelledTx)
	add("token T resent identically after its cancellation, condition still failing", "", describe(err))
	if _, err := p.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: p.key("token-cancelled")}); err != nil {
		return obs, fmt.Errorf("delete the item in the way: %w", err)
	}
	_, err = p.client.TransactWriteItems(ctx, cancelledTx)
	item, gerr := p.exists(ctx, "token-cancelled")
	if gerr != nil {
		return obs, gerr
	}
	add("token T resent identically after its cancellation, condition now passing", "",
		describe(err)+"; item afterwards: "+describeItem(item))

	// For contrast, the documented case: a token resent after a success.
	okTx := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(tokenOf(p.prefix + "token-ok")), TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: tbl, Key: p.key("token-ok"), UpdateExpression: aws.String(updateAddN), ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")}}},
	}}
	_, err = p.client.TransactWriteItems(ctx, okTx)
	add("token U: first send, succeeds", "applied", describe(err))
	_, err = p.client.TransactWriteItems(ctx, okTx)
	item, gerr = p.exists(ctx, "token-ok")
	if gerr != nil {
		return obs, gerr
	}
	add("token U resent identically after its success", "success, nothing written again (within 10 minutes)", describe(err)+"; item afterwards: "+describeItem(item))
	other := *okTx
	other.TransactItems = []types.TransactWriteItem{{Put: &types.Put{TableName: tbl, Item: map[string]types.AttributeValue{"id": s(p.prefix + "token-ok-other")}}}}
	_, err = p.client.TransactWriteItems(ctx, &other)
	add("token U resent with another request", "IdempotentParameterMismatchException", describe(err))
	return obs, nil
}

// tokenOf fits a probe's token to ClientRequestToken's 36 characters.
func tokenOf(s string) string {
	if len(s) > 36 {
		return s[len(s)-36:]
	}
	return s
}

// describe renders an answer: "ok", or the error code with, for a failed
// condition, whether the old item came back and which attributes it had.
func describe(err error) string {
	if err == nil {
		return "ok"
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return "ConditionalCheckFailedException, " + oldItem(ccf.Item)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		var rs []string
		for _, r := range tce.CancellationReasons {
			d := aws.ToString(r.Code)
			if r.Code != nil && *r.Code != "None" {
				d += " " + oldItem(r.Item)
			}
			rs = append(rs, d)
		}
		return "TransactionCanceledException [" + strings.Join(rs, ", ") + "]"
	}
	return errorCode(err)
}

func oldItem(item map[string]types.AttributeValue) string {
	if item == nil {
		return "no old item"
	}
	return "old item " + describeItem(item)
}

// describeItem names an item's attributes and the value of v and n.
func describeItem(item map[string]types.AttributeValue) string {
	if item == nil {
		return "absent"
	}
	names := make([]string, 0, len(item))
	for k, v := range item {
		if nv, ok := v.(*types.AttributeValueMemberN); ok && (k == "v" || k == "n") {
			k += "=" + nv.Value
		}
		names = append(names, k)
	}
	sort.Strings(names)
	return "{" + strings.Join(names, ", ") + "}"
}

// errorCode is an error's API error code, or its text.
func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline exceeded"
	}
	return err.Error()
}

// behavioursCheck runs the probes on the target and on a fresh in-process
// ddbtest endpoint, and lists both answers side by side; on AWS, every
// difference is a bug in ddbtest's fidelity layer.
var behavioursCheck = &check{
	Name:   "behaviours",
	Bound:  "21 requests on the probe table, the same on a fresh ddbtest endpoint",
	Budget: budget{WriteUnits: 100, ReadUnits: 20, Time: 2 * time.Minute},
	Run: func(ctx context.Context, w *world, sec *section) error {
		prefix := fmt.Sprintf("probe-%d-", time.Now().UnixNano())
		got, err := probeBehaviours(ctx, &prober{client: w.client(), table: w.table(tableProbeItems), prefix: prefix})
		if err != nil {
			return err
		}
		ref, err := withReference(ctx, []string{"items"}, func(ctx context.Context, r *reference) error {
			var err error
			want, err := probeBehaviours(ctx, &prober{client: r.client(), table: r.tables["items"], prefix: prefix})
			r.result = want
			return err
		})
		if err != nil {
			return fmt.Errorf("the ddbtest reference: %w", err)
		}
		want := ref.([]observation)
		return compareObservations(sec, got, want, w.Local)
	},
}

// compareObservations writes the side-by-side table and lists the
// differences (as ddbtest bugs when the target is AWS).
func compareObservations(sec *section, got, want []observation, local bool) error {
	target := "AWS"
	if local {
		target = "target (local ddbtest)"
	}
	documented := false
	for _, o := range got {
		documented = documented || o.Documented != ""
	}
	var rows [][]string
	var diffs []string
	for i, o := range got {
		ref := "(missing)"
		if i < len(want) {
			ref = want[i].Result
		}
		same := "same"
		switch {
		case ref == o.Result:
		case o.Volatile:
			same = "differs (timing-dependent)"
		default:
			same = "**differs**"
			diffs = append(diffs, o.Name)
		}
		if !documented {
			rows = append(rows, []string{o.Name, o.Result, ref, same})
			continue
		}
		doc := o.Documented
		if doc == "" {
			doc = "not documented"
		}
		rows = append(rows, []string{o.Name, doc, o.Result, ref, same})
	}
	header := []string{"request", target, "ddbtest", ""}
	if documented {
		header = []string{"request", "AWS documents", target, "ddbtest", ""}
	}
	sec.table(header, rows)
	if len(diffs) == 0 {
		sec.printf("ddbtest answered every probe as the target did.")
		return nil
	}
	sec.printf("Differences (bugs in ddbtest's fidelity layer when the target is AWS):")
	for _, d := range diffs {
		sec.printf("- %s", d)
	}
	if local {
		return fmt.Errorf("the local target and the ddbtest reference differ on %d probes: %s", len(diffs), strings.Join(diffs, "; "))
	}
	return nil
}
