package emf_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func Example() {
	now := func() time.Time { return time.UnixMilli(1764581400000) } // a fixed clock, for the example's output
	m, err := emf.New(os.Stdout, func(o *emf.Options) {
		o.Service = "payments"
		o.Now = now
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	guard, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.Hooks = m.Hooks()
		o.Now = now
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	charge := lambdaidem.Call[string]{Operation: "CreatePayment", Key: "order-1001"}
	pay := func(context.Context) (string, error) { return "paid", nil }
	lambdaidem.Do(context.Background(), guard, charge, pay) // runs: a claim and a commit
	lambdaidem.Do(context.Background(), guard, charge, pay) // a retry: replayed from the store
	// Output:
	// {"_aws":{"Timestamp":1764581400000,"CloudWatchMetrics":[{"Namespace":"lambdaidem","Dimensions":[["Service","Operation"],["Service"]],"Metrics":[{"Name":"Claims","Unit":"Count"}]}]},"Service":"payments","Operation":"CreatePayment","Claims":1}
	// {"_aws":{"Timestamp":1764581400000,"CloudWatchMetrics":[{"Namespace":"lambdaidem","Dimensions":[["Service","Operation"],["Service"]],"Metrics":[{"Name":"CommitLatency","Unit":"Milliseconds"}]}]},"Service":"payments","Operation":"CreatePayment","CommitLatency":0}
	// {"_aws":{"Timestamp":1764581400000,"CloudWatchMetrics":[{"Namespace":"lambdaidem","Dimensions":[["Service","Operation"],["Service"]],"Metrics":[{"Name":"StoreReplays","Unit":"Count"}]}]},"Service":"payments","Operation":"CreatePayment","StoreReplays":1}
}
