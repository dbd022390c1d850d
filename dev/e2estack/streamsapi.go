package e2estack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// NewStreamsClient returns a DynamoDB Streams client for an endpoint that
// serves the Streams API (Dynoxide does; the embedded endpoint does not),
// built from explicit options.
func NewStreamsClient(url string) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// EnableStream turns on table's stream (NEW_AND_OLD_IMAGES, what the
// construct sets on the outbox table) and returns its ARN.
func EnableStream(ctx context.Context, client *dynamodb.Client, table string) (string, error) {
	out, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(table),
		StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		return "", fmt.Errorf("e2estack: enable the stream of %s: %w", table, err)
	}
	if out.TableDescription == nil || out.TableDescription.LatestStreamArn == nil {
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return "", fmt.Errorf("e2estack: describe %s: %w", table, err)
		}
		if d.Table.LatestStreamArn == nil {
			return "", fmt.Errorf("e2estack: %s has no stream after UpdateTable", table)
		}
		return *d.Table.LatestStreamArn, nil
	}
	return *out.TableDescription.LatestStreamArn, nil
}

// StreamTail reads a real stream through its service's API and appends
// every record, in the order its shard gives it, to a [Stream], from which
// a [StreamPoller] delivers it with the event source mapping's rules
// (batches, partial batch responses, retries, bisection): the records are
// the implementation's own; only the delivery is the harness's.
// [TailStream] reads a DynamoDB stream, [TailKinesis] a Kinesis data
// stream. Start it before the poller: it sets the Stream's ARN to the real
// stream's.
type StreamTail struct {
	into  *Stream
	every time.Duration
	round func(ctx context.Context) error

	mu      sync.Mutex
	read    int
	lastErr error
	stop    context.CancelFunc
	done    chan struct{}
}

// TailStream starts reading the DynamoDB stream arn through the DynamoDB
// Streams API (DescribeStream, GetShardIterator from TRIM_HORIZON,
// GetRecords along each NextShardIterator) into into, polling every
// (default 20ms) for new records and shards. Each record keeps its event
// name, keys and images (a relay's marks come back as MODIFY records, as
// on AWS). Stop it with Stop.
func TailStream(ctx context.Context, client *dynamodbstreams.Client, arn string, into *Stream, every time.Duration) *StreamTail {
	t := &StreamTail{into: into}
	iters := map[string]*string{} // shard id -> next iterator; nil once a closed shard is read
	t.round = func(ctx context.Context) error { return t.dynamoRound(ctx, client, arn, iters) }
	return t.start(ctx, arn, every)
}

func (t *StreamTail) start(ctx context.Context, arn string, every time.Duration) *StreamTail {
	if every <= 0 {
		every = 20 * time.Millisecond
	}
	t.every = every
	t.into.ARN = arn
	ctx, t.stop = context.WithCancel(ctx)
	t.done = make(chan struct{})
	go t.run(ctx)
	return t
}

// Read returns how many records were read so far, and the last error an
// API call returned (nil when the last round succeeded).
func (t *StreamTail) Read() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.read, t.lastErr
}

// WaitFor waits until at least n records were read, or ctx ends.
func (t *StreamTail) WaitFor(ctx context.Context, n int) error {
	for {
		got, err := t.Read()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("e2estack: %d of %d stream records read (last error: %v): %w", got, n, err, ctx.Err())
		case <-time.After(t.every):
		}
	}
}

// Stop stops reading and waits for the reader.
func (t *StreamTail) Stop() {
	t.stop()
	<-t.done
}

func (t *StreamTail) run(ctx context.Context) {
	defer close(t.done)
	for {
		err := t.round(ctx)
		t.mu.Lock()
		t.lastErr = err
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(t.every):
		}
	}
}

func (t *StreamTail) count(n int) {
	t.mu.Lock()
	t.read += n
	t.mu.Unlock()
}

// dynamoRound lists the shards, opens an iterator on each new one, and
// reads every open shard until it has nothing more.
func (t *StreamTail) dynamoRound(ctx context.Context, client *dynamodbstreams.Client, arn string, iters map[string]*string) error {
	var shards []types.Shard
	var start *string
	for {
		d, err := client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
		if err != nil {
			return err
		}
		shards = append(shards, d.StreamDescription.Shards...)
		if d.StreamDescription.LastEvaluatedShardId == nil {
			break
		}
		start = d.StreamDescription.LastEvaluatedShardId
	}
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		if _, ok := iters[id]; ok {
			continue
		}
		it, err := client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			return err
		}
		iters[id] = it.ShardIterator
	}
	for id, it := range iters {
		for it != nil {
			out, err := client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			if err != nil {
				return err
			}
			changes := make([]Change, 0, len(out.Records))
			for _, r := range out.Records {
				c, err := changeOf(r)
				if err != nil {
					return err
				}
				changes = append(changes, c)
			}
			if len(changes) > 0 {
				t.into.PutChanges(changes...)
				t.count(len(changes))
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

// changeOf converts a Streams API record into the harness's change.
func changeOf(r types.Record) (Change, error) {
	if r.Dynamodb == nil {
		return Change{}, errors.New("e2estack: a stream record without its dynamodb part")
	}
	keys, err := streamAttrs(r.Dynamodb.Keys)
	if err != nil {
		return Change{}, err
	}
	newImage, err := streamAttrs(r.Dynamodb.NewImage)
	if err != nil {
		return Change{}, err
	}
	oldImage, err := streamAttrs(r.Dynamodb.OldImage)
	if err != nil {
		return Change{}, err
	}
	return Change{EventName: string(r.EventName), Keys: keys, NewImage: newImage, OldImage: oldImage}, nil
}

func streamAttrs(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		ev, err := streamAttr(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = ev
	}
	return out, nil
}

func streamAttr(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			ev, err := streamAttr(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			l[i] = ev
		}
		return events.NewListAttribute(l), nil
	case *types.AttributeValueMemberM:
		m, err := streamAttrs(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unknown attribute value %T", v)
}
