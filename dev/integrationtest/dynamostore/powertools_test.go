package dynamostore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// pythonCutover is the Powertools Python function the tests move from:
// orders, @idempotent on app.handler, event_key_jmespath "order_id",
// payload_validation_jmespath "amount".
var pythonCutover = powertools.Config{Language: powertools.Python, FunctionName: "orders", Handler: "app.handler"}

// windowOpts opens a Powertools window until until.
func windowOpts(until time.Time) func(*dynamostore.Options) {
	return func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{Config: pythonCutover, Until: until, Validation: true}
	}
}

// ptItem is the item Powertools Python keeps for order id.
func ptItem(t *testing.T, id string, amount int, status string, expiration time.Time, inProgressUntil time.Time, response string) map[string]types.AttributeValue {
	t.Helper()
	key, err := pythonCutover.Key(id)
	if err != nil {
		t.Fatal(err)
	}
	validation, err := pythonCutover.ValidationHash(amount)
	if err != nil {
		t.Fatal(err)
	}
	item := map[string]types.AttributeValue{
		"id":         &types.AttributeValueMemberS{Value: key},
		"status":     &types.AttributeValueMemberS{Value: status},
		"expiration": &types.AttributeValueMemberN{Value: fmt.Sprint(expiration.Unix())},
		"validation": &types.AttributeValueMemberS{Value: validation},
	}
	if !inProgressUntil.IsZero() {
		item["in_progress_expiration"] = &types.AttributeValueMemberN{Value: fmt.Sprint(inProgressUntil.UnixMilli())}
	}
	if response != "" {
		data, err := pythonCutover.EncodeData(json.RawMessage(response))
		if err != nil {
			t.Fatal(err)
		}
		var av struct{ S string }
		if err := json.Unmarshal(data, &av); err != nil {
			t.Fatal(err)
		}
		item["data"] = &types.AttributeValueMemberS{Value: av.S}
	}
	return item
}

// ptKey is the Powertools key's item key for order id.
func ptKey(t testing.TB, id string) map[string]types.AttributeValue {
	key, err := pythonCutover.Key(id)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key}}
}

// powertoolsClaim is Powertools Python's own claim of order id's key at
// now (its PutItem and condition, as an old instance sends it).
func (e *env) powertoolsClaim(t *testing.T, id string, now time.Time) error {
	t.Helper()
	_, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(e.table),
		Item:      ptItem(t, id, 10, "INPROGRESS", now.Add(time.Hour), now.Add(time.Minute), ""),
		ConditionExpression: aws.String("attribute_not_exists(#id) OR #expiry < :now OR " +
			"(#status = :inprogress AND attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_in_millis)"),
		ExpressionAttributeNames: map[string]string{"#id": "id", "#expiry": "expiration", "#status": "status", "#in_progress_expiry": "in_progress_expiration"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())}, ":now_in_millis": &types.AttributeValueMemberN{Value: fmt.Sprint(now.UnixMilli())},
			":inprogress": &types.AttributeValueMemberS{Value: "INPROGRESS"},
		},
	})
	return err
}

