package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dev/chaos"
)

// chaosFaults are the faults a client can inject against a real endpoint:
// killed invocations (after the claim, before and after the commit),
// responses lost after the endpoint applied the call (the SDK's retry then
// meets its own write), throttling and 5xx bursts refused before they
// leave, lease lapses on the shared (virtual) clock, handler errors, and a
// failure after an external call. The held claims and commits need the
// in-process proxy and are left out, on both targets alike.
var chaosFaults = []chaos.Fault{chaos.CrashAfterClaim, chaos.CrashBeforeCommit, chaos.CrashAfterCommit,
	chaos.LostCommitResponse, chaos.LostClaimResponse, chaos.ThrottleBurst, chaos.ServerErrorBurst,
	chaos.LeaseLapse, chaos.HandlerError, chaos.FailAfterExternal}

// chaosCheck is a bounded randomized run of dev/chaos against the target,
// checked by the same linearizability check (porcupine, per key) and the
// same end-of-run invariants.
func chaosCheck(ops int, seed uint64) *check {
	return &check{
		Name:   "chaos",
		Bound:  fmt.Sprintf("%d operations by 16 workers on 9 keys at a time, seed %d, half of them faulted", ops, seed),
		Budget: budget{WriteUnits: float64(ops) * 12, ReadUnits: float64(ops) * 4, Time: time.Duration(ops)*50*time.Millisecond + time.Minute},
		Run: func(ctx context.Context, w *world, sec *section) error {
			b, err := chaos.NewDynamoBackend(ctx, func(o *chaos.DynamoOptions) {
				o.NewClient = func(tr http.RoundTripper) *dynamodb.Client {
					return w.newClient(func(http.RoundTripper) http.RoundTripper { return tr })
				}
				o.Table, o.EffectsTable = w.table(tableChaos), w.table(tableChaosItems)
			})
			if err != nil {
				return err
			}
			defer b.Close()
			rep, err := chaos.Run(ctx, b, chaos.Config{Seed: seed, Ops: ops, Faults: chaosFaults})
			if err != nil {
				return err
			}
			sec.printf("```text\n%s```", rep.String())
			if !rep.OK() {
				return errors.New("violations:\n" + strings.Join(rep.Violations, "\n"))
			}
			return nil
		},
	}
}
