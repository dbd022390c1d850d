package e2estack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// startDynoxide starts Dynoxide, the world with a DynamoDB Streams API (the
// embedded endpoint has none), or skips t in one line without it.
func startDynoxide(t *testing.T) *ddbtest.DynoxideServer {
	t.Helper()
	d, err := ddbtest.LaunchDynoxide(t.Context())
	if errors.Is(err, ddbtest.ErrNoDynoxide) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// TestStreamTailReadsTheStreamsAPI: a put, a transaction of two writes,
// an update and a delete on a table with a stream come back through
// DescribeStream, GetShardIterator and GetRecords, in order, with their
// event names, keys and images; the tail appends them to the harness's
// stream under the real stream's ARN.
func TestStreamTailReadsTheStreamsAPI(t *testing.T) {
	d := startDynoxide(t)
	ctx := t.Context()
	c := ddbtest.NewClient(d.URL)
	if err := CreateBusinessTable(ctx, c, "transfers"); err != nil {
		t.Fatal(err)
	}
	arn, err := EnableStream(ctx, c, "transfers")
	if err != nil {
		t.Fatal(err)
	}
	item := func(id, n string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: id}, "n": &ddbtypes.AttributeValueMemberN{Value: n}}
	}
	key := func(id string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: id}}
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("transfers"), Item: item("a", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("transfers"), Item: item("b", "2")}},
		{Put: &ddbtypes.Put{TableName: aws.String("transfers"), Item: item("c", "3")}},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("transfers"), Item: item("a", "4")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("transfers"), Key: key("b")}); err != nil {
		t.Fatal(err)
	}

	s := NewDynamoDBStream("transfers", StreamOptions{Shards: 1})
	tail := TailStream(ctx, NewStreamsClient(d.URL), arn, s, 0)
	defer tail.Stop()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tail.WaitFor(wctx, 5); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // nothing more arrives
	if n, err := tail.Read(); n != 5 || err != nil {
		t.Fatalf("read %d records (last error %v), want 5", n, err)
	}
	if s.ARN != arn {
		t.Errorf("stream ARN %q, want the real %q", s.ARN, arn)
	}
	recs, _ := s.read(s.Shards()[0], 0, 10)
	want := []struct{ name, id, newN, oldN string }{
		{"INSERT", "a", "1", ""}, {"INSERT", "b", "2", ""}, {"INSERT", "c", "3", ""}, {"MODIFY", "a", "4", "1"}, {"REMOVE", "b", "", "2"},
	}
	for i, w := range want {
		c := recs[i].Change
		if c == nil || c.EventName != w.name || c.Keys["id"].String() != w.id {
			t.Fatalf("record %d: %+v, want %s of %s", i, c, w.name, w.id)
		}
		if got := c.NewImage["n"]; (w.newN == "") != (c.NewImage == nil) || (w.newN != "" && got.Number() != w.newN) {
			t.Errorf("record %d: new image %v, want n=%q", i, c.NewImage, w.newN)
		}
		if got := c.OldImage["n"]; (w.oldN == "") != (c.OldImage == nil) || (w.oldN != "" && got.Number() != w.oldN) {
			t.Errorf("record %d: old image %v, want n=%q", i, c.OldImage, w.oldN)
		}
	}
}
