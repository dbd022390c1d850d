package dynamostore_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/storetest"
)

// The SDK client is a Client and a TableAPI.
var (
	_ dynamostore.Client = (*dynamodb.Client)(nil)
	_ ddbtest.TableAPI   = (*dynamodb.Client)(nil)
)

// TestConformance runs the core's store contract against the DynamoDB
// store, with the proxy behaving like DynamoDB, with the emulator's own
// behaviour, and with no old items at all (every refusal then reads the
// record with GetItem), and on a table with a sort key. The emulator's
// behaviour is taken with REMOVE applied: the store relies on it as
// DynamoDB documents it (a takeover removes the former owner's renewal
// time, which would otherwise hold the new owner's UNKNOWN record), and a
// store whose REMOVE does nothing cannot keep that contract.
func TestConformance(t *testing.T) {
	emulator := ddbtest.Emulator()
	emulator.RemoveIgnored = false
	for _, c := range []struct {
		name string
		dep  ddbtest.Departures
		opts func(*dynamostore.Options)
	}{
		{"DynamoDB", ddbtest.Departures{}, nil},
		{"Emulator", emulator, nil},
		{"NoOldItems", ddbtest.Departures{OldItems: ddbtest.OldItemsNever}, nil},
		{"SortKey", ddbtest.Departures{}, func(o *dynamostore.Options) { o.SortKeyAttr = "sk"; o.SortKeyValue = "IDEMPOTENCY" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				var opts []func(*dynamostore.Options)
				if c.opts != nil {
					opts = append(opts, c.opts)
				}
				e := newEnv(t, opts...)
				if p := e.ep.Proxy; p != nil {
					p.SetDepartures(c.dep)
				}
				return storetest.Harness{
					Store:         e.store,
					Effect:        func(id string) any { return e.order(id) },
					FailingEffect: func(id string) any { return e.missingOrder(id) },
					Written:       e.written,
				}
			})
		})
	}
}