// cutoverCtx is the context PowertoolsHandler gives the lambdaidem handler
// for order id of amount.
func cutoverCtx(t testing.TB, s *dynamostore.Store, id string, amount int) context.Context {
	t.Helper()
	ctx, err := s.WithPowertools(context.Background(), id, amount)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Inside the window a live Powertools record is the same operation:
// COMPLETED replays its response (no run, no business write), another
// amount is refused (422), INPROGRESS is in progress, a lapsed one is
// absent; with the window closed the same requests run again: the
// duplicates the window prevents.
func TestPowertoolsRecordsHonoured(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
			g := e.guard(t, clk, func(o *lambdaidem.Options) { o.Mode = mode })
			ran := map[string]int{}
			handler := func(id string) func(context.Context) (string, error) {
				return func(ctx context.Context) (string, error) {
					ran[id]++
					if err := lambdaidem.Stage(ctx, e.order(id)); err != nil {
						return "", err
					}
					return "new-" + id, nil
				}
			}
			now := clk.Now()
			e.putItem(t, ptItem(t, "done", 10, "COMPLETED", now.Add(time.Hour), time.Time{}, `"old-done"`))
			e.putItem(t, ptItem(t, "busy", 10, "INPROGRESS", now.Add(time.Hour), now.Add(time.Minute), ""))
			e.putItem(t, ptItem(t, "lapsed", 10, "INPROGRESS", now.Add(time.Hour), now.Add(-time.Minute), ""))
			e.putItem(t, ptItem(t, "expired", 10, "COMPLETED", now.Add(-time.Minute), time.Time{}, `"old-expired"`))

			// Claim-first never runs the handler; optimistic runs its body
			// (DESIGN §3) but commits none of its writes.
			runs := func(id string) int {
				if mode == lambdaidem.Optimistic {
					ran[id] = 0
				}
				return ran[id]
			}
			got, err := lambdaidem.Do(cutoverCtx(t, e.store, "done", 10), g, call("done"), handler("done"))
			if err != nil || got != "old-done" || runs("done") != 0 || e.written(t, "done") {
				t.Errorf("COMPLETED Powertools record: %q, %v, ran %d; want its response replayed, no run", got, err, ran["done"])
			}
			if _, err := lambdaidem.Do(cutoverCtx(t, e.store, "done", 11), g, call("done"), handler("done")); !errors.Is(err, lambdaidem.ErrKeyReused) || runs("done") != 0 || e.written(t, "done") {
				t.Errorf("another amount: %v, ran %d; want ErrKeyReused", err, ran["done"])
			}
			if _, err := lambdaidem.Do(cutoverCtx(t, e.store, "busy", 10), g, call("busy"), handler("busy")); !errors.Is(err, lambdaidem.ErrInProgress) || runs("busy") != 0 || e.written(t, "busy") {
				t.Errorf("INPROGRESS Powertools record: %v, ran %d; want ErrInProgress", err, ran["busy"])
			}
			for _, id := range []string{"lapsed", "expired"} {
				if got, err := lambdaidem.Do(cutoverCtx(t, e.store, id, 10), g, call(id), handler(id)); err != nil || got != "new-"+id || ran[id] != 1 {
					t.Errorf("%s Powertools record: %q, %v, ran %d; want a run", id, got, err, ran[id])
				}
			}
			// Nothing of lambdaidem's is left by the refused claims.
			for _, id := range []string{"done", "busy"} {
				if it := e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey(id)}}); it != nil {
					t.Errorf("%s: lambdaidem record left: %v", id, it)
				}
			}

			// The window closed: the Powertools records are not read, and
			// the same requests run again.
			clk.Advance(25 * time.Hour)
			e.putItem(t, ptItem(t, "done", 10, "COMPLETED", clk.Now().Add(time.Hour), time.Time{}, `"old-done"`))
			if got, err := lambdaidem.Do(cutoverCtx(t, e.store, "done", 10), g, call("done"), handler("done")); err != nil || got != "new-done" || ran["done"] != 1 || !e.written(t, "done") {
				t.Errorf("window closed: %q, %v, ran %d; want the duplicate run", got, err, ran["done"])
			}
		})
	}
}

// Inside the window lambdaidem keeps the Powertools key: INPROGRESS until
// its hold while the handler runs (a Powertools claim is refused), and the
// COMPLETED record Powertools Python would store after the commit, in the
// same transaction as the business write; a handler error removes it; a
// request outside the window costs what it costs without one.
func TestPowertoolsShadow(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	ctx := cutoverCtx(t, e.store, "o-1", 10)
	var during map[string]types.AttributeValue
	got, err := lambdaidem.Do(ctx, g, call("o-1"), func(ctx context.Context) (string, error) {
		during = e.item(t, e.table, ptKey(t, "o-1"))
		return "new-o-1", lambdaidem.Stage(ctx, e.order("o-1"))
	})
	if err != nil || got != "new-o-1" {
		t.Fatalf("Do = %q, %v", got, err)
	}
	rec, err := e.store.Get(context.Background(), recordKey("o-1"), clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if s := sattr(during, "status"); s != "INPROGRESS" || num(during, "in_progress_expiration") == "" {
		t.Errorf("shadow while running: %v; want INPROGRESS with a lease", during)
	}
	after := e.item(t, e.table, ptKey(t, "o-1"))
	validation, _ := pythonCutover.ValidationHash(10)
	if sattr(after, "status") != "COMPLETED" || sattr(after, "data") != `"new-o-1"` || sattr(after, "validation") != validation ||
		num(after, "expiration") != fmt.Sprint(rec.ExpiresAt.Unix()) {
		t.Errorf("shadow after the commit: %v; want COMPLETED, data \"new-o-1\" as json.dumps writes it, validation, the record's expiration", after)
	}
	// Powertools' own claim of the key (its condition, now) is refused.
	key, _ := pythonCutover.Key("o-1")
	err = e.powertoolsClaim(t, "o-1", clk.Now())
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Errorf("Powertools claim of %s after lambdaidem's commit: %v; want refused", key, err)
	}

	// A handler error gives the claim back, and the shadow goes with it.
	boom := errors.New("boom")
	if _, err := lambdaidem.Do(cutoverCtx(t, e.store, "o-2", 10), g, call("o-2"), func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("Do = %v", err)
	}
	if it := e.item(t, e.table, ptKey(t, "o-2")); it != nil {
		t.Errorf("shadow after a released claim: %v; want none", it)
	}
}

