package dynamostore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// gateCase is one record of the gate's domain, as an item.
type gateCase struct {
	status   lambdaidem.Status
	lapsed   bool   // the lease ended a minute ago (else it ends in a minute)
	external bool   // the owner marked an external effect
	renews   string // "no", "yes" (recorded at claim), or "legacy": written before renews and hold_until existed
	expiry   string // "live", "expired", or "none" (UNKNOWN and external records written by this version)
	renewed  string // "never", "within" MaxRunTime, or "long ago"
}

func (c gateCase) String() string {
	return fmt.Sprintf("%s lapsed=%v external=%v renews=%s expiry=%s renewed=%s", c.status, c.lapsed, c.external, c.renews, c.expiry, c.renewed)
}

// gateDomain is every combination of status × lease lapsed × external ×
// owner renews × expired × renewed within MaxRunTime, but those no code
// can read (a COMPLETED or non-external INPROGRESS record without an
// expiration is malformed).
func gateDomain() []gateCase {
	var cases []gateCase
	for _, status := range []lambdaidem.Status{lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown} {
		for _, lapsed := range []bool{false, true} {
			for _, external := range []bool{false, true} {
				for _, renews := range []string{"no", "yes", "legacy"} {
					for _, expiry := range []string{"live", "expired", "none"} {
						for _, renewed := range []string{"never", "within", "long ago"} {
							c := gateCase{status, lapsed, external, renews, expiry, renewed}
							if expiry == "none" && status != lambdaidem.StatusUnknown && !(status == lambdaidem.StatusInProgress && external) {
								continue
							}
							cases = append(cases, c)
						}
					}
				}
			}
		}
	}
	return cases
}

// gateWindow is the MaxRunTime of the owners and of the claimant,
// gateMargin the owners' LeaseMargin (the default).
const (
	gateWindow = 10 * time.Minute
	gateMargin = 5 * time.Second
)

// item is the record c describes at now, written the way each version's
// writes leave it: the hold is what OwnerHold gives the owner's last sign of
// life.
func (c gateCase) item(key string, now time.Time) item {
	lease := now.Add(time.Minute)
	if c.lapsed {
		lease = now.Add(-time.Minute)
	}
	it := item{"id": S(key), "status": S(string(c.status)), "attempt": S("owner"), "attempts": N("3"),
		"validation": S("fp"), "created_at": N(strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)),
		"in_progress_expiration": N(strconv.FormatInt(lease.UnixMilli(), 10))}
	last := lease
	switch c.renewed {
	case "within":
		last = now.Add(-gateWindow / 2)
	case "long ago":
		last = now.Add(-2 * gateWindow)
	}
	if c.renewed != "never" {
		it["renewed_at"] = N(strconv.FormatInt(last.UnixMilli(), 10))
	}
	switch c.renews {
	case "no":
		it["renews"] = &types.AttributeValueMemberBOOL{Value: false}
		it["hold_until"] = N(strconv.FormatInt(lambdaidem.OwnerHold(lease, last, false, gateWindow, gateMargin).UnixMilli(), 10))
	case "yes":
		it["renews"] = &types.AttributeValueMemberBOOL{Value: true}
		it["hold_until"] = N(strconv.FormatInt(lambdaidem.OwnerHold(lease, last, true, gateWindow, gateMargin).UnixMilli(), 10))
	}
	switch c.expiry {
	case "live":
		it["expiration"] = N(strconv.FormatInt(now.Add(time.Hour).Unix(), 10))
	case "expired":
		it["expiration"] = N(strconv.FormatInt(now.Add(-time.Second).Unix(), 10))
	}
	if c.external {
		it["external"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	if c.status == lambdaidem.StatusCompleted {
		it["data"] = S(`{"value":"stored"}`)
		it["completed_at"] = N(strconv.FormatInt(now.Add(-30*time.Minute).UnixMilli(), 10))
	}
	return it
}

// TestGateExpressionsSayJudge ties the Go predicate and the DynamoDB
// condition expressions together, exhaustively over the gate's domain:
// each combination is written as an item to the DynamoDB test endpoint,
// read back (Records.Read decodes it as the store does), judged by
// lambdaidem.Judge, and then a claim (the UpdateItem of claimCondition,
// then the PutItem of replaceCondition for an expired record) and an
// optimistic commit (optimisticCommitCondition) are attempted on it. The
// conditional writes succeed exactly where Judge says the record is
// Claimable, a claim counts one more attempt exactly for VerdictTakeOver
// and restarts at one for VerdictExpired, and every refusal leaves the
// item as it was.
func TestGateExpressionsSayJudge(t *testing.T) {
	e := newEnv(t)
	r := e.records(t, func(o *dynamostore.Options) { o.MaxRunTime = gateWindow })
	ctx := context.Background()
	now := time.UnixMilli(1_800_000_000_500)
	verdicts := map[lambdaidem.Verdict]int{}
	for i, c := range gateDomain() {
		key := recordKey(fmt.Sprintf("gate-%04d", i))
		put := func() {
			t.Helper()
			if _, err := e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: c.item(key, now)}); err != nil {
				t.Fatalf("%v: put: %v", c, err)
			}
		}
		put()
		rec, err := r.Read(ctx, key)
		if err != nil {
			t.Fatalf("%v: read: %v", c, err)
		}
		v := lambdaidem.Judge(rec, now, gateWindow)
		verdicts[v]++
		before := e.record(t, key)

		claimed, ok, err := e.store.Claim(ctx, lambdaidem.Claim{Key: key, Token: "claimant", Fingerprint: "fp", Now: now,
			LeaseUntil: now.Add(time.Minute), HoldUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), Window: gateWindow})
		switch {
		case err != nil:
			t.Fatalf("%v: claim: %v", c, err)
		case ok != v.Claimable():
			t.Errorf("%v: Judge = %v, but the claim's conditions said claimable = %v", c, v, ok)
		case ok && v == lambdaidem.VerdictTakeOver && claimed.Attempts != 4:
			t.Errorf("%v: a takeover counted %d attempts; want 4", c, claimed.Attempts)
		case ok && v == lambdaidem.VerdictExpired && claimed.Attempts != 1:
			t.Errorf("%v: the claim of an expired record counted %d attempts; want 1 (afresh)", c, claimed.Attempts)
		case !ok && render(e.record(t, key)["attempt"]) != render(before["attempt"]):
			t.Errorf("%v: a refused claim changed the record", c)
		}

		put()
		_, ok, err = e.store.Commit(ctx, lambdaidem.Commit{Key: key, Token: "optimist", Fingerprint: "fp", Outcome: []byte(`"x"`),
			Now: now, ExpiresAt: now.Add(time.Hour), Attempts: 1, CreatedAt: now, Claim: true, Window: gateWindow})
		switch {
		case err != nil:
			t.Fatalf("%v: optimistic commit: %v", c, err)
		case ok != v.Claimable():
			t.Errorf("%v: Judge = %v, but the optimistic commit's condition said claimable = %v", c, v, ok)
		}
	}
	t.Logf("verdicts over %d records: %v", len(gateDomain()), verdicts)
	for _, v := range []lambdaidem.Verdict{lambdaidem.VerdictExpired, lambdaidem.VerdictTakeOver, lambdaidem.VerdictReplay, lambdaidem.VerdictHeld, lambdaidem.VerdictReconcile} {
		if verdicts[v] == 0 {
			t.Errorf("no record of the domain is judged %v: the domain misses a case", v)
		}
	}
}
