// Package lambdaidem makes AWS Lambda handlers idempotent: a retried API
// call, a redelivered SQS message or a handler cut off halfway has its
// effect once, and every retry gets the original answer.
//
// The two-minute version:
//
//	store, _ := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, _ := lambdaidem.New(store, func(o *lambdaidem.Options) {
//		o.RetryHorizon = 48 * time.Hour
//	})
//	orders, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, Receipt]{
//		Operation: "CreateOrder",
//		Key:       func(_ context.Context, o Order) (string, error) { return o.ID, nil },
//	})
//	handler := orders.Wrap(func(ctx context.Context, o Order) (Receipt, error) {
//		// Staged writes commit in one transaction with the idempotency record.
//		if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String("orders"), Item: item(o)}); err != nil {
//			return Receipt{}, err
//		}
//		return Receipt{OrderID: o.ID}, nil
//	})
//	lambda.Start(handler)
//
// # Record states
//
//	ABSENT/EXPIRED --claim (conditional write, new attempt token)--> INPROGRESS(token, lease)
//	INPROGRESS --commit (fenced on token; + staged writes, one tx)--> COMPLETED(outcome)
//	INPROGRESS --handler error before any external effect (fenced)-> ABSENT (released)
//	INPROGRESS --failure after an external effect began------------> UNKNOWN (kept)
//	INPROGRESS(external) --crash, lease lapsed: never taken over-----> answered as UNKNOWN
//	INPROGRESS --still running, lease renewed (fenced; Renew)-------> INPROGRESS(token, lease')
//	INPROGRESS --lease lapsed, new claim (takeover, new token)------> INPROGRESS(token2)
//	UNKNOWN    --reconcile says done / not done---------------------> COMPLETED / ABSENT
//	COMPLETED  --expiration passed-----------------------------------> treated as ABSENT
//
// Every write after the claim is fenced on the attempt's token, so an
// attempt whose lease was taken over can neither overwrite the new owner's
// record nor commit its staged writes.
//
// # Pieces
//
// A [Guard] holds a [Store] and [Options]. A [Wrapper] (from [NewWrapper],
// which validates a [Spec]) adapts a handler of any event type and keeps its
// signature; [Do] is the same machinery for adapters that compute the key
// and fingerprint themselves (see the apigw, sqsbatch and streambatch
// packages). Inside a handler, [AttemptFrom] gives the stable
// [Attempt.OperationKey] for downstream APIs and [Attempt.BeginExternal] to
// declare an effect outside the store's transaction.
package lambdaidem
