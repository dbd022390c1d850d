package e2estack

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// NewKinesisClient returns a Kinesis client for an endpoint such as
// kinesalite, built from explicit options.
func NewKinesisClient(url string) *kinesis.Client {
	return kinesis.New(kinesis.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// CreateKinesisStream creates a data stream with shards and waits until it
// is ACTIVE; it returns the stream's ARN.
func CreateKinesisStream(ctx context.Context, c *kinesis.Client, name string, shards int32) (string, error) {
	if _, err := c.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(shards)}); err != nil {
		return "", fmt.Errorf("e2estack: create stream %s: %w", name, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		d, err := c.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err != nil {
			return "", fmt.Errorf("e2estack: describe stream %s: %w", name, err)
		}
		if d.StreamDescriptionSummary.StreamStatus == ktypes.StreamStatusActive {
			return aws.ToString(d.StreamDescriptionSummary.StreamARN), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("e2estack: stream %s not ACTIVE after 30s", name)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// TailKinesis starts reading the Kinesis data stream name through the
// Kinesis API (ListShards, GetShardIterator from TRIM_HORIZON, GetRecords
// along each NextShardIterator) into into, each record with its partition
// key and data, polling every (default 20ms). into should have as many
// shards as the real stream, so that its records keep their shard's
// order. Stop it with Stop.
func TailKinesis(ctx context.Context, client *kinesis.Client, arn, name string, into *Stream, every time.Duration) *StreamTail {
	t := &StreamTail{into: into}
	iters := map[string]*string{}
	t.round = func(ctx context.Context) error { return t.kinesisRound(ctx, client, name, iters) }
	return t.start(ctx, arn, every)
}

func (t *StreamTail) kinesisRound(ctx context.Context, client *kinesis.Client, name string, iters map[string]*string) error {
	var shards []ktypes.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(name)}
	for {
		out, err := client.ListShards(ctx, in)
		if err != nil {
			return err
		}
		shards = append(shards, out.Shards...)
		if out.NextToken == nil {
			break
		}
		in = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		if _, ok := iters[id]; ok {
			continue
		}
		it, err := client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{
			StreamName: aws.String(name), ShardId: sh.ShardId, ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			return err
		}
		iters[id] = it.ShardIterator
	}
	for id, it := range iters {
		for it != nil {
			out, err := client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it})
			if err != nil {
				return err
			}
			entries := make([]PutEntry, len(out.Records))
			for i, r := range out.Records {
				entries[i] = PutEntry{PartitionKey: aws.ToString(r.PartitionKey), Data: r.Data}
			}
			if len(entries) > 0 {
				t.into.PutRecords(entries...)
				t.count(len(entries))
			}
			iters[id] = out.NextShardIterator
			if len(out.Records) == 0 || out.NextShardIterator == nil {
				break
			}
			it = out.NextShardIterator
		}
	}
	return nil
}
