// Package orders is the per-message logic of the SQS orders consumer: it
// validates an order message and writes the order to the orders table in
// the same DynamoDB transaction as the message's idempotency record, so an
// order is written once however often SQS delivers its message.
//
// A message body is
//
//	{"order_id": "o-1001", "customer": "c-17", "items": [{"sku": "tea", "qty": 2}], "total": 1150}
//
// with total in the currency's smallest unit. The idempotency key is
// order_id: a producer that sends the same order twice (a retry after a
// timeout) makes two messages but one order.
//
// # Invalid messages
//
// A message whose body is not an order (not JSON, no order_id, a missing
// field, no items, a quantity or total below one) is reported as a batch
// item failure, and nothing is stored for it: not the order, not the
// outcome. SQS delivers it again until the queue's maxReceiveCount, then
// moves it to the dead-letter queue, where it waits for a person. Each
// delivery only re-validates it; no write is repeated. The failure is not
// stored as the outcome of the order_id on purpose: a corrected message for
// the same order must be processed, not refused as a reused key. The queue
// therefore needs a redrive policy (the cdk module's QueueSource sets one);
// without it a poison message would come back until the retention period
// ends.
//
// # An order written twice
//
// The Put is conditioned on the order not existing. Should the same order
// arrive after its idempotency record expired (past the retry horizon), the
// transaction is cancelled instead of overwriting the order, and the
// message is reported failed, ending in the dead-letter queue.
package orders