// TestPowertoolsWindowCalls counts DynamoDB calls: inside the window a
// first request claims with one more PutItem (the shadow) and commits with
// the shadow in its transaction; outside it, not one call more.
func TestPowertoolsWindowCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		until time.Time
		want  map[string]int
	}{
		{"inside", t0.Add(time.Hour), map[string]int{"UpdateItem": 1, "PutItem": 1, "TransactWriteItems": 1}},
		{"outside", t0.Add(-time.Hour), map[string]int{"UpdateItem": 1, "TransactWriteItems": 1}},
		{"no window", time.Time{}, map[string]int{"UpdateItem": 1, "TransactWriteItems": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, windowOpts(c.until))
			p := e.proxy(t)
			g := e.guard(t, testclock.New(t0))
			ctx := cutoverCtx(t, e.store, "c-1", 10)
			p.ResetCalls()
			if _, err := lambdaidem.Do(ctx, g, call("c-1"), func(ctx context.Context) (string, error) {
				return "ok", lambdaidem.Stage(ctx, e.order("c-1"))
			}); err != nil {
				t.Fatal(err)
			}
			got := p.Calls()
			for op, n := range c.want {
				if got[op] != n {
					t.Errorf("%s: %d; want %d (all: %v)", op, got[op], n, got)
				}
			}
			total := 0
			for _, n := range got {
				total += n
			}
			want := 0
			for _, n := range c.want {
				want += n
			}
			if total != want {
				t.Errorf("calls %v; want %v", got, c.want)
			}
		})
	}
}

