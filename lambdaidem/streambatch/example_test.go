package streambatch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// A Kinesis consumer keyed by a field the producer put in the data: the
// producer's retry (a second record, same transfer) and Lambda's retry of
// the batch both run the transfer once. In a Lambda function the store is
// a dynamostore.Store and the handler goes to lambda.Start.
func ExampleAdapter_Kinesis() {
	store := memstore.New()
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = streambatch.Horizon(7*24*time.Hour, 0) // a 7-day stream
		o.InFlight = lambdaidem.Wait
	})
	if err != nil {
		panic(err)
	}
	p, err := streambatch.New(guard, "RecordTransfer", func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromDataField("transfer_id")
	})
	if err != nil {
		panic(err)
	}
	handler := p.Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
		fmt.Println("recording", string(r.Kinesis.Data))
		return memstore.Stage(ctx, memstore.Put{Table: "ledger", Key: r.Kinesis.SequenceNumber})
	})

	record := func(seq, data string) events.KinesisEventRecord {
		r := events.KinesisEventRecord{EventID: "shardId-000000000000:" + seq, EventSourceArn: "arn:aws:kinesis:eu-west-1:111122223333:stream/transfers"}
		r.Kinesis.SequenceNumber, r.Kinesis.Data = seq, []byte(data)
		return r
	}
	batch := events.KinesisEvent{Records: []events.KinesisEventRecord{
		record("101", `{"transfer_id":"t-1","amount":10}`),
		record("102", `{"transfer_id":"t-2","amount":20}`),
		record("103", `{"amount":10,"transfer_id":"t-1"}`), // the producer's retry of t-1
	}}
	resp, _ := handler(context.Background(), batch)
	fmt.Println("failures:", len(resp.BatchItemFailures))
	resp, _ = handler(context.Background(), batch) // Lambda sends the batch again
	fmt.Println("failures:", len(resp.BatchItemFailures))
	fmt.Println(len(store.Items("ledger")), "ledger entries")
	// Output:
	// recording {"transfer_id":"t-1","amount":10}
	// recording {"transfer_id":"t-2","amount":20}
	// failures: 0
	// failures: 0
	// 2 ledger entries
}

// A DynamoDB stream consumer keyed by the event id (the default): each
// change of the table is handled once, however often Lambda retries it. A
// failure is reported by the record's sequence number, and the shard's
// later records wait for the retry.
func ExampleAdapter_DynamoDB() {
	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = streambatch.Horizon(streambatch.DynamoDBStreamRetention, 0)
	})
	p, _ := streambatch.New(guard, "ShipOrder")
	failing := true
	handler := p.DynamoDB(func(ctx context.Context, r events.DynamoDBEventRecord) error {
		id := r.Change.Keys["id"].String()
		if id == "o-2" && failing {
			return fmt.Errorf("carrier unavailable")
		}
		fmt.Println("shipping", id)
		return nil
	})
	change := func(eventID, seq, id string) events.DynamoDBEventRecord {
		r := events.DynamoDBEventRecord{EventID: eventID, EventName: "INSERT", EventSourceArn: "arn:aws:dynamodb:eu-west-1:111122223333:table/orders/stream/2026-12-01T00:00:00.000"}
		r.Change.SequenceNumber = seq
		r.Change.Keys = map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute(id)}
		return r
	}
	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		change("e-1", "100", "o-1"), change("e-2", "200", "o-2"), change("e-3", "300", "o-3"),
	}}
	resp, _ := handler(context.Background(), batch)
	fmt.Println("retry from", resp.BatchItemFailures[0].ItemIdentifier)
	failing = false
	batch.Records = batch.Records[1:] // Lambda resumes at the checkpoint
	resp, _ = handler(context.Background(), batch)
	fmt.Println("failures:", len(resp.BatchItemFailures))
	// Output:
	// shipping o-1
	// retry from 200
	// shipping o-2
	// shipping o-3
	// failures: 0
}
