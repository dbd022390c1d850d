package ddbtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// backends are the backends the proxy fronts, each with a way to start a
// fresh one, behind a proxy, for a test.
func backends() []struct {
	backend ddbtest.Backend
	start   func(t *testing.T) *ddbtest.Proxy
} {
	return []struct {
		backend ddbtest.Backend
		start   func(t *testing.T) *ddbtest.Proxy
	}{
		{ddbtest.Minidyn(), func(t *testing.T) *ddbtest.Proxy { return ddbtest.NewProxy(ddbtest.NewEmulator()) }},
		{ddbtest.Dynoxide(), func(t *testing.T) *ddbtest.Proxy {
			if _, err := ddbtest.DynoxideBinary(); err != nil {
				t.Skipf("the second world is skipped: %v", err)
			}
			dx := ddbtest.StartDynoxide(t)
			return ddbtest.NewProxy(ddbtest.Forward(dx.URL), func(o *ddbtest.ProxyOptions) { o.Backend = ddbtest.Dynoxide() })
		}},
	}
}

// probe answers, for one departure, whether the backend behind c (the
// proxy letting everything through) has it.
type probe func(t *testing.T, c *dynamodb.Client, table string) bool

// probes has one probe per field of ddbtest.Departures: each sends what the
// correction is about and reports whether the answer departs from
// DynamoDB's (API Reference and Developer Guide, as cited per correction in
// fidelity.go and the files beside it).
var probes = map[string]probe{
	"OldItems": func(t *testing.T, c *dynamodb.Client, table string) bool {
		put(t, c, table, item("x", "old"))
		old, err := failingWrites["PutItem"](c, table)
		if err != nil {
			t.Fatal(err)
		}
		return value(old, "v") != "old"
	},
	"TokenReplayCancelled": func(t *testing.T, c *dynamodb.Client, table string) bool {
		tx := counterTx(table, "probe-token")
		if _, err := c.TransactWriteItems(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		_, err := c.TransactWriteItems(context.Background(), tx)
		return err != nil
	},
	"PutItemAttributes": func(t *testing.T, c *dynamodb.Client, table string) bool {
		out, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("a", "1")})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes != nil
	},
	"NoTimeToLive": func(t *testing.T, c *dynamodb.Client, table string) bool {
		_, err := c.DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		return err != nil
	},
	"ScanSegmentsIgnored": func(t *testing.T, c *dynamodb.Client, table string) bool {
		for i := range 8 {
			put(t, c, table, item(fmt.Sprintf("k%d", i), "v"))
		}
		keys, err := scanAll(t, c, table, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		return len(keys) == 8
	},
	"NoTransactionConflicts": func(t *testing.T, c *dynamodb.Client, table string) bool {
		// Concurrent transactions on one item: DynamoDB cancels some with
		// TransactionConflict; a backend that runs one request at a time never.
		var wg sync.WaitGroup
		var mu sync.Mutex
		conflicts := 0
		for i := range 16 {
			wg.Go(func() {
				_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: aws.String(table), Item: item("hot", fmt.Sprint(i))}},
					{Put: &types.Put{TableName: aws.String(table), Item: item(fmt.Sprintf("cold%d", i), "v")}},
				}})
				var tce *types.TransactionCanceledException
				if errors.As(err, &tce) {
					for _, r := range tce.CancellationReasons {
						if aws.ToString(r.Code) == "TransactionConflict" {
							mu.Lock()
							conflicts++
							mu.Unlock()
						}
					}
				}
			})
		}
		wg.Wait()
		return conflicts == 0
	},
	"RemoveIgnored": func(t *testing.T, c *dynamodb.Client, table string) bool {
		put(t, c, table, map[string]types.AttributeValue{"pk": s("r"), "gone": s("x")})
		if _, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("r"),
			UpdateExpression: aws.String("REMOVE gone")}); err != nil {
			t.Fatal(err)
		}
		return get(t, c, table, "r")["gone"] != nil
	},
	"NoConsumedCapacity": func(t *testing.T, c *dynamodb.Client, table string) bool {
		// DynamoDB charges a GetItem for the whole item, whatever its
		// projection ("Read consumption for GetItem": "based on item size,
		// not on the amount of data that is returned"): a 6 KB item read
		// consistently is 2 units.
		put(t, c, table, sized("big", 6*kb))
		out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("big"),
			ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		return out.ConsumedCapacity == nil || aws.ToFloat64(out.ConsumedCapacity.CapacityUnits) != 2
	},
}

// TestBackendDepartures shows which backend needs which correction: for
// every backend and every field of Departures, a probe against the backend
// with the proxy letting everything through finds the departure exactly
// where the backend's Departs says it is. A correction added to Departures
// without a probe fails here.
func TestBackendDepartures(t *testing.T) {
	fields := reflect.TypeFor[ddbtest.Departures]()
	for i := range fields.NumField() {
		if _, ok := probeOf(fields.Field(i).Name); !ok {
			t.Errorf("Departures.%s has no probe in TestBackendDepartures", fields.Field(i).Name)
		}
	}
	var mu sync.Mutex
	var rows []string
	for _, b := range backends() {
		t.Run(b.backend.Name, func(t *testing.T) {
			declared := reflect.ValueOf(b.backend.Departs)
			var has []string
			for i := range fields.NumField() {
				name := fields.Field(i).Name
				pr, ok := probeOf(name)
				if !ok {
					continue
				}
				p := b.start(t)
				p.SetDepartures(ddbtest.Emulator())
				srv := httptest.NewServer(p)
				t.Cleanup(srv.Close)
				c := ddbtest.NewClient(srv.URL)
				departs := pr(t, c, newTable(t, c))
				want := declared.Field(i).Interface() != reflect.Zero(fields.Field(i).Type).Interface()
				if departs != want {
					t.Errorf("%s: probe finds the departure %v, Backend.Departs says %v", name, departs, want)
				}
				if departs {
					has = append(has, name)
				}
			}
			mu.Lock()
			rows = append(rows, fmt.Sprintf("%s: %s", b.backend.Name, strings.Join(has, ", ")))
			mu.Unlock()
		})
	}
	sort.Strings(rows)
	t.Logf("departures the proxy corrects, by backend:\n%s", strings.Join(rows, "\n"))
}