// sattr is an S attribute of it, "" when absent.
func sattr(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// The shadow follows the owner: a renewal moves its in_progress_expiration
// with the hold; BeginExternal and an UNKNOWN outcome hold it in progress
// without a lease (Powertools answers "in progress" until lambdaidem
// resolves the record).
func TestPowertoolsShadowFollowsTheOwner(t *testing.T) {
	e := newEnv(t, windowOpts(time.Now().Add(time.Hour)))
	g := e.guard(t, nil, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.LeaseMargin = 100 * time.Millisecond
	})
	ipe := func(id string) int64 {
		n, _ := strconv.ParseInt(num(e.item(t, e.table, ptKey(t, id)), "in_progress_expiration"), 10, 64)
		return n
	}
	ctx, cancel := context.WithTimeout(cutoverCtx(t, e.store, "r-1", 10), 1500*time.Millisecond)
	defer cancel()
	var first, later, hold int64
	if _, err := lambdaidem.Do(ctx, g, call("r-1"), func(ctx context.Context) (string, error) {
		first = ipe("r-1")
		time.Sleep(1300 * time.Millisecond) // past 2/3 of the lease: renewed
		later = ipe("r-1")
		rec, err := e.store.Get(ctx, recordKey("r-1"), time.Now())
		hold = rec.HoldUntil.UnixMilli()
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	// The hold a renewal writes counts from the renewal (MaxRunTime after
	// it), the claim's from the lease's end: it may move either way.
	if first == 0 || later == first || later != hold {
		t.Errorf("shadow lease %d at claim, %d after a renewal, record's hold %d; want the renewed hold", first, later, hold)
	}

	boom := errors.New("card declined, maybe")
	_, err := lambdaidem.Do(cutoverCtx(t, e.store, "x-1", 10), g, call("x-1"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		held := e.item(t, e.table, ptKey(t, "x-1"))
		if sattr(held, "status") != "INPROGRESS" || num(held, "in_progress_expiration") != "" || num(held, "expiration") != "4102444800" {
			t.Errorf("shadow after BeginExternal: %v; want INPROGRESS, no lease, expiration 2100-01-01", held)
		}
		return "", boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Do = %v", err)
	}
	rec, err := e.store.Get(context.Background(), recordKey("x-1"), time.Now())
	if err != nil || rec.Status != lambdaidem.StatusUnknown {
		t.Fatalf("record = %+v, %v; want UNKNOWN", rec, err)
	}
	if held := e.item(t, e.table, ptKey(t, "x-1")); sattr(held, "status") != "INPROGRESS" || num(held, "in_progress_expiration") != "" {
		t.Errorf("shadow of an UNKNOWN record: %v; want held in progress without a lease", held)
	}
}

// An HTTP API behind apigw moving from a Powertools Python handler that
// returned API Gateway proxy responses (event_key_jmespath
// 'headers."idempotency-key"'): the old record's response is replayed as
// the adapter would have stored it (status, body, Content-Type; never its
// cookie), and the shadow holds the new answer as the proxy response the
// old handler returns.
func TestPowertoolsWindowBehindAPIGateway(t *testing.T) {
	api := powertools.Config{Language: powertools.Python, FunctionName: "api", Handler: "app.handler"}
	e := newEnv(t, func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{Config: api, Until: time.Now().Add(time.Hour), Response: apigw.PowertoolsProxy{}}
	})
	g := e.guard(t, nil)
	idem, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	handler := dynamostore.PowertoolsHandler(e.store, idem.WrapV2(func(ctx context.Context, r events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs++
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json", "Set-Cookie": "s=2"}, Body: `{"id":"new"}`}, nil
	}), func(r events.APIGatewayV2HTTPRequest) (any, error) { return r.Headers["idempotency-key"], nil }, nil)
	req := func(key string) events.APIGatewayV2HTTPRequest {
		return events.APIGatewayV2HTTPRequest{
			RouteKey: "POST /payments", RawPath: "/payments",
			Headers: map[string]string{"idempotency-key": key, "content-type": "application/json"},
			Body:    `{"amount":1250}`,
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
			},
		}
	}
	// The old version answered k-old: its record, as Powertools Python
	// stores a proxy response.
	oldKey, _ := api.Key("k-old")
	data, _ := api.EncodeData(json.RawMessage(`{"statusCode": 200, "headers": {"Content-Type": "application/json", "Set-Cookie": "s=1"}, "body": "{\"id\":\"old\"}"}`))
	var s struct{ S string }
	_ = json.Unmarshal(data, &s)
	e.putItem(t, item{
		"id": &types.AttributeValueMemberS{Value: oldKey}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
		"expiration": &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Add(time.Hour).Unix())},
		"data":       &types.AttributeValueMemberS{Value: s.S},
	})
	resp, err := handler(context.Background(), req("k-old"))
	if err != nil || resp.StatusCode != 200 || resp.Body != `{"id":"old"}` || resp.Headers["Content-Type"] != "application/json" || resp.Headers["Set-Cookie"] != "" || runs != 0 {
		t.Errorf("old record through apigw: %+v, %v, runs %d; want 200, the old body and Content-Type, no cookie, no run", resp, err, runs)
	}
	// The new version answers k-new: the shadow is the proxy response.
	if resp, err := handler(context.Background(), req("k-new")); err != nil || resp.StatusCode != 201 || runs != 1 {
		t.Fatalf("new request: %+v, %v", resp, err)
	}
	newKey, _ := api.Key("k-new")
	shadow := e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: newKey}})
	var proxy events.APIGatewayProxyResponse
	if err := json.Unmarshal([]byte(sattr(shadow, "data")), &proxy); err != nil || proxy.StatusCode != 201 || proxy.Body != `{"id":"new"}` || proxy.Headers["Content-Type"] != "application/json" || proxy.Headers["Set-Cookie"] != "" {
		t.Errorf("shadow data %q: %+v, %v; want the proxy response without the cookie", sattr(shadow, "data"), proxy, err)
	}
}

