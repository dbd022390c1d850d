// Package emf turns a Guard's [lambdaidem.Hooks] into CloudWatch metrics,
// written as Embedded Metric Format (EMF) lines: one JSON object per event,
// which CloudWatch Logs turns into metrics when a Lambda function writes
// them to stdout. No agent, no PutMetricData call, no dependency.
//
//	m, err := emf.New(os.Stdout, func(o *emf.Options) { o.Service = "payments" })
//	if err != nil { log.Fatal(err) }
//	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Hooks = m.Hooks() })
//
// # Metrics
//
// In the namespace Options.Namespace (default "lambdaidem"), each with the
// dimension sets [Service, Operation] and [Service]:
//
//	Claims              Count         an attempt claimed a record and runs the handler
//	CacheReplays        Count         a duplicate answered from the local cache
//	StoreReplays        Count         a duplicate answered from the store
//	RefusedInProgress   Count         a duplicate refused: another attempt holds the record
//	RefusedKeyReused    Count         a duplicate refused: same key, different payload
//	RefusedUnknown      Count         a duplicate refused: the outcome is UNKNOWN
//	UnknownAge          Seconds       with RefusedUnknown: how long ago the UNKNOWN record was first claimed (it never expires; alarm on its Maximum)
//	LeaseLost           Count         an attempt lost its lease; nothing it did was committed
//	MarkedUnknown       Count         a failed attempt left its record UNKNOWN (needs reconciling)
//	FailOpen            Count         answered without idempotency: the store was unavailable
//	StoreErrors         Count         a store call failed
//	CommitLatency       Milliseconds  one commit call, from the start of the write to its answer
//	OutboxSetAside      Count         the outbox relay set aside a message it cannot publish (Operation: the message's kind; WriteSetAside)
//
// The operation name is the only per-request value in a line. Record
// keys, idempotency keys, payloads and error messages never are: a
// dimension with one value per request would create a metric per request,
// and raw keys do not belong in logs.
//
// Each line follows the EMF specification: a root "_aws" member with
// "Timestamp" (Unix milliseconds) and "CloudWatchMetrics", one metric
// directive with a "Namespace", "Dimensions" (each set naming root
// members, at most 30) and "Metrics" (at most 100 definitions), and a root
// member for every dimension and metric it names.
package emf
