package ddbtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// scanAll pages through one segment (or the whole table, for total 0).
func scanAll(t *testing.T, c *dynamodb.Client, table string, seg, total int) ([]string, error) {
	t.Helper()
	in := &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(4)}
	if total > 0 {
		in.Segment, in.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(total))
	}
	var keys []string
	for {
		out, err := c.Scan(context.Background(), in)
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			keys = append(keys, value(it, "pk"))
		}
		if len(out.LastEvaluatedKey) == 0 {
			return keys, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// TestParallelScanSegments: as in DynamoDB (developer guide, "Parallel
// scan"), the segments of a parallel scan are disjoint and together hold
// every item; the emulator, with the departure kept, returns every item to
// every segment.
func TestParallelScanSegments(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	const n = 30
	for i := range n {
		put(t, c, table, item(fmt.Sprintf("k%02d", i), "v"))
	}
	const total = 3
	seen := map[string]int{}
	for seg := range total {
		keys, err := scanAll(t, c, table, seg, total)
		if err != nil {
			t.Fatalf("segment %d: %v", seg, err)
		}
		if len(keys) == n {
			t.Errorf("segment %d holds the whole table", seg)
		}
		for _, k := range keys {
			seen[k]++
		}
	}
	if len(seen) != n {
		t.Fatalf("segments together hold %d distinct items; want %d", len(seen), n)
	}
	for k, times := range seen {
		if times != 1 {
			t.Errorf("%s is in %d segments; want 1", k, times)
		}
	}

	for _, bad := range []struct{ seg, total int32 }{{3, 3}, {-1, 3}, {0, 0}} {
		_, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), Segment: aws.Int32(bad.seg), TotalSegments: aws.Int32(bad.total)})
		if err == nil {
			t.Errorf("Segment %d of %d accepted; DynamoDB answers ValidationException", bad.seg, bad.total)
		}
	}

	if !p.Backend().Departs.ScanSegmentsIgnored {
		return // nothing to keep: the backend answers as DynamoDB (TestBackendDepartures)
	}
	p.SetDepartures(ddbtest.Departures{ScanSegmentsIgnored: true})
	keys, err := scanAll(t, c, table, 1, total)
	if err != nil || len(keys) != n {
		t.Fatalf("with the departure kept, segment 1 = %d items, %v; want the emulator's whole table", len(keys), err)
	}
}