// Faults at every step of a request inside the window: a lost answer, a
// dropped connection, a 5xx or a throttle on the shadow's PutItem, and a
// lost answer, a conflict or a throttle on the commit's transaction, are
// retried to one run, one business write, and the shadow completed; a
// shadow write that keeps failing fails the request with nothing left
// behind (the claim given back, the shadow gone or never written).
func TestPowertoolsWindowFaults(t *testing.T) {
	cases := []ddbtest.Rule{
		{Op: "PutItem", Fault: ddbtest.LostResponse, Times: 1},
		{Op: "PutItem", Fault: ddbtest.LostConnection, Times: 1},
		{Op: "PutItem", Fault: ddbtest.InternalServerError, Times: 1},
		{Op: "PutItem", Fault: ddbtest.Throttling, Times: 1},
		{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1},
		{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict, Times: 1},
		{Op: "TransactWriteItems", Fault: ddbtest.TransactionThrottled, Times: 1},
	}
	for i, rule := range cases {
		t.Run(fmt.Sprintf("%s %s", rule.Op, rule.Fault), func(t *testing.T) {
			e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
			p := e.proxy(t)
			g := e.guard(t, newClock())
			id := fmt.Sprintf("f-%d", i)
			runs := 0
			remove := p.Inject(rule)
			defer remove()
			got, err := lambdaidem.Do(cutoverCtx(t, e.store, id, 10), g, call(id), func(ctx context.Context) (string, error) {
				runs++
				return "new-" + id, lambdaidem.Stage(ctx, e.order(id))
			})
			if err != nil || got != "new-"+id || runs != 1 || !e.written(t, id) {
				t.Fatalf("Do = %q, %v, runs %d; want one run and its write", got, err, runs)
			}
			if sh := e.item(t, e.table, ptKey(t, id)); sattr(sh, "status") != "COMPLETED" || sattr(sh, "data") != `"new-`+id+`"` {
				t.Errorf("shadow %v; want COMPLETED with the answer", sh)
			}
		})
	}
	t.Run("shadow write keeps failing", func(t *testing.T) {
		e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
		p := e.proxy(t)
		g := e.guard(t, newClock())
		remove := p.Inject(ddbtest.Rule{Op: "PutItem", Fault: ddbtest.ServiceUnavailable})
		_, err := lambdaidem.Do(cutoverCtx(t, e.store, "f-x", 10), g, call("f-x"), func(ctx context.Context) (string, error) {
			t.Error("the handler ran without the shadow")
			return "", nil
		})
		remove()
		if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
			t.Errorf("Do = %v; want ErrStoreUnavailable", err)
		}
		if it := e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey("f-x")}}); it != nil {
			t.Errorf("lambdaidem record left: %v", it)
		}
		if sh := e.item(t, e.table, ptKey(t, "f-x")); sh != nil {
			t.Errorf("shadow left: %v", sh)
		}
	})
}

// An owner that outlives its hold: a Powertools instance takes the key once
// the shadow lapsed and completes; the owner's commit, fenced on its
// shadow, then fails with none of its writes, its claim is given back, and
// the Powertools answer is the one returned.
func TestPowertoolsTookTheKeyBeforeTheCommit(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	got, err := lambdaidem.Do(cutoverCtx(t, e.store, "late", 10), g, call("late"), func(ctx context.Context) (string, error) {
		clk.Advance(2 * time.Hour) // past the lease (Options.Lease: a minute) and the hold
		now := clk.Now()
		// Powertools' claim, with its condition at now, then its completion.
		key, _ := pythonCutover.Key("late")
		err := e.powertoolsClaim(t, "late", now)
		if err != nil {
			t.Fatalf("Powertools could not claim %s after the shadow lapsed: %v", key, err)
		}
		e.putItem(t, ptItem(t, "late", 10, "COMPLETED", now.Add(time.Hour), time.Time{}, `"old-late"`))
		return "new-late", lambdaidem.Stage(ctx, e.order("late"))
	})
	if err != nil || got != "old-late" || e.written(t, "late") {
		t.Errorf("Do = %q, %v, written %v; want Powertools' answer and none of the late owner's writes", got, err, e.written(t, "late"))
	}
	if it := e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey("late")}}); it != nil {
		t.Errorf("lambdaidem record left: %v", it)
	}
}

