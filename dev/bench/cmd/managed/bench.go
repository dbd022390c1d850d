package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// scenarioResult is one row of the bench table.
type scenarioResult struct {
	name          string
	requests      int
	p50, p99, max time.Duration
	calls         map[string]int
	cpu           time.Duration // process CPU per invocation
	errors        int
}

func (s scenarioResult) callsPerRequest() float64 {
	n := 0
	for _, v := range s.calls {
		n += v
	}
	return float64(n) / float64(s.requests)
}

// renewalResult is the renewals made by handlers of one duration.
type renewalResult struct {
	factor   float64
	handler  time.Duration
	lease    time.Duration
	requests int
	renewals int64
	calls    map[string]int
	errors   int
}

// quiet discards the Guards' logs: errors are counted instead.
var quiet = slog.New(slog.DiscardHandler)

// procCPU is the process's user+system CPU time.
func procCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// env is the process's view of the endpoints.
type env struct {
	clients []*counting // by shard
	calls   *counter
	store   *router
	raws    []*dynamodb.Client
}

// close drops the clients' idle connections (two goroutines each), so
// that a later part starts from a quiet process.
func (e *env) close() {
	for _, c := range e.raws {
		if h, ok := c.Options().HTTPClient.(interface{ CloseIdleConnections() }); ok {
			h.CloseIdleConnections()
		}
	}
}

// newEnv connects to the endpoints, one per shard (create: and creates
// the tables), or, given one URL, to the stand-in for every shard.
func newEnv(ctx context.Context, urls []string) (*env, error) {
	create := len(urls) == shards
	for len(urls) < shards {
		urls = append(urls, urls[0])
	}
	calls := &counter{n: map[string]int{}}
	var raws []*dynamodb.Client
	var clients []*counting
	for _, u := range urls {
		raw := ddbtest.NewClient(u)
		raws = append(raws, raw)
		clients = append(clients, &counting{Client: raw, counter: calls})
	}
	store, err := newRouter(ctx, clients, raws, create)
	if err != nil {
		return nil, err
	}
	return &env{clients: clients, calls: calls, store: store, raws: raws}, nil
}

func diff(after, before map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}

func bizItem(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":     &types.AttributeValueMemberS{Value: key},
		"amount": &types.AttributeValueMemberN{Value: "1250"},
		"status": &types.AttributeValueMemberS{Value: "captured"},
	}
}

// handlerFor is the payment handler: the bare one writes its item itself,
// the wrapped ones stage it.
func (e *env) invokeOnce(ctx context.Context, mode string, g *lambdaidem.Guard, key string, work time.Duration) error {
	table, client := bizTable(home(key)), e.clients[home(key)]
	body := func(ctx context.Context) (string, error) {
		if work > 0 {
			time.Sleep(work) // ignores ctx, as code past its deadline may
		}
		switch mode {
		case "bare":
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: bizItem(key)})
			return "ok", err
		case "bare-tx":
			_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String(table), Item: bizItem(key)}},
			}})
			return "ok", err
		}
		return "ok", stagePut(ctx, key)
	}
	if mode == "bare" || mode == "bare-tx" {
		_, err := body(ctx)
		return err
	}
	_, err := lambdaidem.Do(ctx, g, lambdaidem.Call[string]{Operation: "Pay", Key: key, Fingerprint: "fp-" + key}, body)
	return err
}

// home is the shard of the record of the operation with idempotency key
// key: its business item is written on the same endpoint, so that one
// transaction holds both.
func home(key string) int { return shardOf(lambdaidem.RecordKey("lambdaidem", "", "Pay", key)) }

// stagePut stages the payment item of key.
func stagePut(ctx context.Context, key string) error {
	return dynamostore.Stage(ctx, types.Put{TableName: aws.String(bizTable(home(key))), Item: bizItem(key)})
}

