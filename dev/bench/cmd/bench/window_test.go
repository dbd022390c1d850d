package main

import (
	"context"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The window's row costs, per first request and per duplicate, what the
// store's design says: one PutItem more on the claim and the shadow's Put in
// the commit's transaction; a duplicate of a completed key the same as
// claim-first (its claim is refused by lambdaidem's record).
func TestWindowScenarioCost(t *testing.T) {
	ep, err := startEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer ep.close()
	ctx := context.Background()
	client := ep.client()
	if err := ep.createShard(ctx, client, 0); err != nil {
		t.Fatal(err)
	}
	type cost struct {
		calls map[string]int
		wcu   float64
	}
	measure := func(s scenario, id string) cost {
		ep.proxy.ResetCalls()
		ep.proxy.ResetConsumed()
		if _, err := s.invoke(ctx, payment{ID: id, Amount: 4200, Currency: "EUR"}); err != nil {
			t.Fatalf("%s: %v", s.name(), err)
		}
		return cost{calls: ep.proxy.Calls(), wcu: ep.proxy.Consumed().Total.Write}
	}
	outside := lambdaidemScenario(scClaimFirst, client, lambdaidem.ClaimFirst, 0)
	inside := windowScenario(client)
	o, i := measure(outside, "w-out"), measure(inside, "w-in")
	t.Logf("first request: outside %v %.0f WCU; inside %v %.0f WCU", o.calls, o.wcu, i.calls, i.wcu)
	if i.calls["PutItem"] != o.calls["PutItem"]+1 || i.calls["UpdateItem"] != o.calls["UpdateItem"] || i.calls["TransactWriteItems"] != o.calls["TransactWriteItems"] {
		t.Errorf("inside the window: %v; want outside's %v and one PutItem more", i.calls, o.calls)
	}
	if i.wcu <= o.wcu {
		t.Errorf("inside the window %.1f WCU, outside %.1f: the shadow costs nothing?", i.wcu, o.wcu)
	}
	od, id := measure(outside, "w-out"), measure(inside, "w-in")
	t.Logf("duplicate: outside %v %.0f WCU; inside %v %.0f WCU", od.calls, od.wcu, id.calls, id.wcu)
}
