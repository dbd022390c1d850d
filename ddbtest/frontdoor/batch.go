package frontdoor

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// sentAt is the time every message and record says it was sent: fixed, so
// that an event is the same each time it is built.
var sentAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Message is an SQS message to deliver.
type Message struct {
	// ID is the message id; empty: "m-<n>", n its position in the batch
	// (from 1), so the same batch sent again is a redelivery.
	ID string
	// Body is the message body.
	Body string
	// Attributes are String message attributes.
	Attributes map[string]string
	// GroupID and DeduplicationID are a FIFO message's group and
	// deduplication id (a queue whose name ends in ".fifo").
	GroupID, DeduplicationID string
	// ReceiveCount is the approximate receive count; 0 is 1.
	ReceiveCount int
}

// SQSEvent returns msgs as one batch from queue (a queue name: "orders",
// "orders.fifo").
func SQSEvent(queue string, msgs ...Message) events.SQSEvent {
	arn := "arn:aws:sqs:" + region + ":" + account + ":" + queue
	e := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		id := m.ID
		if id == "" {
			id = "m-" + strconv.Itoa(i+1)
		}
		count := max(m.ReceiveCount, 1)
		attrs := map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(count),
			"SentTimestamp":                    strconv.FormatInt(sentAt.UnixMilli(), 10),
			"SenderId":                         "AIDAEXAMPLE",
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(sentAt.UnixMilli(), 10),
		}
		if m.GroupID != "" {
			attrs["MessageGroupId"] = m.GroupID
			attrs["SequenceNumber"] = fmt.Sprintf("%020d", i+1)
		}
		if m.DeduplicationID != "" {
			attrs["MessageDeduplicationId"] = m.DeduplicationID
		}
		var mattrs map[string]events.SQSMessageAttribute
		if len(m.Attributes) > 0 {
			mattrs = make(map[string]events.SQSMessageAttribute, len(m.Attributes))
			for k, v := range m.Attributes {
				mattrs[k] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
			}
		}
		e.Records[i] = events.SQSMessage{
			MessageId: id, ReceiptHandle: "rh-" + id + "-" + strconv.Itoa(count), Body: m.Body,
			Attributes: attrs, MessageAttributes: mattrs,
			EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: region,
		}
	}
	return e
}

// SQS delivers msgs as one batch from queue to h (sqsbatch.Adapter.Wrap)
// and returns the ids of the messages it reported failed (to be
// redelivered).
func SQS(ctx context.Context, h func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), queue string, msgs ...Message) ([]string, error) {
	out, err := h(ctx, SQSEvent(queue, msgs...))
	return identifiers(out.BatchItemFailures, err, func(f events.SQSBatchItemFailure) string { return f.ItemIdentifier })
}

// KinesisRecord is a Kinesis record to deliver.
type KinesisRecord struct {
	// Shard is the shard id; empty: "shardId-000000000000".
	Shard string
	// PartitionKey is the record's partition key.
	PartitionKey string
	// Data is the record's data.
	Data []byte
	// Sequence is the sequence number; empty: the record's position in the
	// batch (from 1), 21 digits, so the same batch sent again is a
	// redelivery.
	Sequence string
}

// KinesisEvent returns recs as one batch from stream (a stream name).
func KinesisEvent(stream string, recs ...KinesisRecord) events.KinesisEvent {
	arn := "arn:aws:kinesis:" + region + ":" + account + ":stream/" + stream
	e := events.KinesisEvent{Records: make([]events.KinesisEventRecord, len(recs))}
	for i, r := range recs {
		shard, seq := r.Shard, r.Sequence
		if shard == "" {
			shard = "shardId-000000000000"
		}
		if seq == "" {
			seq = fmt.Sprintf("%021d", i+1)
		}
		e.Records[i] = events.KinesisEventRecord{
			AwsRegion: region, EventID: shard + ":" + seq, EventName: "aws:kinesis:record",
			EventSource: "aws:kinesis", EventSourceArn: arn, EventVersion: "1.0",
			InvokeIdentityArn: "arn:aws:iam::" + account + ":role/consumer",
			Kinesis: events.KinesisRecord{
				ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: sentAt},
				Data:                        r.Data, EncryptionType: "NONE", PartitionKey: r.PartitionKey,
				SequenceNumber: seq, KinesisSchemaVersion: "1.0",
			},
		}
	}
	return e
}

// Kinesis delivers recs as one batch from stream to h
// (streambatch.Adapter.Kinesis) and returns the sequence numbers it
// reported failed (a shard resumes from the first of its own).
func Kinesis(ctx context.Context, h func(context.Context, events.KinesisEvent) (events.KinesisEventResponse, error), stream string, recs ...KinesisRecord) ([]string, error) {
	out, err := h(ctx, KinesisEvent(stream, recs...))
	return identifiers(out.BatchItemFailures, err, func(f events.KinesisBatchItemFailure) string { return f.ItemIdentifier })
}

// Change is a DynamoDB Streams record to deliver: an item written to (or
// removed from) a table.
type Change struct {
	// EventName is "INSERT", "MODIFY" or "REMOVE"; empty: "INSERT".
	EventName string
	// Keys, NewImage and OldImage are the item's key attributes and its
	// images (events.NewStringAttribute and the like; [Image] converts an
	// SDK item).
	Keys, NewImage, OldImage map[string]events.DynamoDBAttributeValue
	// Sequence is the sequence number; empty: the record's position in the
	// batch (from 1) times 100, 21 digits, so the same batch sent again is
	// a redelivery.
	Sequence string
}

// DynamoDBEvent returns changes as one batch from table's stream, with the
// stream view type NEW_AND_OLD_IMAGES.
func DynamoDBEvent(table string, changes ...Change) events.DynamoDBEvent {
	arn := "arn:aws:dynamodb:" + region + ":" + account + ":table/" + table + "/stream/2026-01-01T00:00:00.000"
	e := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(changes))}
	for i, c := range changes {
		name, seq := c.EventName, c.Sequence
		if name == "" {
			name = "INSERT"
		}
		if seq == "" {
			seq = fmt.Sprintf("%021d", (i+1)*100)
		}
		e.Records[i] = events.DynamoDBEventRecord{
			AWSRegion: region, EventID: strings.ToLower(name) + "-" + seq, EventName: name,
			EventSource: "aws:dynamodb", EventSourceArn: arn, EventVersion: "1.1",
			Change: events.DynamoDBStreamRecord{
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: sentAt},
				Keys:                        maps.Clone(c.Keys), NewImage: maps.Clone(c.NewImage), OldImage: maps.Clone(c.OldImage),
				SequenceNumber: seq, StreamViewType: "NEW_AND_OLD_IMAGES",
			},
		}
	}
	return e
}

// DynamoDB delivers changes as one batch from table's stream to h
// (streambatch.Adapter.DynamoDB, the outbox relay's Handler) and returns
// the sequence numbers it reported failed.
func DynamoDB(ctx context.Context, h func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), table string, changes ...Change) ([]string, error) {
	out, err := h(ctx, DynamoDBEvent(table, changes...))
	return identifiers(out.BatchItemFailures, err, func(f events.DynamoDBBatchItemFailure) string { return f.ItemIdentifier })
}

// identifiers are the item identifiers of a batch response's failures, or
// the handler's error.
func identifiers[F any](failures []F, err error, id func(F) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(failures))
	for _, f := range failures {
		out = append(out, id(f))
	}
	return out, nil
}
