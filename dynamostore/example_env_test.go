package dynamostore_test

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A function bound to its table by the CDK construct (Table.Bind) reads the
// table, the store's attribute names and the retry horizon from its
// environment; in the function, getenv is os.Getenv.
func ExampleReadEnv() {
	bound := map[string]string{ // what Table.Bind sets for a table with a sort key
		"IDEMPOTENCY_TABLE": "orders-idempotency", "IDEMPOTENCY_TTL": "48h0m0s",
		"IDEMPOTENCY_KEY_ATTR": "pk", "IDEMPOTENCY_SORT_KEY_ATTR": "sk",
		"IDEMPOTENCY_SORT_KEY_VALUE": "idempotency", "IDEMPOTENCY_EXPIRATION_ATTR": "ttl",
	}
	getenv := func(k string) string { return bound[k] } // os.Getenv

	env, err := dynamostore.ReadEnv(getenv)
	if err != nil {
		panic(err) // names every missing or invalid variable
	}
	var cfg aws.Config // config.LoadDefaultConfig(ctx) in a function
	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), env.Table, env.StoreOptions)
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store, env.GuardOptions)
	if err != nil {
		panic(err)
	}
	_ = guard
	fmt.Println(env.Table, env.RetryHorizon, env.KeyAttr, env.SortKeyAttr, env.ExpirationAttr)
	// Output:
	// orders-idempotency 48h0m0s pk sk ttl
}

// A container or a task that Table.Bind cannot reach gets the same variables
// from Table.Environment in its task definition; one that is given only the
// table's name keeps the store's attribute names and a 24h horizon.
func ExampleReadEnv_tableOnly() {
	env, err := dynamostore.ReadEnv(func(k string) string {
		return map[string]string{"IDEMPOTENCY_TABLE": "idempotency"}[k]
	})
	fmt.Println(env.Table, env.RetryHorizon == 24*time.Hour, err)

	_, err = dynamostore.ReadEnv(func(string) string { return "" })
	fmt.Println(err)
	// Output:
	// idempotency true <nil>
	// dynamostore: idempotency environment: IDEMPOTENCY_TABLE is not set (the idempotency table's name)
}
