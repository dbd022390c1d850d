package ddbtest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// One call gives a test what it needs to run a handler that stages
// DynamoDB writes; contenders released together on one key write one item.
func TestKit(t *testing.T) {
	kit := ddbtest.NewKit(t)
	orders := kit.NewTable(t, "orders", "pk")
	guard, err := lambdaidem.New(kit.Store)
	if err != nil {
		t.Fatal(err)
	}
	w, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[string, string]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, id string) (string, error) { return id, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	runs := 0
	h := w.Wrap(func(ctx context.Context, id string) (string, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		return "order " + id, dynamostore.Stage(ctx, types.Put{TableName: aws.String(orders),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}})
	})

	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := h(context.Background(), "o-1")
			if err != nil && !errors.Is(err, lambdaidem.ErrInProgress) {
				t.Errorf("contender: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	out, err := kit.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(orders), ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Items) != 1 || runs != 1 {
		t.Fatalf("%d items, %d runs, %v; want one of each", len(out.Items), runs, err)
	}
	if got, err := h(context.Background(), "o-1"); err != nil || got != "order o-1" {
		t.Fatalf("replay = %q, %v", got, err)
	}
	if p := kit.Endpoint.RequireProxy(t); p.Count("TransactWriteItems") != 1 {
		t.Fatalf("%d transactions; want 1", p.Count("TransactWriteItems"))
	}
}

func TestKitTablesAreTheTests(t *testing.T) {
	a, b := ddbtest.NewKit(t), ddbtest.NewKit(t)
	if a.Table == b.Table {
		t.Fatalf("two kits share the table %s", a.Table)
	}
	if err := a.CreateTable(context.Background(), "t", ""); err == nil {
		t.Fatal("a table without a key attribute was created")
	}
}

func TestOpenKitCloses(t *testing.T) {
	t.Setenv(ddbtest.EnvEndpoint, "")
	kit, err := ddbtest.OpenKit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kit.Close()
	if _, err := kit.Client.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("the endpoint still answers after Close")
	}
}
