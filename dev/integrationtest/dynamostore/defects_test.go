package dynamostore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func ms(t time.Time) types.AttributeValue  { return N(strconv.FormatInt(t.UnixMilli(), 10)) }
func sec(t time.Time) types.AttributeValue { return N(strconv.FormatInt(t.Unix(), 10)) }

// putItem writes it raw, as a version of the library left it.
func (e *env) putItem(t *testing.T, it item) {
	t.Helper()
	if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: it}); err != nil {
		t.Fatal(err)
	}
}

// Defect 1 of issue 22: a Lambda Managed Instances owner renewed, its
// renewals were then refused (throttling) while its external call was in
// flight, and its lease lapsed. A duplicate got ErrInProgress (the owner
// renewed less than MaxRunTime ago), but Records.Resolve settled the
// record (as good as UNKNOWN) and resolve --not-done deleted it: the next
// retry ran the effect again. The item is the one this version's owner
// leaves: claimed at t0 with a 10 s lease, renewing (MaxRunTime 30 min),
// marked external, renewed at t0+6s; now is t0+18s, 12 s after the
// renewal, 2 s after the renewed lease ended.
func TestOperatorCannotSettleALiveManagedInstancesOwner(t *testing.T) {
	for _, version := range []string{"this version", "the version before (an expiration, no hold)"} {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t)
			clk := newClock() // t0
			key := recordKey("k")
			renewed := clk.Now().Add(6 * time.Second)
			lease := renewed.Add(10 * time.Second)
			it := item{"id": S(key), "status": S("INPROGRESS"), "attempt": S("owner"), "attempts": N("1"),
				"validation": S("fp-k"), "created_at": ms(clk.Now()), "in_progress_expiration": ms(lease),
				"external": &types.AttributeValueMemberBOOL{Value: true}, "renewed_at": ms(renewed)}
			if version == "this version" {
				it["renews"] = &types.AttributeValueMemberBOOL{Value: true}
				it["hold_until"] = ms(renewed.Add(30 * time.Minute))
			} else {
				it["expiration"] = sec(clk.Now().Add(24 * time.Hour))
			}
			e.putItem(t, it)
			clk.Advance(18 * time.Second)

			dup := e.guard(t, clk)
			if _, err := lambdaidem.Do(context.Background(), dup, call("k"), func(context.Context) (string, error) {
				t.Error("the duplicate ran the handler")
				return "", nil
			}); !errors.Is(err, lambdaidem.ErrInProgress) {
				t.Fatalf("duplicate = %v; want ErrInProgress", err)
			}
			r := e.records(t)
			rec, err := r.Read(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Resolve(context.Background(), rec, dynamostore.Resolution{Now: clk.Now()}); err == nil {
				t.Fatal("resolve --not-done settled a record whose owner renewed 12 s ago; want it refused")
			}
			if _, err := r.Read(context.Background(), key); err != nil {
				t.Fatalf("the record is gone after the refused resolve: %v", err)
			}
		})
	}
}

