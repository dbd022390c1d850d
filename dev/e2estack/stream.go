package e2estack

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Stream is an in-process stand-in for a Kinesis data stream (or, built
// with [NewDynamoDBStream], a DynamoDB stream): an
// append-only log of records in shards, each record with its partition key,
// a sequence number that grows within its shard, and its arrival time;
// records older than the retention period are trimmed. No Kinesis emulator
// runs without Docker, and the harness needs only what an event source
// mapping reads (GetRecords from a position in a shard), so this is the one
// fake of an AWS service in the harness; what it models is cited on each
// part. (Kinesis: https://docs.aws.amazon.com/streams/latest/dev/key-concepts.html;
// retention 24 hours to 365 days:
// https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html.)
type Stream struct {
	// ARN is the stream's ARN, the events' eventSourceARN.
	ARN string

	now       func() time.Time
	retention time.Duration
	dynamo    bool // a DynamoDB stream: records are item changes

	mu     sync.Mutex
	shards []*shard
}

// StreamOptions configure [NewStream].
type StreamOptions struct {
	// Shards is the number of shards. Default 1.
	Shards int
	// Retention is how long records are kept. Default 24h (Kinesis's
	// default).
	Retention time.Duration
	// Now is the clock of arrival times and trimming. Default time.Now.
	Now func() time.Time
}

// StreamRecord is one record of a [Stream].
type StreamRecord struct {
	Shard          string
	SequenceNumber string
	PartitionKey   string
	Data           []byte
	Arrival        time.Time
	// Change is the item change of a DynamoDB stream's record.
	Change *Change
}

// Change is one item change in a DynamoDB stream.
type Change struct {
	// EventName is INSERT, MODIFY or REMOVE.
	EventName string
	// Keys, NewImage and OldImage are the item's key attributes and its
	// images (a NEW_AND_OLD_IMAGES stream).
	Keys, NewImage, OldImage map[string]events.DynamoDBAttributeValue
}

type shard struct {
	id      string
	base    *big.Int
	next    int64
	records []StreamRecord
	trimmed int // records trimmed from the front: records[i] has position trimmed+i
}

// NewStream returns an empty stream named name.
func NewStream(name string, o StreamOptions) *Stream {
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Stream{ARN: "arn:aws:kinesis:us-east-1:000000000000:stream/" + name, now: o.Now, retention: o.Retention}
	for i := range o.Shards {
		// Kinesis sequence numbers are large decimal strings that grow
		// within a shard; the base keeps them that shape.
		base, _ := new(big.Int).SetString(fmt.Sprintf("4965657310233947418761834029154802%02d00000000000000000000", i), 10)
		s.shards = append(s.shards, &shard{id: fmt.Sprintf("shardId-%012d", i), base: base})
	}
	return s
}

// NewDynamoDBStream returns an empty stand-in for the DynamoDB stream of
// table, with a view type of NEW_AND_OLD_IMAGES: its records are item
// changes ([Stream.PutChange]) kept 24 hours, and the changes of one item
// stay in one shard, in order, as DynamoDB Streams promise
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html).
func NewDynamoDBStream(table string, o StreamOptions) *Stream {
	o.Retention = 24 * time.Hour
	s := NewStream(table, o)
	s.ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026-12-01T00:00:00.000"
	s.dynamo = true
	return s
}

// PutChange appends an item change to a DynamoDB stream; the item's keys
// choose its shard.
func (s *Stream) PutChange(c Change) StreamRecord { return s.PutChanges(c)[0] }

// PutChanges appends item changes at once, as one transaction's writes
// reach the stream: a reader sees all of them or none.
func (s *Stream) PutChanges(cs ...Change) []StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StreamRecord, len(cs))
	for i, c := range cs {
		key, _ := json.Marshal(c.Keys) // map keys sorted: one item, one partition key
		cp := c
		out[i] = s.appendLocked(string(key), nil, &cp)
	}
	return out
}

// Shards returns the stream's shard ids.
func (s *Stream) Shards() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.shards))
	for i, sh := range s.shards {
		ids[i] = sh.id
	}
	return ids
}

// Len returns how many records the shard has held (its next position).
func (s *Stream) Len(shardID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shard(shardID)
	return sh.trimmed + len(sh.records)
}

// Put appends a record, as PutRecord does: the partition key's MD5, as a
// 128-bit number, picks the shard (Kinesis maps it into the shards' hash
// key ranges; with equal ranges this is the same as dividing the range
// evenly), and the record gets the next sequence number of that shard.
func (s *Stream) Put(partitionKey string, data []byte) StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(partitionKey, data, nil)
}

// PutEntry is one record for [Stream.PutRecords].
type PutEntry struct {
	PartitionKey string
	Data         []byte
}

// PutRecords appends records at once, as PutRecords does: a reader sees
// all of them or none.
func (s *Stream) PutRecords(entries ...PutEntry) []StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StreamRecord, len(entries))
	for i, e := range entries {
		out[i] = s.appendLocked(e.PartitionKey, e.Data, nil)
	}
	return out
}

// appendLocked appends one record; s.mu is held.
func (s *Stream) appendLocked(partitionKey string, data []byte, c *Change) StreamRecord {
	sum := md5.Sum([]byte(partitionKey))
	h := new(big.Int).SetBytes(sum[:])
	n := len(s.shards)
	idx := int(new(big.Int).Div(new(big.Int).Mul(h, big.NewInt(int64(n))), new(big.Int).Lsh(big.NewInt(1), 128)).Int64())
	sh := s.shards[idx]
	seq := new(big.Int).Add(sh.base, big.NewInt(sh.next*1_000_000))
	sh.next++
	r := StreamRecord{Shard: sh.id, SequenceNumber: seq.String(), PartitionKey: partitionKey, Data: append([]byte(nil), data...), Arrival: s.now(), Change: c}
	sh.records = append(sh.records, r)
	return r
}

// read returns up to n records of a shard from position pos (the count
// of records before it in the shard's history), after trimming records
// older than the retention; first is the position of the first record
// returned, later than pos if records were trimmed.
func (s *Stream) read(shardID string, pos, n int) (recs []StreamRecord, first int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shard(shardID)
	cut := s.now().Add(-s.retention)
	for len(sh.records) > 0 && sh.records[0].Arrival.Before(cut) {
		sh.records = sh.records[1:]
		sh.trimmed++
	}
	first = max(pos, sh.trimmed)
	i := first - sh.trimmed
	if i >= len(sh.records) {
		return nil, first
	}
	end := min(len(sh.records), i+n)
	return append([]StreamRecord(nil), sh.records[i:end]...), first
}

// shard returns the shard with the id; ids come from Shards.
func (s *Stream) shard(id string) *shard {
	for _, sh := range s.shards {
		if sh.id == id {
			return sh
		}
	}
	return &shard{id: id} // an unknown shard reads as empty
}
