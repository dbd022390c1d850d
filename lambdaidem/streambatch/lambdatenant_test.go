package streambatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/tenanttest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

func tenantAdapter(t *testing.T, getenv func(string) string) *streambatch.Adapter {
	t.Helper()
	g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Getenv = getenv })
	if err != nil {
		t.Fatal(err)
	}
	a, err := streambatch.New(g, "Ledger")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The same records delivered to two Lambda tenants run once for each.
func TestLambdaTenantsNeverShareARecord(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	l := newLedger()
	h := tenantAdapter(t, func(string) string { return "" }).Kinesis(l.kinesis)
	for _, tenant := range []string{"blue", "green", "blue"} {
		resp, err := h(tenanttest.Context(tenant), ev)
		wantReported(t, resp, err, []string{})
	}
	for i, n := range l.ran(ev) {
		if n != 2 {
			t.Fatalf("record %d ran %d times; want once per tenant (runs %v)", i, n, l.ran(ev))
		}
	}
}

// Synchronized contenders of two tenants on one record both run.
func TestLambdaTenantsContendingBothRun(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	ev.Records = ev.Records[:1]
	rv := tenanttest.NewRendezvous(2)
	h := tenantAdapter(t, func(string) string { return "" }).Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
		return rv.Arrive()
	})
	var wg sync.WaitGroup
	resps := make([]events.KinesisEventResponse, 2)
	for i, tenant := range []string{"blue", "green"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], _ = h(tenanttest.Context(tenant), ev)
		}()
	}
	wg.Wait()
	for i, r := range resps {
		if len(r.BatchItemFailures) != 0 {
			t.Errorf("contender %d: %v; want both tenants to run", i, r.BatchItemFailures)
		}
	}
}

// A function that declares tenants reports the first record of an
// invocation without one, and runs none.
func TestDeclaredTenantsRefuseABatchWithoutOne(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	h := tenantAdapter(t, tenanttest.Declared).Kinesis(func(context.Context, events.KinesisEventRecord) error {
		t.Error("ran without a tenant")
		return nil
	})
	resp, err := h(context.Background(), ev)
	wantReported(t, resp, err, []string{ev.Records[0].Kinesis.SequenceNumber})
}

// The log names a record's record key, the tenant's: the key the
// idempotency record is stored under, which an operator looks up
// (SplitRecordKey reads the tenant back). Mutant TENANT_KEY_STREAM: the
// adapter derived its keys without the tenant and logged a key no record
// has.
func TestTheLogNamesTheTenantsRecord(t *testing.T) {
	var logs bytes.Buffer
	store := memstore.New()
	_, a := guarded(t, store, func(*lambdaidem.Options) {}, func(o *streambatch.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ev := loadKinesis(t, "kinesis.json")
	resp, err := a.Kinesis(newLedger().kinesis)(tenanttest.Context("blue"), ev)
	wantReported(t, resp, err, []string{})
	logged := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct{ Msg, Key string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Msg != "streambatch: record processed" {
			continue
		}
		logged++
		rec, err := store.Get(context.Background(), l.Key, time.Now())
		if _, tenant, _, ok := lambdaidem.SplitRecordKey(l.Key); err != nil || rec.Status != lambdaidem.StatusCompleted || !ok || tenant != "blue" {
			t.Errorf("logged key %q: record %s, %v, tenant %q; want tenant blue's completed record", l.Key, rec.Status, err, tenant)
		}
	}
	if logged == 0 {
		t.Fatalf("no record logged as processed:\n%s", logs.String())
	}
}