// TestOperatorRefusalsSayWhenAndForceOverrides: Resolve and Forget refuse
// a held record with a HeldError naming when the hold ends; with Force they
// write.
func TestOperatorRefusalsSayWhenAndForceOverrides(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	key := recordKey("k")
	lease := clk.Now().Add(10 * time.Second)
	hold := lease.Add(30 * time.Minute)
	e.putItem(t, item{"id": S(key), "status": S("UNKNOWN"), "attempt": S("owner"), "attempts": N("1"),
		"validation": S("fp-k"), "created_at": ms(clk.Now()), "in_progress_expiration": ms(lease),
		"external": &types.AttributeValueMemberBOOL{Value: true}, "renewed_at": ms(clk.Now().Add(6 * time.Second)),
		"renews": &types.AttributeValueMemberBOOL{Value: true}, "hold_until": ms(hold)})
	clk.Advance(time.Minute)
	r := e.records(t)
	rec, err := r.Read(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var held *dynamostore.HeldError
	if err := r.Resolve(context.Background(), rec, dynamostore.Resolution{Now: clk.Now()}); !errors.As(err, &held) || !held.Until.Equal(hold) {
		t.Fatalf("Resolve of a held UNKNOWN record = %v; want a HeldError until %v", err, hold)
	}
	if err := r.Forget(context.Background(), rec, dynamostore.Forgetting{Now: clk.Now()}); !errors.Is(err, dynamostore.ErrHeld) {
		t.Fatalf("Forget of a held record = %v; want ErrHeld", err)
	}
	if err := r.Resolve(context.Background(), rec, dynamostore.Resolution{Now: clk.Now(), Force: true}); err != nil {
		t.Fatalf("forced Resolve = %v", err)
	}
	if _, err := r.Read(context.Background(), key); !errors.Is(err, dynamostore.ErrRecordNotFound) {
		t.Fatalf("after a forced not-done: %v; want the record released", err)
	}
}

// TestRecordsWrittenByEarlierVersions: records exactly as the code before
// the gate wrote them (no renews, no hold_until; an UNKNOWN record or an
// external one with an expiration) are handled safely: an expired UNKNOWN
// record is reconciled, never run afresh; one whose owner renewed within
// the reader's MaxRunTime is not reconciled; an external record 12 s after
// its owner's renewal, past the expiration the old code gave it, is in
// progress; a lapsed record with no renewal on record is held for
// MaxRunTime after its lease end (its owner may have been a Managed
// Instances one whose renewals never got through), then taken over.
func TestRecordsWrittenByEarlierVersions(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	now := clk.Now()
	ctx := context.Background()
	g := e.guard(t, clk) // MaxRunTime 30 min (the default)
	base := func(k, status string) item {
		return item{"id": S(recordKey(k)), "status": S(status), "attempt": S("old-owner"), "attempts": N("1"),
			"validation": S("fp-" + k), "created_at": ms(now.Add(-2 * time.Hour))}
	}
	// As markUnknownUpdate set it: expiration = then + RetryHorizon, passed.
	unknownExpired := base("unknown-expired", "UNKNOWN")
	unknownExpired["in_progress_expiration"] = ms(now.Add(-2 * time.Hour))
	unknownExpired["external"] = &types.AttributeValueMemberBOOL{Value: true}
	unknownExpired["expiration"] = sec(now.Add(-time.Hour))
	e.putItem(t, unknownExpired)
	unknownRenewed := base("unknown-renewed", "UNKNOWN")
	unknownRenewed["in_progress_expiration"] = ms(now.Add(time.Minute))
	unknownRenewed["external"] = &types.AttributeValueMemberBOOL{Value: true}
	unknownRenewed["renewed_at"] = ms(now.Add(-2 * time.Minute))
	unknownRenewed["expiration"] = sec(now.Add(-time.Second))
	e.putItem(t, unknownRenewed)
	// An owner renewed 12 s ago, lease lapsed 1 s ago; expiration = lease + 1 s (RetryHorizon 1 min).
	external := base("external", "INPROGRESS")
	external["in_progress_expiration"] = ms(now.Add(-time.Second))
	external["external"] = &types.AttributeValueMemberBOOL{Value: true}
	external["renewed_at"] = ms(now.Add(-12 * time.Second))
	external["expiration"] = sec(now.Add(-time.Second))
	e.putItem(t, external)
	lapsed := base("lapsed", "INPROGRESS")
	lapsed["in_progress_expiration"] = ms(now.Add(-time.Second))
	lapsed["expiration"] = sec(now.Add(time.Hour))
	e.putItem(t, lapsed)

	reconciled := 0
	reconcile := func(context.Context, lambdaidem.Unknown) (string, bool, error) {
		reconciled++
		return "charged (reconciled)", true, nil
	}
	run := func(k string) (string, error) {
		c := call(k)
		c.Reconcile = reconcile
		return lambdaidem.Do(ctx, g, c, func(context.Context) (string, error) { return "ran again", nil })
	}
	if out, err := run("unknown-expired"); err != nil || out != "charged (reconciled)" || reconciled != 1 {
		t.Errorf("expired UNKNOWN = %q, %v (reconciled %d); want it reconciled, never run afresh", out, err, reconciled)
	}
	if _, err := run("unknown-renewed"); !errors.Is(err, lambdaidem.ErrOutcomeUnknown) || reconciled != 1 {
		t.Errorf("UNKNOWN renewed 2 min ago = %v (reconciled %d); want ErrOutcomeUnknown, no reconcile", err, reconciled)
	}
	if _, err := run("external"); !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Errorf("external, 12 s after its owner's renewal, past its old expiration = %v; want ErrInProgress", err)
	}
	if _, err := run("lapsed"); !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Errorf("lapsed, no renewal on record, 1 s after its lease = %v; want ErrInProgress", err)
	}
	clk.Advance(30 * time.Minute)
	if out, err := run("lapsed"); err != nil || out != "ran again" {
		t.Errorf("lapsed, MaxRunTime after its lease = %q, %v; want it taken over", out, err)
	}
}

// TestUnknownAndExternalRecordsHaveNoTTL: through the DynamoDB test
// endpoint, the item an UNKNOWN record is, and an external one, carries no
// expiration attribute, so DynamoDB's TTL never deletes it.
func TestUnknownAndExternalRecordsHaveNoTTL(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	leaveUnknown(t, g, "unknown")
	if it := e.record(t, recordKey("unknown")); it["expiration"] != nil || render(it["status"]) != "S:UNKNOWN" {
		t.Errorf("UNKNOWN item = %v; want no expiration", it)
	}
	inside, finish := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		lambdaidem.Do(context.Background(), g, call("external"), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				t.Error(err)
			}
			close(inside)
			<-finish
			return "ok", nil
		})
	}()
	<-inside
	if it := e.record(t, recordKey("external")); it["expiration"] != nil {
		t.Errorf("external item = %v; want no expiration", it)
	}
	close(finish)
	<-done
}