// burst runs slots invocations at once, each of n requests in a row, and
// returns every latency.
func burst(ctx context.Context, slots, n int, invoke func(ctx context.Context, slot, i int) error) ([]time.Duration, int) {
	lat := make([]time.Duration, 0, slots*n)
	var mu sync.Mutex
	errs := 0
	start := make(chan struct{})
	var wg sync.WaitGroup
	for s := range slots {
		wg.Go(func() {
			<-start
			for i := range n {
				ictx, cancel := context.WithTimeout(ctx, 3*time.Second) // the invocation's deadline
				t0 := time.Now()
				err := invoke(ictx, s, i)
				d := time.Since(t0)
				cancel()
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					errs++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return lat, errs
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// scenario is one way of handling the payment.
type scenario struct {
	name string
	mode string
	g    *lambdaidem.Guard
}

// rounds is how many interleaved rounds measure runs (each starting with
// another scenario); each row reports its median round (by p99), which a
// burst of other work on a shared machine moves less than a single round.
const rounds = 5

// measure runs the scenarios: a warm-up, then interleaved rounds of
// slots × requests each.
func measure(ctx context.Context, c config, e *env, scenarios []scenario) []scenarioResult {
	for _, s := range scenarios {
		burst(ctx, c.concurrency, 2, func(ctx context.Context, slot, i int) error {
			return e.invokeOnce(ctx, s.mode, s.g, fmt.Sprintf("warm-%s-%d-%d", s.name, slot, i), 0)
		})
	}
	all := make([][]scenarioResult, len(scenarios))
	for round := range rounds {
		for j := range scenarios {
			k := (j + round) % len(scenarios) // each round starts with another scenario
			s := scenarios[k]
			before, cpu0 := e.calls.snapshot(), procCPU()
			lat, errs := burst(ctx, c.concurrency, c.requests, func(ctx context.Context, slot, i int) error {
				return e.invokeOnce(ctx, s.mode, s.g, fmt.Sprintf("%s-r%d-%d-%d", s.name, round, slot, i), 0)
			})
			cpu := procCPU() - cpu0
			slices.Sort(lat)
			all[k] = append(all[k], scenarioResult{
				name: s.name, requests: len(lat), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat[len(lat)-1],
				calls: diff(e.calls.snapshot(), before), cpu: cpu / time.Duration(len(lat)), errors: errs,
			})
		}
	}
	rows := make([]scenarioResult, len(scenarios))
	for k, rs := range all {
		slices.SortFunc(rs, func(a, b scenarioResult) int { return int(a.p99 - b.p99) })
		rows[k] = rs[len(rs)/2]
	}
	return rows
}

func runBench(ctx context.Context, c config, ep *child, res *results) error {
	guard := func(store lambdaidem.Store, mode lambdaidem.Mode) (*lambdaidem.Guard, error) {
		return lambdaidem.New(store, func(o *lambdaidem.Options) {
			o.Mode = mode
			o.Renew = lambdaidem.RenewAlways // as RenewAuto resolves on Managed Instances
			o.Logger = quiet
		})
	}
	// Against the stand-in: the wrapper's own latency cost.
	si, err := newEnv(ctx, []string{ep.standIn})
	if err != nil {
		return err
	}
	defer si.close()
	siOpt, err := guard(si.store, lambdaidem.Optimistic)
	if err != nil {
		return err
	}
	res.standIn = measure(ctx, c, si, []scenario{{"bare", "bare", nil}, {"bare, transactional", "bare-tx", nil}, {"optimistic", "wrapped", siOpt}})

	// Against the emulator: calls, CPU, and latency with the emulator's
	// CPU on the same machine.
	e, err := newEnv(ctx, ep.urls)
	if err != nil {
		return err
	}
	defer e.close()
	gOpt, err := guard(e.store, lambdaidem.Optimistic)
	if err != nil {
		return err
	}
	gClaim, err := guard(e.store, lambdaidem.ClaimFirst)
	if err != nil {
		return err
	}
	res.rows = measure(ctx, c, e, []scenario{{"bare", "bare", nil}, {"bare, transactional", "bare-tx", nil}, {"optimistic", "wrapped", gOpt}, {"claim-first", "wrapped", gClaim}})

	// Renewals by handler duration: a deadline of 1s and a margin of 500ms
	// make a lease of 1.5s, renewed from 2/3 of it.
	const deadline, margin = time.Second, 500 * time.Millisecond
	lease := deadline + margin
	gRenew, err := lambdaidem.New(e.store, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.LeaseMargin = margin
		o.Logger = quiet
	})
	if err != nil {
		return err
	}
	for _, f := range []float64{0.1, 0.5, 2} {
		work := time.Duration(f * float64(lease))
		before, renews0 := e.calls.snapshot(), e.store.renews.Load()
		var mu sync.Mutex
		errs := 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for s := range c.concurrency {
			wg.Go(func() {
				<-start
				ictx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				if err := e.invokeOnce(ictx, "wrapped", gRenew, fmt.Sprintf("renew-%v-%d", f, s), work); err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		res.renewals = append(res.renewals, renewalResult{
			factor: f, handler: work, lease: lease, requests: c.concurrency,
			renewals: e.store.renews.Load() - renews0, calls: diff(e.calls.snapshot(), before), errors: errs,
		})
	}
	return nil
}
