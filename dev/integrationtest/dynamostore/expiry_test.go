package dynamostore_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The expiration of a record against the DynamoDB test endpoint, with
// DynamoDB's TTL deletion played by ttlSweep: an in-progress record
// expires only after its hold, an UNKNOWN or external record never
// (model/record.pml's per-state invariants; make mutate's RENEW_TTL, UNKNOWN_TTL and
// RENEW_EXTERNAL_TTL).

// ttlSweep deletes, as DynamoDB's TTL deletion may at any time after it,
// every record whose expiration has passed at now (a conditional delete,
// so a record rewritten meanwhile stays). It returns the keys deleted.
func (e *env) ttlSweep(t *testing.T, now time.Time) []string {
	t.Helper()
	out, err := e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, it := range out.Items {
		exp, err := strconv.ParseInt(num(it, "expiration"), 10, 64)
		if err != nil || exp >= now.Unix() {
			continue
		}
		_, err = e.client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
			TableName:                 aws.String(e.table),
			Key:                       map[string]types.AttributeValue{"id": it["id"]},
			ConditionExpression:       aws.String("#e < :now"),
			ExpressionAttributeNames:  map[string]string{"#e": "expiration"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": N(strconv.FormatInt(now.Unix(), 10))},
		})
		var failed *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &failed):
		case err != nil:
			t.Fatal(err)
		default:
			deleted = append(deleted, it["id"].(*types.AttributeValueMemberS).Value)
		}
	}
	return deleted
}

// expiresAfterItsHold checks the per-state invariants of a stored record:
// an INPROGRESS record without the external mark expires after its hold
// (and its lease), an UNKNOWN or external record has no expiration.
func expiresAfterItsHold(t *testing.T, it item) {
	t.Helper()
	status, _ := it["status"].(*types.AttributeValueMemberS)
	_, external := it["external"]
	exp := num(it, "expiration")
	switch {
	case status == nil:
		t.Fatalf("record without a status: %v", it)
	case status.Value == string(lambdaidem.StatusUnknown) || external:
		if exp != "" {
			t.Fatalf("%s record (external %v) with an expiration %s: TTL deletion would forget an unresolved effect", status.Value, external, exp)
		}
	case status.Value == string(lambdaidem.StatusInProgress):
		sec, _ := strconv.ParseInt(exp, 10, 64)
		for _, attr := range []string{"hold_until", "in_progress_expiration"} {
			ms, _ := strconv.ParseInt(num(it, attr), 10, 64)
			if sec*1000 <= ms {
				t.Fatalf("in-progress record expires at %s s, not after its %s %s ms: TTL deletion may delete it while its owner may run", exp, attr, num(it, attr))
			}
		}
	}
}

// TestRenewedRecordOutlivesItsHold: a renewing owner (Lambda Managed
// Instances) with a retry horizon shorter than its MaxRunTime renews until
// MaxRunTime; each renewal moves its hold to the renewal time plus
// MaxRunTime plus LeaseMargin, past the expiration its claim wrote (the
// claim's hold plus a second). Each renewal must move the expiration past
// its hold (ExpiryFor): a renewal that keeps the claim's TTL lets DynamoDB
// delete the record while the owner may still run, and a duplicate claims
// afresh and runs the handler a second time.
func TestRenewedRecordOutlivesItsHold(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	t0 := clk.Now()
	const lease, maxRun, retryHorizon = 10 * time.Second, time.Minute, 30 * time.Second
	owner := e.guard(t, clk, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.Lease = lease
		o.MaxRunTime = maxRun
		o.RetryHorizon = retryHorizon
		o.After = clk.After
	})
	var runs atomic.Int32
	release := make(chan struct{})
	ownerDone := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), owner, call("k"), func(context.Context) (string, error) {
			runs.Add(1)
			<-release // ignores its context, as a handler on Managed Instances may
			return "paid", nil
		})
		ownerDone <- err
	}()
	t.Cleanup(func() {
		close(release)
		<-ownerDone
	})
	key := recordKey("k")
	waitItem := func(what string, cond func(item) bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if it := e.record(t, key); it != nil && cond(it) {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitItem("the owner's claim", func(item) bool { return true })
	claimExp := num(e.record(t, key), "expiration")

	// The renewer renews every 2/3 of the lease until MaxRunTime (t0 + 60 s):
	// move the clock a second at a time, each time once it waits on its timer.
	for clk.Now().Before(t0.Add(maxRun - 5*time.Second)) {
		for end := time.Now().Add(5 * time.Second); clk.Timers() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("timed out waiting for the renewer's timer at +%v", clk.Now().Sub(t0))
			}
		}
		clk.Advance(time.Second)
		expiresAfterItsHold(t, e.record(t, key))
	}
	waitItem("a renewal past the claim's expiration", func(it item) bool {
		hold, _ := strconv.ParseInt(num(it, "hold_until"), 10, 64)
		exp, _ := strconv.ParseInt(claimExp, 10, 64)
		return hold > exp*1000
	})
	it := e.record(t, key)
	expiresAfterItsHold(t, it)
	renewedAt, _ := strconv.ParseInt(num(it, "renewed_at"), 10, 64)

	// Later than the claim's expiration, within MaxRunTime of the last
	// renewal: the owner may still run. TTL deletion may run now.
	clk.Advance(t0.Add(90 * time.Second).Sub(clk.Now()))
	if !clk.Now().Before(time.UnixMilli(renewedAt).Add(maxRun)) {
		t.Fatalf("the test's clock %v is past the last renewal %v plus MaxRunTime", clk.Now(), time.UnixMilli(renewedAt))
	}
	if gone := e.ttlSweep(t, clk.Now()); len(gone) != 0 {
		t.Errorf("TTL deletion at +%v deleted %v, claimed with expiration %s and renewed at +%v: the owner may still run",
			clk.Now().Sub(t0), gone, claimExp, time.UnixMilli(renewedAt).Sub(t0))
	}
	dup := e.guard(t, clk, func(o *lambdaidem.Options) { o.MaxRunTime = maxRun })
	_, err := lambdaidem.Do(context.Background(), dup, call("k"), func(context.Context) (string, error) {
		runs.Add(1)
		return "paid again", nil
	})
	if !errors.Is(err, lambdaidem.ErrInProgress) || runs.Load() != 1 {
		t.Fatalf("duplicate = %v, the handler ran %d times; want ErrInProgress and one run", err, runs.Load())
	}
}

