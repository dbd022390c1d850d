package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
)

// exampleClient serves the examples: the in-process emulator behind the
// DynamoDB-fidelity proxy, with an idempotency table and an orders table.
func exampleClient() (*dynamodb.Client, func()) {
	srv := httptest.NewServer(ddbtest.NewProxy(ddbtest.NewEmulator()))
	client := ddbtest.NewClient(srv.URL)
	ctx := context.Background()
	if err := ddbtest.CreateTable(ctx, client, "idempotency"); err != nil {
		panic(err)
	}
	if err := ddbtest.CreateTable(ctx, client, "orders", func(o *dynamostore.Options) { o.KeyAttr = "pk" }); err != nil {
		panic(err)
	}
	return client, srv.Close
}

func orderItem(id string) types.Put {
	return types.Put{
		TableName:           aws.String("orders"),
		Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}
}

// The order and the idempotency record commit in one transaction; the
// duplicate gets the stored receipt, and the handler does not run again.
func Example() {
	client, stop := exampleClient()
	defer stop()
	store, err := dynamostore.New(client, "idempotency")
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store)
	if err != nil {
		panic(err)
	}
	createOrder := func(ctx context.Context) (string, error) {
		fmt.Println("handler runs")
		if err := dynamostore.Stage(ctx, orderItem("order-42")); err != nil {
			return "", err
		}
		return "receipt for order-42", nil
	}
	c := lambdaidem.Call[string]{Operation: "CreateOrder", Key: "client-key-1"}
	for range 2 {
		receipt, err := lambdaidem.Do(context.Background(), guard, c, createOrder)
		fmt.Println(receipt, err)
	}
	// Output:
	// handler runs
	// receipt for order-42 <nil>
	// receipt for order-42 <nil>
}

// A write staged outside a wrapped invocation fails loudly.
func ExampleStage_outsideInvocation() {
	err := dynamostore.Stage(context.Background(), orderItem("order-1"))
	fmt.Println(errors.Is(err, lambdaidem.ErrNoAttempt))
	// Output:
	// true
}

// A staged write whose condition fails cancels the whole commit: the
// caller learns which write failed, nothing is written, and the claim is
// released so that a corrected retry can run.
func ExampleConditionFailedError() {
	client, stop := exampleClient()
	defer stop()
	store, _ := dynamostore.New(client, "idempotency")
	guard, _ := lambdaidem.New(store)
	_, err := lambdaidem.Do(context.Background(), guard, lambdaidem.Call[string]{Operation: "Ship", Key: "k"},
		func(ctx context.Context) (string, error) {
			return "shipped", dynamostore.Stage(ctx, types.ConditionCheck{
				TableName:           aws.String("orders"),
				Key:                 map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "order-7"}},
				ConditionExpression: aws.String("attribute_exists(pk)"),
			})
		})
	var cfe *dynamostore.ConditionFailedError
	fmt.Println(errors.As(err, &cfe), errors.Is(err, lambdaidem.ErrEffectRejected))
	fmt.Println(cfe.Action, cfe.Table, cfe.Index)
	// Output:
	// true true
	// ConditionCheck orders 0
}

// Optimistic mode claims in the commit itself: one TransactWriteItems for
// a first request with a business write.
func ExampleStore_Commit_optimistic() {
	proxy := ddbtest.NewProxy(ddbtest.NewEmulator())
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	client := ddbtest.NewClient(srv.URL)
	ctx := context.Background()
	_ = ddbtest.CreateTable(ctx, client, "idempotency")
	_ = ddbtest.CreateTable(ctx, client, "orders", func(o *dynamostore.Options) { o.KeyAttr = "pk" })
	store, _ := dynamostore.New(client, "idempotency")
	guard, _ := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic })
	proxy.ResetCalls()
	out, err := lambdaidem.Do(ctx, guard, lambdaidem.Call[string]{Operation: "CreateOrder", Key: "k"},
		func(ctx context.Context) (string, error) {
			return "created", dynamostore.Stage(ctx, orderItem("order-9"))
		})
	fmt.Println(out, err, proxy.Calls())
	// Output:
	// created <nil> map[TransactWriteItems:1]
}

// The README's two-minute version: the wrapped handler keeps the handler's signature, so
// the result goes to lambda.Start unchanged.
func Example_wrap() {
	type Order struct {
		ID    string `json:"order_id"`
		Total int    `json:"total"`
	}
	type Receipt struct {
		OrderID string `json:"order_id"`
	}
	client, stop := exampleClient()
	defer stop()

	store, err := dynamostore.New(client, "idempotency")
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.RetryHorizon = 48 * time.Hour })
	if err != nil {
		panic(err)
	}
	orders, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, Receipt]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o Order) (string, error) { return o.ID, nil },
	})
	if err != nil {
		panic(err)
	}
	handler := orders.Wrap(func(ctx context.Context, o Order) (Receipt, error) {
		// Committed in ONE transaction with the idempotency record, or not at all.
		if err := dynamostore.Stage(ctx, orderItem(o.ID)); err != nil {
			return Receipt{}, err
		}
		fmt.Println("order", o.ID, "written")
		return Receipt{OrderID: o.ID}, nil
	})
	// lambda.Start(handler)

	for range 2 {
		r, err := handler(context.Background(), Order{ID: "o-7", Total: 42})
		fmt.Println(r.OrderID, err)
	}
	// Output:
	// order o-7 written
	// o-7 <nil>
	// o-7 <nil>
}

// A scheduled job (an EventBridge Scheduler target, every 5 minutes) that
// reports the age of the oldest UNKNOWN record in the table, so that the
// UnknownAge alarm fires for records no retry meets; the lambdaidem
// command's list --emf does the same. One charge was left UNKNOWN two
// hours ago.
func ExampleRecords_Scan_unknownAge() {
	client, stop := exampleClient()
	defer stop()
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	store, err := dynamostore.New(client, "idempotency")
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Now = func() time.Time { return now.Add(-2 * time.Hour) } })
	if err != nil {
		panic(err)
	}
	_, _ = lambdaidem.Do(context.Background(), guard, lambdaidem.Call[string]{Operation: "Charge", Key: "c-1"}, func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", errors.New("provider timed out")
	})

	// The job.
	records, err := dynamostore.NewRecords(client, "idempotency")
	if err != nil {
		panic(err)
	}
	var oldest time.Time
	err = records.Scan(context.Background(), dynamostore.ScanOptions{Status: lambdaidem.StatusUnknown, Segments: 4}, func(rec lambdaidem.Record) error {
		if oldest.IsZero() || rec.CreatedAt.Before(oldest) {
			oldest = rec.CreatedAt
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	var age time.Duration
	if !oldest.IsZero() {
		age = now.Sub(oldest)
	}
	metrics, err := emf.New(os.Stdout, func(o *emf.Options) { o.Service = "payments"; o.Now = func() time.Time { return now } })
	if err != nil {
		panic(err)
	}
	metrics.WriteUnknownAge("scan", age)
	// Output:
	// {"_aws":{"Timestamp":1796180400000,"CloudWatchMetrics":[{"Namespace":"lambdaidem","Dimensions":[["Service","Operation"],["Service"]],"Metrics":[{"Name":"UnknownAge","Unit":"Seconds"}]}]},"Service":"payments","Operation":"scan","UnknownAge":7200}
}