// Two lambdaidem operations whose events the old function keyed alike
// (another caller's scope, another Namespace or key function) are one
// Powertools operation: the second does not take the first's live shadow
// (it is in progress while the shadow is, then refused as a reused key,
// never given the other scope's answer), so the first's commit keeps its
// shadow and neither runs twice. Before the shadow claim
// compared the shadow's record key, the second overwrote the first's
// shadow: the first's commit failed after its effect, its retry ran it
// again, and both business writes landed.
func TestPowertoolsShadowOfAnotherRecord(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
			g := e.guard(t, clk, func(o *lambdaidem.Options) { o.Mode = mode })
			runs := map[string]int{}
			handler := func(id string, inside func()) func(context.Context) (string, error) {
				return func(ctx context.Context) (string, error) {
					runs[id]++
					if inside != nil {
						inside()
					}
					return "new-" + id, lambdaidem.Stage(ctx, e.order(id))
				}
			}
			type answer struct {
				id, got string
				err     error
			}
			var answers []answer
			gotB, errB := "", error(nil)
			gotA, errA := lambdaidem.Do(cutoverCtx(t, e.store, "o-x", 10), g, call("a"), handler("a", func() {
				gotB, errB = lambdaidem.Do(cutoverCtx(t, e.store, "o-x", 10), g, call("b"), handler("b", nil))
			}))
			answers = append(answers, answer{"a", gotA, errA}, answer{"b", gotB, errB})
			for _, id := range []string{"a", "b"} { // the clients retry
				got, err := lambdaidem.Do(cutoverCtx(t, e.store, "o-x", 10), g, call(id), handler(id, nil))
				answers = append(answers, answer{id, got, err})
			}
			if n := e.orderCount(t); n != 1 {
				t.Fatalf("%d business writes (a %v, b %v), handler runs %v; want 1", n, e.written(t, "a"), e.written(t, "b"), runs)
			}
			winner := "a"
			if e.written(t, "b") {
				winner = "b"
			}
			// The winner answers its own run; the other operation (another
			// lambdaidem scope) never gets the winner's answer: it is in
			// progress, then refused as a reused key.
			for i, a := range answers {
				switch {
				case a.id == winner && (a.err != nil && !errors.Is(a.err, lambdaidem.ErrInProgress) || a.err == nil && a.got != "new-"+winner):
					t.Errorf("answer %d (%s, the run that landed): %q, %v; want %q (or in progress)", i, a.id, a.got, a.err, "new-"+winner)
				case a.id != winner && !errors.Is(a.err, lambdaidem.ErrInProgress) && !errors.Is(a.err, lambdaidem.ErrKeyReused):
					t.Errorf("answer %d (%s, another operation): %q, %v; want in progress or ErrKeyReused, never another scope's answer", i, a.id, a.got, a.err)
				}
			}
			if mode == lambdaidem.ClaimFirst && runs["a"]+runs["b"] != 1 {
				t.Errorf("handler runs %v; want one in all", runs)
			}
		})
	}
}

// isShadowWrite matches a request on the shadow after the claim (it names
// the shadow's mark attribute in its conditions).
func isShadowWrite(body []byte) bool {
	return strings.Contains(string(body), "lambdaidem_shadow_of") && !strings.Contains(string(body), "TransactItems")
}

// BeginExternal is refused while the shadow cannot be held: the external
// call would otherwise start with the shadow still leased, and an old
// version could take the key at that lease and run the operation again
// while the call is in flight (lambdaidem's record, external, is never run
// again). Before followShadow's failures were returned, BeginExternal
// succeeded and the Powertools claim after the lease went through.
func TestPowertoolsShadowHoldFails(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	p := e.proxy(t)
	g := e.guard(t, clk)
	_, err := lambdaidem.Do(cutoverCtx(t, e.store, "h-1", 10), g, call("h-1"), func(ctx context.Context) (string, error) {
		remove := p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.ServiceUnavailable, Match: isShadowWrite})
		defer remove()
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		// The external call is dispatched here. What an old version finds
		// once the shadow's lease lapsed, with the call in flight:
		sh := e.item(t, e.table, ptKey(t, "h-1"))
		if ipe := num(sh, "in_progress_expiration"); sattr(sh, "status") == "INPROGRESS" && ipe != "" {
			t.Errorf("BeginExternal succeeded with the shadow still leased (in_progress_expiration %s ms): an old version can run the operation again at that lease", ipe)
		}
		return "", errors.New("answer lost")
	})
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
		t.Errorf("Do = %v; want ErrStoreUnavailable", err)
	}
	if it := e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey("h-1")}}); it != nil {
		t.Errorf("lambdaidem record left: %v", it)
	}
}

