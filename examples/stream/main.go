// Command stream is the ledger consumer: a Lambda function fed by a Kinesis
// data stream through an event source mapping with ReportBatchItemFailures
// and BisectBatchOnFunctionError (the CDK's lambdaidemcdk.NewStreamSource
// sets both). Each record is a transfer, and each transfer is booked once,
// however often Lambda sends the record: Lambda retries a batch from the
// shard's checkpoint, and a producer's retried PutRecord writes the same
// transfer again under a new sequence number; both are caught by the key,
// the record's transfer_id.
//
// A record is JSON: {"transfer_id": "t-1", "account": "acc-1", "amount": 250}.
// A record that is not a valid transfer fails for good (a terminal error,
// stored and replayed): Lambda retries it until MaximumRetryAttempts, then
// hands it to the on-failure destination, and the shard moves on.
//
// With LEDGER_SOURCE=dynamodb the same ledger is fed instead by the
// DynamoDB stream of a transfers table (an outbox): each INSERT of a
// transfer item (transfer_id S, account S, amount N) is booked once; other
// changes book nothing. The key is then the stream record's event id (the
// default): a DynamoDB stream holds each change exactly once, so Lambda's
// retries are the only duplicates.
//
// Configuration, from the environment:
//
//	IDEMPOTENCY_TABLE          the idempotency table (required)
//	LEDGER_TABLE               the ledger table, partition key id (S) (required)
//	IDEMPOTENCY_TTL            the retry horizon, a Go duration (default 24h): at least
//	                           the stream's retention, or the mapping's maximum record age
//	                           (lambdaidemcdk.NewStreamSource sets it so)
//	IDEMPOTENCY_*_ATTR, IDEMPOTENCY_SORT_KEY_VALUE  the table's attribute names (see dynamostore.ReadEnv)
//	LEDGER_SOURCE              kinesis (default) or dynamodb
//	AWS_ENDPOINT_URL_DYNAMODB  another DynamoDB endpoint (LocalStack), read by the SDK
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	handler, err := setup(context.Background(), os.Getenv, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger: cannot start:", err)
		os.Exit(1)
	}
	lambda.Start(handler)
}

// setup builds the clients once, at start-up, and returns the handler.
// The handler is a Kinesis or a DynamoDB stream batch handler, as
// LEDGER_SOURCE says.
func setup(ctx context.Context, getenv func(string) string, logger *slog.Logger) (any, error) {
	idem, err := dynamostore.ReadEnv(getenv)
	ledgerTable, source := getenv("LEDGER_TABLE"), getenv("LEDGER_SOURCE")
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if ledgerTable == "" {
		errs = append(errs, errors.New("LEDGER_TABLE is not set (the ledger table's name)"))
	}
	if source != "" && source != "kinesis" && source != "dynamodb" {
		errs = append(errs, fmt.Errorf("LEDGER_SOURCE=%q: want kinesis or dynamodb", source))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(awsCfg), idem.Table, idem.StoreOptions)
	if err != nil {
		return nil, err
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = idem.RetryHorizon
		o.Logger = logger
		// Lambda retries a batch at once after a crash or a timeout: wait
		// for the interrupted attempt's lease to lapse and take the record
		// over, rather than spend a retry attempt on "in progress".
		o.InFlight = lambdaidem.Wait
	})
	if err != nil {
		return nil, err
	}
	l := ledger{table: ledgerTable}
	if source == "dynamodb" {
		a, err := streambatch.New(guard, "BookTransfer", func(o *streambatch.Options) { o.Logger = logger })
		if err != nil {
			return nil, err
		}
		return a.DynamoDB(l.bookInsert), nil
	}
	a, err := streambatch.New(guard, "BookTransfer", func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromDataField("transfer_id")
		o.Logger = logger
	})
	if err != nil {
		return nil, err
	}
	return a.Kinesis(l.book), nil
}

// bookOnce is the ledger entry's condition: a transfer id is booked once.
const bookOnce = "attribute_not_exists(id)"

// ledger books transfers into one table.
type ledger struct{ table string }

// transfer is a record's data.
type transfer struct {
	ID      string `json:"transfer_id"`
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
}

// book stages the ledger entry of one Kinesis record.
func (l ledger) book(ctx context.Context, r events.KinesisEventRecord) error {
	var t transfer
	if err := json.Unmarshal(r.Kinesis.Data, &t); err != nil {
		return lambdaidem.Terminal(fmt.Errorf("ledger: record %s is not a valid transfer", r.Kinesis.SequenceNumber))
	}
	return l.stage(ctx, t, r.Kinesis.SequenceNumber)
}

// bookInsert stages the ledger entry of a transfer item's INSERT; other
// changes book nothing.
func (l ledger) bookInsert(ctx context.Context, r events.DynamoDBEventRecord) error {
	if r.EventName != "INSERT" {
		return nil
	}
	t, ok := transferOf(r.Change.NewImage)
	if !ok {
		return lambdaidem.Terminal(fmt.Errorf("ledger: record %s is not a valid transfer", r.Change.SequenceNumber))
	}
	return l.stage(ctx, t, r.Change.SequenceNumber)
}

// transferOf reads a transfer item's image. DynamoDBAttributeValue's
// accessors panic on another type, so each is called after its type is
// checked.
func transferOf(image map[string]events.DynamoDBAttributeValue) (transfer, bool) {
	id, account, amount := image["transfer_id"], image["account"], image["amount"]
	if id.DataType() != events.DataTypeString || account.DataType() != events.DataTypeString || amount.DataType() != events.DataTypeNumber {
		return transfer{}, false
	}
	n, err := strconv.ParseInt(amount.Number(), 10, 64)
	return transfer{ID: id.String(), Account: account.String(), Amount: n}, err == nil
}

// stage stages the ledger entry of a valid transfer; dynamostore commits
// it in one TransactWriteItems with the idempotency record. An invalid
// transfer fails for good.
func (l ledger) stage(ctx context.Context, t transfer, seq string) error {
	if t.ID == "" || t.Account == "" || t.Amount <= 0 {
		return lambdaidem.Terminal(fmt.Errorf("ledger: record %s is not a valid transfer", seq))
	}
	return dynamostore.Stage(ctx, types.Put{
		TableName: aws.String(l.table),
		Item: map[string]types.AttributeValue{
			"id":              &types.AttributeValueMemberS{Value: t.ID},
			"account":         &types.AttributeValueMemberS{Value: t.Account},
			"amount":          &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Amount, 10)},
			"sequence_number": &types.AttributeValueMemberS{Value: seq},
		},
		ConditionExpression: aws.String(bookOnce),
	})
}
