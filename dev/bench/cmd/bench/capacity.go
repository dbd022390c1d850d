package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dev/bench/payload"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// On-demand prices, US East (N. Virginia), DynamoDB Standard table class,
// per million request units: the prices in effect since 1 November 2024,
// when AWS cut on-demand throughput prices by 50% (from $1.25 and $0.25).
// Read from the DynamoDB on-demand pricing page as quoted on 2026-12-01.
const (
	priceDate       = "2024-11-01 (in effect when read, 2026-12-01)"
	pricePerMWrites = 0.625
	pricePerMReads  = 0.125
)

// costPerMillion is the on-demand price of a million requests that each
// consume c.
func costPerMillion(c ddbtest.Capacity) float64 {
	return c.Write*pricePerMWrites + c.Read*pricePerMReads
}

// Capacity phases. A cache hit is the duplicate phase of the cached
// scenario.
const (
	capFirst      = "first request"
	capDuplicate  = "completed duplicate"
	capConcurrent = "concurrent duplicates"
)

// The outcome sizes of the capacity part, and the size of the one business
// item every first request writes.
var capSizes = []int{1 << 10, 16 << 10, 64 << 10}

const businessBytes = 1000

// scUncompressed is claim-first with NoCompression: the stored outcome as
// it was before compression, for the raw-versus-stored comparison.
const scUncompressed = "lambdaidem claim-first, uncompressed"

// capacityRow is one scenario at one outcome size.
type capacityRow struct {
	scenario string
	perReq   map[string]ddbtest.Capacity // by phase, per request
	byOp     map[string]map[string]ddbtest.Capacity
	errors   int
	// recordBytes is the size of the scenario's stored record (the
	// idempotency item) after a first request, as DynamoDB sizes it.
	recordBytes int
}

// capacityRun is every scenario at one outcome size.
type capacityRun struct {
	size          int
	outcomeBytes  int // the receipt's JSON encoding
	businessBytes int
	rows          []*capacityRow
}

// capacityResults is the capacity part.
type capacityResults struct {
	requests, contenders int
	runs                 []capacityRun
}

// capacityShard0 is the first table shard of the capacity part, clear of
// the round trips' shards.
const capacityShard0 = 900

// runCapacity measures, with the proxy's capacity ledger (ddbtest computes
// ConsumedCapacity by DynamoDB's documented rules), what each scenario
// consumes per request at each outcome size: first requests, their
// duplicates (a cache hit for the cached scenario), and concurrent
// duplicates of a new key.
func runCapacity(ctx context.Context, c config, ep *endpoint) (*capacityResults, error) {
	client := ep.client()
	peer, stop, err := startNode(ctx, c.nodeDir, ep.url)
	if err != nil {
		return nil, err
	}
	defer stop()
	scenarios := []scenario{
		bareScenario(client),
		lambdaidemScenario(scClaimFirst, client, lambdaidem.ClaimFirst, 0),
		lambdaidemScenario(scOptimistic, client, lambdaidem.Optimistic, 0),
		lambdaidemScenario(scCached, client, lambdaidem.ClaimFirst, 4096),
		lambdaidemScenario(scUncompressed, client, lambdaidem.ClaimFirst, 0, func(o *lambdaidem.Options) { o.NoCompression = true }),
		windowScenario(client),
		&nodeScenario{peer: peer},
	}
	res := &capacityResults{requests: c.capRequests, contenders: c.contenders}
	perSize := (c.capRequests+shardSize-1)/shardSize + 1
	for zi, size := range capSizes {
		log.Printf("  outcome of %d KB", size>>10)
		shard0 := capacityShard0 + zi*perSize
		for n := shard0; n < shard0+perSize; n++ {
			if err := ep.createShard(ctx, client, n); err != nil {
				return nil, err
			}
		}
		run, err := runCapacitySize(ctx, c, ep, client, scenarios, size, shard0, perSize)
		if err != nil {
			return nil, fmt.Errorf("%d KB: %w", size>>10, err)
		}
		res.runs = append(res.runs, run)
	}
	return res, nil
}

