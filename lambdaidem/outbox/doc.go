// Package outbox stages messages (to SQS, SNS, EventBridge, or a generic
// item for a relay of your own) in the same atomic commit as the
// idempotency record and the business writes, and defines what a relay
// hands to a [Publisher].
//
// A message sent from inside a handler, outside the store's transaction,
// can be lost or sent twice by a crash: the publish and the commit are two
// writes. Staged with [Stage], the message becomes part of the commit
// instead: the store writes it to an outbox table with the record, or
// nothing at all, and a relay publishes it after the commit
// (dynamostore/relay reads the outbox table's DynamoDB stream; memstore's
// Relay does the same in memory).
//
//	id, err := outbox.Stage(ctx, outbox.SQSFIFO{
//		QueueURL: queueURL, GroupID: orderID, Body: `{"order":"42","event":"accepted"}`,
//	})
//
// Each message's [Message.ID] is derived from the operation key (see
// lambdaidem.Attempt.OperationKey), the record's creation time
// (Attempt.Since, kept by a takeover) and the message's position among the
// messages the operation staged ([ID]), so every attempt under one record
// stages the same ids, and a key reused after its record expired (a new
// operation) stages new ones. [Stage] refuses what the target refuses
// every time (its documented characters, sizes and names). The relay publishes at least once and a crash between a
// publish and its mark publishes again with the same id: FIFO targets
// deduplicate on it (the relay sends it as the deduplication id); standard
// SQS and SNS messages carry it as the message attribute [IDAttribute],
// and EventBridge events as the field [IDAttribute] of their detail, so
// that a consumer wrapped by lambdaidem keys on it (sqsbatch.KeyFromAttribute)
// and runs its effect once.
//
// A target that deduplicates only for a time ([Message.Window]: five
// minutes for SQS FIFO and SNS FIFO) is never sent a message again once
// that window has passed since the message's first dispatch: the relay
// refuses, and the message stays unpublished for an operator.
package outbox