// markedByAnEarlierVersion claims key and marks it external as versions
// before marks removed the expiration did: the TTL kept.
func (e *env) markedByAnEarlierVersion(t *testing.T, key string) {
	t.Helper()
	e.claim(t, key, "tok")
	_, err := e.client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(e.table),
		Key:                       map[string]types.AttributeValue{"id": S(key)},
		UpdateExpression:          aws.String("SET #x = :t"),
		ExpressionAttributeNames:  map[string]string{"#x": "external"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if num(e.record(t, key), "expiration") == "" {
		t.Fatal("the setup's record has no expiration")
	}
}

// TestUncertainRecordNeverExpires: the owner's writes on an external
// record remove the expiration, also one an earlier mark left (records
// marked external by versions before marks removed it keep their TTL,
// lambdaidem/gate.go): MarkUnknown (markUnknownUpdate) and an external
// renewal (renewExternalUpdate). An UNKNOWN or external record is a
// recovery obligation, which TTL deletion must never forget: after any
// sweep a duplicate reconciles it. make mutate's UNKNOWN_TTL and
// RENEW_EXTERNAL_TTL.
func TestUncertainRecordNeverExpires(t *testing.T) {
	for name, write := range map[string]func(*env, string) (bool, error){
		"mark unknown": func(e *env, key string) (bool, error) {
			return e.store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key, Token: "tok"})
		},
		"external renewal": func(e *env, key string) (bool, error) {
			return e.store.Renew(context.Background(), lambdaidem.Renewal{Key: key, Token: "tok", Now: t0.Add(10 * time.Second),
				LeaseUntil: t0.Add(70 * time.Second), HoldUntil: t0.Add(2 * time.Minute), External: true})
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			key := recordKey("k")
			e.markedByAnEarlierVersion(t, key)
			if ok, err := write(e, key); !ok || err != nil {
				t.Fatalf("%s = %v, %v", name, ok, err)
			}
			expiresAfterItsHold(t, e.record(t, key))
			if gone := e.ttlSweep(t, t0.Add(365*24*time.Hour)); len(gone) != 0 {
				t.Fatalf("TTL deletion a year later deleted the uncertain record %v", gone)
			}
			clk := newClock()
			clk.Advance(t0.Add(24 * time.Hour).Sub(clk.Now()))
			c := call("k")
			c.Fingerprint = "fp"
			reconciles := 0
			c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) {
				reconciles++
				return "paid", true, nil
			}
			out, err := lambdaidem.Do(context.Background(), e.guard(t, clk), c, func(context.Context) (string, error) {
				t.Error("the handler ran again for an uncertain record")
				return "", nil
			})
			if err != nil || out != "paid" || reconciles != 1 {
				t.Fatalf("duplicate a day later = %q, %v after %d reconciles; want the reconciled outcome", out, err, reconciles)
			}
		})
	}
}
