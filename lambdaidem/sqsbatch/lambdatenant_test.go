package sqsbatch_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/tenanttest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// The same batch delivered to two Lambda tenants runs once for each: a
// message of tenant B is never a completed duplicate of tenant A's.
func TestLambdaTenantsNeverShareARecord(t *testing.T) {
	ev := loadEvent(t, "standard.json")
	var mu sync.Mutex
	runs := 0
	s := newSetup(t, func(context.Context, events.SQSMessage) error {
		mu.Lock()
		defer mu.Unlock()
		runs++
		return nil
	}, nil)
	perTenant := 0
	for i, tenant := range []string{"blue", "green", "blue"} {
		resp, err := s.handler(tenanttest.Context(tenant), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("tenant %s: %v %v", tenant, resp, err)
		}
		if i == 0 {
			perTenant = runs // the batch holds a duplicate order: one run per distinct key
		}
	}
	if perTenant == 0 || runs != 2*perTenant {
		t.Fatalf("%d runs, %d for blue alone; want green's batch to run as blue's did, and blue's duplicate batch not at all", runs, perTenant)
	}
}

// Synchronized contenders of two tenants on one message both run.
func TestLambdaTenantsContendingBothRun(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 0)
	rv := tenanttest.NewRendezvous(2)
	s := newSetup(t, func(ctx context.Context, m events.SQSMessage) error {
		return rv.Arrive()
	}, nil)
	var wg sync.WaitGroup
	resps := make([]events.SQSEventResponse, 2)
	for i, tenant := range []string{"blue", "green"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], _ = s.handler(tenanttest.Context(tenant), ev)
		}()
	}
	wg.Wait()
	for i, r := range resps {
		if len(r.BatchItemFailures) != 0 {
			t.Errorf("contender %d: %v; want both tenants to run", i, r.BatchItemFailures)
		}
	}
}

// A function that declares tenants reports every message of an invocation
// without one for redelivery, and runs none.
func TestDeclaredTenantsRefuseABatchWithoutOne(t *testing.T) {
	g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Getenv = tenanttest.Declared })
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	h, err := wrapBatch(g, "CreateOrder", func(context.Context, events.SQSMessage) error {
		t.Error("ran without a tenant")
		return nil
	}, func(o *sqsbatch.Options) {
		o.Key = sqsbatch.KeyFromMessageID
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := loadEvent(t, "standard.json")
	resp, err := h(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != len(ev.Records) || !strings.Contains(logs.String(), lambdaidem.TenantsEnv) {
		t.Fatalf("%v %v; want every message reported", resp, err)
	}
}

// The log names a message's record key, the tenant's: the key the record
// is stored under, which an operator looks up (lambdaidem records,
// SplitRecordKey reads the tenant back). Mutant TENANT_KEY_SQS: the batch
// derived its keys without the tenant and logged a key no record has.
func TestTheLogNamesTheTenantsRecord(t *testing.T) {
	var logs syncBuffer
	s := newSetup(t, func(context.Context, events.SQSMessage) error { return nil }, nil, func(o *sqsbatch.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	if resp, err := s.handler(tenanttest.Context("blue"), loadEvent(t, "standard.json")); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v %v", resp, err)
	}
	logged := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct{ Msg, Key string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Msg != "sqsbatch: message processed" {
			continue
		}
		logged++
		rec, err := s.store.Get(context.Background(), l.Key, s.clock.Now())
		if _, tenant, _, ok := lambdaidem.SplitRecordKey(l.Key); err != nil || rec.Status != lambdaidem.StatusCompleted || !ok || tenant != "blue" {
			t.Errorf("logged key %q: record %s, %v, tenant %q; want tenant blue's completed record", l.Key, rec.Status, err, tenant)
		}
	}
	if logged == 0 {
		t.Fatalf("no message logged as processed:\n%s", logs.String())
	}
}
