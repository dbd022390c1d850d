package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestCallsPerRequest measures the DynamoDB calls one request costs, from
// the proxy's counters, with the proxy behaving like DynamoDB (and, for
// comparison, without old items on refusals), and fails if they grow.
func TestCallsPerRequest(t *testing.T) {
	type scenario struct {
		name   string
		mode   lambdaidem.Mode
		effect bool
		run    func(t *testing.T, e *env, g *lambdaidem.Guard, handler func(context.Context) (string, error))
		want   map[string]int // calls with DynamoDB's behaviour
		noOld  int            // total calls when refusals carry no old item
	}
	first := func(t *testing.T, e *env, g *lambdaidem.Guard, h func(context.Context) (string, error)) {
		if _, err := lambdaidem.Do(context.Background(), g, call("k"), h); err != nil {
			t.Fatal(err)
		}
	}
	completedDuplicate := func(t *testing.T, e *env, g *lambdaidem.Guard, h func(context.Context) (string, error)) {
		first(t, e, g, h)
		e.ep.Proxy.ResetCalls()
		first(t, e, g, h)
	}
	inFlightDuplicate := func(t *testing.T, e *env, g *lambdaidem.Guard, h func(context.Context) (string, error)) {
		if _, ok, err := e.store.Claim(context.Background(), lambdaidem.Claim{Key: recordKey("k"), Token: "other", Fingerprint: "fp-k",
			Now: t0, LeaseUntil: t0.Add(horizon), ExpiresAt: t0.Add(2 * horizon)}); !ok || err != nil {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		e.ep.Proxy.ResetCalls()
		if _, err := lambdaidem.Do(context.Background(), g, call("k"), h); !errors.Is(err, lambdaidem.ErrInProgress) {
			t.Fatalf("in-flight duplicate = %v; want ErrInProgress", err)
		}
	}
	expiredRecord := func(t *testing.T, e *env, g *lambdaidem.Guard, h func(context.Context) (string, error)) {
		c := commitOf(recordKey("k"), "old", e.order("old"))
		c.Fingerprint, c.Claim = "fp-k", true
		c.Now, c.ExpiresAt = t0.Add(-2*horizon), t0.Add(-horizon)
		if _, ok, err := e.store.Commit(context.Background(), c); !ok || err != nil {
			t.Fatalf("Commit = %v, %v", ok, err)
		}
		e.ep.Proxy.ResetCalls()
		first(t, e, g, h)
	}
	scenarios := []scenario{
		{"first request, claim-first", lambdaidem.ClaimFirst, false, first, map[string]int{"UpdateItem": 1, "PutItem": 1}, 2},
		{"first request, claim-first, one business write", lambdaidem.ClaimFirst, true, first, map[string]int{"UpdateItem": 1, "TransactWriteItems": 1}, 2},
		{"first request, optimistic", lambdaidem.Optimistic, false, first, map[string]int{"PutItem": 1}, 1},
		{"first request, optimistic, one business write", lambdaidem.Optimistic, true, first, map[string]int{"TransactWriteItems": 1}, 1},
		{"completed duplicate, claim-first", lambdaidem.ClaimFirst, true, completedDuplicate, map[string]int{"UpdateItem": 1}, 2},
		{"completed duplicate, optimistic (handler body runs)", lambdaidem.Optimistic, true, completedDuplicate, map[string]int{"TransactWriteItems": 1}, 2},
		{"in-flight duplicate, claim-first", lambdaidem.ClaimFirst, true, inFlightDuplicate, map[string]int{"UpdateItem": 1}, 2},
		{"expired record reclaimed, claim-first, one business write", lambdaidem.ClaimFirst, true, expiredRecord, map[string]int{"UpdateItem": 1, "PutItem": 1, "TransactWriteItems": 1}, 4},
	}
	var report []string
	for _, s := range scenarios {
		for _, dep := range []ddbtest.Departures{{}, {OldItems: ddbtest.OldItemsNever}} {
			e := newEnv(t)
			p := e.proxy(t)
			p.SetDepartures(dep)
			g := e.guard(t, nil, func(o *lambdaidem.Options) {
				o.Mode = s.mode
				o.RetryHorizon = horizon
				o.Now = func() time.Time { return t0 }
			})
			handler := func(ctx context.Context) (string, error) {
				if s.effect {
					if err := dynamostore.Stage(ctx, *e.order("o").Put); err != nil {
						return "", err
					}
				}
				return "done", nil
			}
			s.run(t, e, g, handler)
			calls := p.Calls()
			if dep.OldItems == ddbtest.OldItemsNever {
				if p.Total() != s.noOld {
					t.Errorf("%s without old items: %v; want %d calls", s.name, calls, s.noOld)
				}
				report = append(report, fmt.Sprintf("  (%d without ALL_OLD)", p.Total()))
				continue
			}
			if fmt.Sprint(calls) != fmt.Sprint(s.want) {
				t.Errorf("%s: %v; want %v", s.name, calls, s.want)
			}
			report = append(report, fmt.Sprintf("\n%-55s %d  %v", s.name+":", p.Total(), calls))
		}
	}
	t.Logf("DynamoDB calls per request (proxy behaving like DynamoDB):%s", strings.Join(report, ""))
}