// A renewal whose shadow could not follow is not done: the store reports
// the failure (the core retries it while the lease lasts, then gives the
// lease up) instead of a renewed lease that Powertools does not see (it
// may claim the key at the shadow's old lease while the owner runs on).
func TestPowertoolsRenewalWithoutTheShadow(t *testing.T) {
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	p := e.proxy(t)
	ctx := cutoverCtx(t, e.store, "n-1", 10)
	c := claimOf(recordKey("n-1"), "tok-n-1")
	if _, ok, err := e.store.Claim(ctx, c); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	remove := p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.ServiceUnavailable, Match: isShadowWrite})
	defer remove()
	later := t0.Add(40 * time.Second)
	ok, err := e.store.Renew(ctx, lambdaidem.Renewal{Key: c.Key, Token: c.Token, Now: later,
		LeaseUntil: later.Add(time.Minute), HoldUntil: later.Add(time.Minute), ExpiresAt: later.Add(horizon)})
	if err == nil {
		ipe := num(e.item(t, e.table, ptKey(t, "n-1")), "in_progress_expiration")
		t.Errorf("Renew = %v, nil with the shadow's lease left at %s ms (the record's now %d); want an error", ok, ipe, later.Add(time.Minute).UnixMilli())
	}
}

// A Powertools lease is judged with the window's ClockSkew, as lambdaidem
// judges its own holds with LeaseMargin: an INPROGRESS record whose
// in_progress_expiration passed a second ago by this clock may belong to
// an old instance still running by its own (its Lambda deadline is that
// instant on its host's clock), so the request is in progress, not run;
// past the skew it runs. Before the window had ClockSkew, the first
// request ran beside the old instance.
func TestPowertoolsLeaseJudgedWithSkew(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	now := clk.Now()
	e.putItem(t, ptItem(t, "skew", 10, "INPROGRESS", now.Add(time.Hour), now.Add(-time.Second), ""))
	runs := 0
	handler := func(ctx context.Context) (string, error) {
		runs++
		return "new-skew", lambdaidem.Stage(ctx, e.order("skew"))
	}
	if _, err := lambdaidem.Do(cutoverCtx(t, e.store, "skew", 10), g, call("skew"), handler); !errors.Is(err, lambdaidem.ErrInProgress) || runs != 0 {
		t.Errorf("Powertools lease ended 1 s ago: %v, runs %d; want ErrInProgress, no run (the old instance's clock may be behind)", err, runs)
	}
	clk.Advance(10 * time.Second)
	if got, err := lambdaidem.Do(cutoverCtx(t, e.store, "skew", 10), g, call("skew"), handler); err != nil || got != "new-skew" || runs != 1 {
		t.Errorf("Powertools lease ended 11 s ago: %q, %v, runs %d; want a run", got, err, runs)
	}
}

// After the window closed a request through PowertoolsHandler still carries
// its Powertools key, but no shadow was written for it: a handler error
// releases the claim with one DeleteItem, not a second one on the
// Powertools key (inside the window: both). Before followShadow asked
// whether this invocation wrote a shadow, the release outside the window
// cost a DeleteItem more.
func TestPowertoolsWindowClosedReleaseCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		until time.Time
		want  map[string]int
	}{
		{"inside", t0.Add(time.Hour), map[string]int{"UpdateItem": 1, "PutItem": 1, "DeleteItem": 2}},
		{"outside", t0.Add(-time.Hour), map[string]int{"UpdateItem": 1, "DeleteItem": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, windowOpts(c.until))
			p := e.proxy(t)
			g := e.guard(t, testclock.New(t0))
			ctx := cutoverCtx(t, e.store, "c-2", 10)
			p.ResetCalls()
			boom := errors.New("boom")
			if _, err := lambdaidem.Do(ctx, g, call("c-2"), func(ctx context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
				t.Fatal(err)
			}
			if got := p.Calls(); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("calls %v; want %v", got, c.want)
			}
		})
	}
}
