// Command testfunc is the function the rie package's tests run under the
// emulator: a user's bootstrap as README shows one, its configuration read
// from the environment. An event names an order; the handler stages the
// order's item (committed with the idempotency record) and may sleep first,
// to be cut off at its timeout.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Order is the event.
type Order struct {
	ID string `json:"id"`
	// SleepMS makes the handler sleep this long before it returns.
	SleepMS int `json:"sleep_ms"`
	// Env lists environment variables to echo back.
	Env []string `json:"env"`
}

// Receipt is the response.
type Receipt struct {
	ID string `json:"id"`
	// Run is unique to the handler run that produced the receipt: a replay
	// returns the first run's.
	Run string            `json:"run"`
	Env map[string]string `json:"env,omitempty"`
}

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	env, err := dynamostore.ReadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), env.Table, env.StoreOptions)
	if err != nil {
		log.Fatal(err)
	}
	margin, err := time.ParseDuration(os.Getenv("TEST_LEASE_MARGIN"))
	if err != nil {
		log.Fatal("TEST_LEASE_MARGIN: ", err)
	}
	guard, err := lambdaidem.New(store, env.GuardOptions, func(o *lambdaidem.Options) { o.LeaseMargin = margin })
	if err != nil {
		log.Fatal(err)
	}
	orders, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, Receipt]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o Order) (string, error) { return o.ID, nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	table := os.Getenv("ORDERS_TABLE")
	lambda.Start(orders.Wrap(func(ctx context.Context, o Order) (Receipt, error) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		r := Receipt{ID: o.ID, Run: hex.EncodeToString(b[:])}
		if len(o.Env) > 0 {
			r.Env = map[string]string{}
			for _, k := range o.Env {
				r.Env[k] = os.Getenv(k)
			}
		}
		put := types.Put{
			TableName: aws.String(table),
			Item: map[string]types.AttributeValue{
				"id":  &types.AttributeValueMemberS{Value: o.ID},
				"run": &types.AttributeValueMemberS{Value: r.Run},
			},
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}
		if err := dynamostore.Stage(ctx, put); err != nil {
			return Receipt{}, err
		}
		time.Sleep(time.Duration(o.SleepMS) * time.Millisecond)
		return r, nil
	}))
}
