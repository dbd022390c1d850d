// Command driver runs one idempotent operation with the library it is built
// against, for the rolling-deploy test (../rolling_test.go), which builds it
// twice: against this repository's library and against the released
// v0.2.0. It uses only API both have. The handler stages one effect item
// (a business write committed with the record) and returns the effect's id;
// the driver prints the outcome as one JSON line.
//
//	driver -endpoint URL -table T -effects E -key K [-fp F] [-by NAME]
//	       [-hold D -started FILE] [-go FILE] [-horizon D] [-outbox TABLE]
//	driver -endpoint URL -outbox TABLE -relay RECORDKEY -published FILE
//
// With -outbox the handler also stages an SQS message whose body is the
// effect's id. With -relay the driver is the outbox relay instead: it
// publishes the outbox item of RECORDKEY, appending each message it
// publishes to FILE as a JSON line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// queue is the (never reached) queue the staged messages name.
const queue = "https://sqs.eu-west-1.amazonaws.com/111122223333/orders"

// Result is what the driver prints.
type Result struct {
	Out  string `json:"out,omitempty"`
	Kind string `json:"kind,omitempty"` // in-progress, key-reused, error
	Err  string `json:"err,omitempty"`
}

func main() {
	endpoint := flag.String("endpoint", "", "the DynamoDB endpoint")
	table := flag.String("table", "", "the idempotency table")
	effects := flag.String("effects", "", "the table the handler's effect is staged into")
	key := flag.String("key", "", "the idempotency key")
	fp := flag.String("fp", "same", "the request's fingerprint")
	by := flag.String("by", "driver", "who runs: names the effect")
	hold := flag.Duration("hold", 0, "how long the handler runs after staging its effect")
	started := flag.String("started", "", "a file the handler creates once it runs")
	goFile := flag.String("go", "", "a file to wait for before calling (a start line for contenders)")
	horizon := flag.Duration("horizon", time.Hour, "the retry horizon")
	outboxTable := flag.String("outbox", "", "the outbox table: stage a message (or, with -relay, publish)")
	relayKey := flag.String("relay", "", "be the relay: publish the outbox item of this record key")
	published := flag.String("published", "", "with -relay: the file each published message is appended to")
	flag.Parse()
	client := newClient(*endpoint)
	var res Result
	if *relayKey != "" {
		res = publish(client, *outboxTable, *relayKey, *published)
	} else {
		res = run(client, *table, *effects, *key, *fp, *by, *hold, *started, *goFile, *horizon, *outboxTable)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

func newClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
	})
}

// publish relays the outbox item of recordKey, appending what it publishes
// to file.
func publish(client *dynamodb.Client, table, recordKey, file string) Result {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return Result{Kind: "error", Err: err.Error()}
	}
	defer f.Close()
	r, err := relay.New(client, table, outbox.PublisherFunc(func(_ context.Context, m outbox.Message) error {
		return json.NewEncoder(f).Encode(map[string]string{"id": m.ID, "body": m.Body})
	}))
	if err != nil {
		return Result{Kind: "error", Err: err.Error()}
	}
	if err := r.Publish(context.Background(), recordKey); err != nil {
		return Result{Kind: "error", Err: err.Error()}
	}
	return Result{Out: "published"}
}

func run(client *dynamodb.Client, table, effects, key, fp, by string, hold time.Duration, started, goFile string,
	horizon time.Duration, outboxTable string) Result {
	store, err := dynamostore.New(client, table, func(o *dynamostore.Options) { o.OutboxTable = outboxTable })
	if err != nil {
		return Result{Kind: "error", Err: err.Error()}
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = horizon
		o.Lease = 30 * time.Second
	})
	if err != nil {
		return Result{Kind: "error", Err: err.Error()}
	}
	for goFile != "" {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	call := lambdaidem.Call[string]{Operation: "Pay", Key: key, Fingerprint: fp}
	out, err := lambdaidem.Do(context.Background(), guard, call, func(ctx context.Context) (string, error) {
		id := by + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		effect := types.Put{TableName: aws.String(effects), Item: map[string]types.AttributeValue{
			"id":  &types.AttributeValueMemberS{Value: id},
			"key": &types.AttributeValueMemberS{Value: key},
		}}
		if err := dynamostore.Stage(ctx, effect); err != nil {
			return "", err
		}
		if outboxTable != "" {
			if _, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: id}); err != nil {
				return "", err
			}
		}
		if started != "" {
			if err := os.WriteFile(started, []byte(id), 0o600); err != nil {
				return "", err
			}
		}
		time.Sleep(hold)
		return id, nil
	})
	switch {
	case err == nil:
		return Result{Out: out}
	case errors.Is(err, lambdaidem.ErrInProgress):
		return Result{Kind: "in-progress", Err: err.Error()}
	case errors.Is(err, lambdaidem.ErrKeyReused):
		return Result{Kind: "key-reused", Err: err.Error()}
	}
	return Result{Kind: "error", Err: fmt.Sprint(err)}
}
