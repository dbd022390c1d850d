package ddbtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// sized is an item of exactly n bytes as DynamoDB sizes it (n ≥ 4): "pk"
// (2) + its value (1) + "v" (1) + n-4 bytes of value.
func sized(pk string, n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(pk), "v": s(strings.Repeat("x", n-3-len(pk)))}
}

const kb = 1024

func capacityUnits(t *testing.T, cc *types.ConsumedCapacity) float64 {
	t.Helper()
	if cc == nil {
		t.Fatal("no ConsumedCapacity in the answer")
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

// Standard writes: 1 unit per started KB of the larger of the item before
// and after (read-write-operations, "Capacity unit consumption for write
// operations").
func TestConsumedCapacityOfStandardWrites(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()

	out, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("a", 1638), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if got := capacityUnits(t, out.ConsumedCapacity); got != 2 {
		t.Errorf("PutItem of 1.6 KB: %v units, want 2 (rounded up to 2 KB)", got)
	}
	if aws.ToString(out.ConsumedCapacity.TableName) != table || out.ConsumedCapacity.Table != nil || out.ConsumedCapacity.WriteCapacityUnits != nil {
		t.Errorf("TOTAL: want TableName and CapacityUnits only, got %+v", out.ConsumedCapacity)
	}

	// Replacing a 1.6 KB item with a 500-byte one is charged for the larger.
	out, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("a", 500), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	if got := capacityUnits(t, out.ConsumedCapacity); got != 2 {
		t.Errorf("PutItem replacing 1.6 KB by 500 B: %v units, want 2", got)
	}
	if out.ConsumedCapacity.Table == nil || aws.ToFloat64(out.ConsumedCapacity.Table.CapacityUnits) != 2 {
		t.Errorf("INDEXES: want the Table breakdown, got %+v", out.ConsumedCapacity.Table)
	}

	// UpdateItem growing the item: the after size counts, even though the
	// update sets one small attribute.
	up, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("a"),
		UpdateExpression:          aws.String("SET w = :w"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":w": s(strings.Repeat("y", 3*kb))},
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if got := capacityUnits(t, up.ConsumedCapacity); got != 4 { // 500 + 1 + 3072 bytes
		t.Errorf("UpdateItem to 3.5 KB: %v units, want 4", got)
	}

	del, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("a"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if got := capacityUnits(t, del.ConsumedCapacity); got != 4 {
		t.Errorf("DeleteItem of a 3.5 KB item: %v units, want 4", got)
	}

	// Not asking changes the answer, not the bill.
	p.ResetConsumed()
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("b", 2*kb+1)}); err != nil {
		t.Fatal(err)
	}
	if got := p.Consumed(); got.Total != (ddbtest.Capacity{Write: 3}) || got.ByTable[table].Write != 3 || got.ByOperation["PutItem"].Write != 3 {
		t.Errorf("Consumed after a 2 KB + 1 byte PutItem without ReturnConsumedCapacity = %+v, want 3 write units", got)
	}
}

// A failed condition still consumes write capacity; the answer (an error)
// carries none ("Capacity units consumed by conditional writes").
func TestConsumedCapacityOfFailedConditions(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	put(t, c, table, sized("big", 3*kb))
	p.ResetConsumed()

	cases := []struct {
		name string
		call func() error
		want float64
	}{
		{"PutItem on an absent item, condition false", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("none", 100), ConditionExpression: aws.String("attribute_exists(pk)")})
			return err
		}, 1},
		{"PutItem of 500 B over a 3 KB item: the larger", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("big", 500), ConditionExpression: aws.String(failCond)})
			return err
		}, 3},
		{"PutItem of 5 KB over a 3 KB item: the larger", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("big", 5*kb), ConditionExpression: aws.String(failCond)})
			return err
		}, 5},
		{"UpdateItem of a 3 KB item", func() error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("big"), UpdateExpression: aws.String("SET w = :w"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":w": s("1")}, ConditionExpression: aws.String(failCond)})
			return err
		}, 3},
		{"DeleteItem of a 3 KB item", func() error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("big"), ConditionExpression: aws.String(failCond)})
			return err
		}, 3},
	}
	for _, tc := range cases {
		p.ResetConsumed()
		if err := tc.call(); err == nil {
			t.Fatalf("%s: the condition passed", tc.name)
		}
		if got := p.Consumed().Total; got != (ddbtest.Capacity{Write: tc.want}) {
			t.Errorf("%s: charged %+v, want %v write units", tc.name, got, tc.want)
		}
	}
}

