package streambatch

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Record is a stream record as the key, scope and fingerprint functions see
// it: exactly one of Kinesis and DynamoDB is set.
type Record struct {
	// EventID is the record's eventID. For Kinesis it is
	// "shardId-…:<sequence number>"; for DynamoDB a unique id of the change.
	EventID string
	// EventSourceARN is the stream's ARN.
	EventSourceARN string
	// Shard is the shard the record came from, when the event says it (the
	// prefix of a Kinesis eventID); "" otherwise.
	Shard string
	// SequenceNumber is the record's sequence number in its shard: the
	// itemIdentifier of a batch item failure.
	SequenceNumber string

	// Kinesis is the Kinesis record, or nil.
	Kinesis *events.KinesisEventRecord
	// DynamoDB is the DynamoDB stream record, or nil.
	DynamoDB *events.DynamoDBEventRecord
}

func kinesisRecord(r *events.KinesisEventRecord) Record {
	return Record{
		EventID:        r.EventID,
		EventSourceARN: r.EventSourceArn,
		Shard:          kinesisShard(r.EventID),
		SequenceNumber: r.Kinesis.SequenceNumber,
		Kinesis:        r,
	}
}

func dynamoDBRecord(r *events.DynamoDBEventRecord) Record {
	return Record{
		EventID:        r.EventID,
		EventSourceARN: r.EventSourceArn,
		SequenceNumber: r.Change.SequenceNumber,
		DynamoDB:       r,
	}
}

// kinesisShard returns the shard id a Kinesis eventID starts with, or "".
func kinesisShard(eventID string) string {
	shard, _, ok := strings.Cut(eventID, ":")
	if !ok || !strings.HasPrefix(shard, "shardId-") {
		return ""
	}
	return shard
}

// lane names the records that must run in order: one shard of one stream.
// Records whose shard the event does not say (every DynamoDB stream
// record) run in order with the other such records of their stream.
func (r Record) lane() string {
	return r.EventSourceARN + "\x00" + r.Shard
}