func runCapacitySize(ctx context.Context, c config, ep *endpoint, client *dynamodb.Client, scenarios []scenario, size, shard0, shards int) (capacityRun, error) {
	var lines []payload.Line
	event := func(si int, phase string, i int) payment {
		ev := payment{ID: fmt.Sprintf("cap-%dk-s%d-%s-%d", size>>10, si, strings.ReplaceAll(phase, " ", "-"), i), Amount: 4200, Currency: "EUR",
			Shard: shard0 + i/shardSize, Lines: lines}
		ev.Memo = memoFor(ev, businessBytes)
		return ev
	}
	// The receipt echoes the lines: they fill it to about size bytes.
	probe := event(0, capFirst, 0)
	frame, _ := json.Marshal(receiptOf(probe))
	lines = payload.Lines(uint64(size), size-len(frame)-len(`,"lines":`))
	probe = event(0, capFirst, 0)
	enc, _ := json.Marshal(receiptOf(probe))
	run := capacityRun{size: size, outcomeBytes: len(enc), businessBytes: ddbtest.ItemSize(businessItem(probe))}
	for si, s := range scenarios {
		row := &capacityRow{scenario: s.name(), perReq: map[string]ddbtest.Capacity{}, byOp: map[string]map[string]ddbtest.Capacity{}}
		for _, phase := range []string{capFirst, capDuplicate} {
			total := ddbtest.Capacity{}
			ops := map[string]ddbtest.Capacity{}
			for i := range c.capRequests {
				if err := ctx.Err(); err != nil {
					return run, err
				}
				ev := event(si, capFirst, i) // duplicates repeat the first requests
				ep.proxy.ResetConsumed()
				if _, err := s.invoke(ctx, ev); err != nil {
					row.errors++
				}
				got := ep.proxy.Consumed()
				total = total.Add(got.Total)
				for op, used := range got.ByOperation {
					ops[op] = ops[op].Add(used)
				}
			}
			row.perReq[phase] = scale(total, 1/float64(c.capRequests))
			for op, used := range ops {
				ops[op] = scale(used, 1/float64(c.capRequests))
			}
			row.byOp[phase] = ops
			if phase == capFirst {
				row.recordBytes = recordBytes(ctx, client, s.name(), event(si, capFirst, 0))
			}
		}
		ev := event(si, capConcurrent, 0)
		ev.Shard, ev.SleepMs = shard0+shards-1, int(c.sleep.Milliseconds())
		ep.proxy.ResetConsumed()
		out, err := s.burst(ctx, ev, c.contenders)
		if err != nil {
			return run, fmt.Errorf("%s: burst: %w", s.name(), err)
		}
		got := ep.proxy.Consumed()
		row.perReq[capConcurrent] = scale(got.Total, 1/float64(len(out)))
		ops := map[string]ddbtest.Capacity{}
		for op, used := range got.ByOperation {
			ops[op] = scale(used, 1/float64(len(out)))
		}
		row.byOp[capConcurrent] = ops
		run.rows = append(run.rows, row)
	}
	ep.proxy.ResetConsumed()
	return run, nil
}

func scale(c ddbtest.Capacity, f float64) ddbtest.Capacity {
	return ddbtest.Capacity{Read: c.Read * f, Write: c.Write * f}
}

// memoFor is the memo that makes ev's business item exactly n bytes as
// DynamoDB sizes it.
func memoFor(ev payment, n int) string {
	ev.Memo = "x"
	pad := n - ddbtest.ItemSize(businessItem(ev)) + 1
	return payload.Text(1, max(1, pad))
}

// recordBytes reads the idempotency record a scenario stored for ev and
// returns its size; 0 for the bare handler, which stores none.
func recordBytes(ctx context.Context, client *dynamodb.Client, scenario string, ev payment) int {
	var table, id string
	switch scenario {
	case scBare:
		return 0
	case scPowertools:
		// Powertools' record key: the function name, the handler's name and
		// the MD5 of the key; found by a scan of the shard's table.
		table = shardTable(powertoolsTable, ev.Shard)
	default:
		table = shardTable(lambdaidemTable, ev.Shard)
		id = lambdaidem.RecordKey("lambdaidem", "", "CreatePayment", ev.ID)
	}
	if id != "" {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}})
		if err != nil || out.Item == nil {
			return 0
		}
		return ddbtest.ItemSize(out.Item)
	}
	out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0
	}
	largest := 0
	for _, it := range out.Items {
		largest = max(largest, ddbtest.ItemSize(it))
	}
	return largest
}

// writeUnits is what a standard write of an item of n bytes costs.
func writeUnits(n int) float64 { return math.Max(1, math.Ceil(float64(n)/1024)) }

func (r *capacityRun) row(scenario string) *capacityRow {
	for _, row := range r.rows {
		if row.scenario == scenario {
			return row
		}
	}
	return nil
}

func units(c ddbtest.Capacity) string {
	return strconv.FormatFloat(c.Write, 'f', 2, 64) + " / " + strconv.FormatFloat(c.Read, 'f', 2, 64)
}