// Reads: 1 unit per started 4 KB strongly consistent, half eventually
// consistent, the minimum for a missing item; the whole item counts
// whatever the projection.
func TestConsumedCapacityOfReads(t *testing.T) {
	ep := ddbtest.Start(t)
	ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	put(t, c, table, sized("eight", 8*kb))
	put(t, c, table, sized("ten", 10*kb))
	cases := []struct {
		pk         string
		consistent bool
		projection string
		want       float64
	}{
		{"eight", true, "", 2},
		{"eight", false, "", 1},
		{"eight", true, "pk", 2},
		{"ten", true, "", 3},
		{"missing", true, "", 1},
		{"missing", false, "", 0.5},
	}
	for _, tc := range cases {
		in := &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(tc.pk), ConsistentRead: aws.Bool(tc.consistent), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
		if tc.projection != "" {
			in.ProjectionExpression = aws.String(tc.projection)
		}
		out, err := c.GetItem(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := capacityUnits(t, out.ConsumedCapacity); got != tc.want {
			t.Errorf("GetItem %s consistent=%v projection=%q: %v units, want %v", tc.pk, tc.consistent, tc.projection, got, tc.want)
		}
	}
}

// Transactions: 2 write units per started KB of every item, per table,
// with the read/write split; consumed also when a condition cancels the
// transaction; a ClientRequestToken replay is a transactional read.
func TestConsumedCapacityOfTransactions(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	t1, t2 := newTable(t, c), newTable(t, c)
	ctx := context.Background()
	put(t, c, t1, sized("checked", 1500))

	in := &dynamodb.TransactWriteItemsInput{
		ClientRequestToken: aws.String("token-1"),
		TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(t1), Item: sized("p1", 500)}},
			{Put: &types.Put{TableName: aws.String(t1), Item: sized("p2", 500)}},
			{Put: &types.Put{TableName: aws.String(t2), Item: sized("p3", 500)}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String(t1), Key: key("checked"), ConditionExpression: aws.String("attribute_exists(pk)")}},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	}
	p.ResetConsumed()
	out, err := c.TransactWriteItems(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{t1: 2 + 2 + 4, t2: 2} // three 500-byte items: 2 each; a 1.5 KB check: 4
	if len(out.ConsumedCapacity) != 2 {
		t.Fatalf("want one ConsumedCapacity per table, got %+v", out.ConsumedCapacity)
	}
	for _, cc := range out.ConsumedCapacity {
		w := want[aws.ToString(cc.TableName)]
		if aws.ToFloat64(cc.CapacityUnits) != w || aws.ToFloat64(cc.WriteCapacityUnits) != w || cc.Table == nil || aws.ToFloat64(cc.Table.WriteCapacityUnits) != w {
			t.Errorf("table %s: %+v (Table %+v), want %v write units", aws.ToString(cc.TableName), cc, cc.Table, w)
		}
	}
	if got := p.Consumed().Total; got != (ddbtest.Capacity{Write: 10}) {
		t.Errorf("charged %+v, want 10 write units", got)
	}

	// The same request with the same token: answered as a replay, charged
	// as a transactional read (2 units per started 4 KB) of each item.
	p.ResetConsumed()
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err = c.TransactWriteItems(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Consumed().Total; got != (ddbtest.Capacity{Read: 8}) {
		t.Errorf("replay charged %+v, want 8 read units", got)
	}
	for _, cc := range out.ConsumedCapacity {
		if aws.ToFloat64(cc.ReadCapacityUnits) == 0 || cc.WriteCapacityUnits != nil {
			t.Errorf("replay on %s: %+v, want read units only", aws.ToString(cc.TableName), cc)
		}
	}

	// A transaction a condition cancels is charged as if it had run.
	p.ResetConsumed()
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(t2), Item: sized("p4", 2*kb)}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(t1), Key: key("checked"), ConditionExpression: aws.String(failCond)}},
	}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err == nil {
		t.Fatal("the transaction was not cancelled")
	}
	if got := p.Consumed(); got.Total != (ddbtest.Capacity{Write: 4 + 4}) || got.ByTable[t1].Write != 4 || got.ByTable[t2].Write != 4 {
		t.Errorf("cancelled transaction charged %+v, want 4 on each table", got)
	}
}

// The emulator's own behaviour, kept by Departures: no capacity at all.
func TestConsumedCapacityDepartureKeepsTheEmulators(t *testing.T) {
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Departures.NoConsumedCapacity = true })
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	out, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("a", 100), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	// minidyn answers none; Dynoxide computes its own, passed through.
	if wantAnswer := p.Backend().Name != "minidyn"; (out.ConsumedCapacity != nil) != wantAnswer || p.Consumed().Total != (ddbtest.Capacity{}) {
		t.Errorf("with NoConsumedCapacity on %s: answer %+v, charged %+v; want the backend's own answer (one: %v), nothing charged",
			p.Backend().Name, out.ConsumedCapacity, p.Consumed(), wantAnswer)
	}
}

// A Select COUNT page returns no items but reads them: it is charged as the
// same page without Select ("Capacity unit consumption for read
// operations": Query and Scan consume capacity for the data they read).
func TestConsumedCapacityOfCount(t *testing.T) {
	ep := ddbtest.Start(t)
	c := ep.Client()
	table := newTable(t, c)
	ctx := context.Background()
	for _, pk := range []string{"a", "b", "c"} {
		put(t, c, table, sized(pk, 3*kb))
	}
	scan := func(sel types.Select) *dynamodb.ScanOutput {
		out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Select: sel, ConsistentRead: aws.Bool(true),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all, count := scan(""), scan(types.SelectCount)
	if count.Items != nil || count.Count != 3 || count.ScannedCount != 3 {
		t.Fatalf("COUNT answered %d items, Count %d, ScannedCount %d; want no items, 3, 3", len(count.Items), count.Count, count.ScannedCount)
	}
	if got, want := capacityUnits(t, count.ConsumedCapacity), capacityUnits(t, all.ConsumedCapacity); got != want || want != 3 {
		t.Errorf("COUNT consumed %v units, the same scan with its items %v; want both 3 (9 KB read consistently)", got, want)
	}
}
