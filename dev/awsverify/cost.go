package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// storeShapes sends each request shape the DynamoDB store sends, labelled,
// through a client that asks for ReturnConsumedCapacity=TOTAL, so that m
// holds what the endpoint reported for each.
func storeShapes(ctx context.Context, client *dynamodb.Client, table, items, prefix string) error {
	store, err := dynamostore.New(client, table)
	if err != nil {
		return err
	}
	now := time.Now()
	key := func(name string) string { return lambdaidem.RecordKey("awsverify", "", "Shapes", prefix+name) }
	claim := func(k, token string) lambdaidem.Claim {
		return lambdaidem.Claim{Key: k, Token: token, Fingerprint: "fp", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)}
	}
	commit := func(k, token string, effects ...any) lambdaidem.Commit {
		return lambdaidem.Commit{Key: k, Token: token, Fingerprint: "fp", Outcome: []byte(`{"ok":true}`), Now: now, ExpiresAt: now.Add(time.Hour),
			Attempts: 1, CreatedAt: now, Effects: effects}
	}
	effect := func(id string) any {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(items), Item: map[string]types.AttributeValue{"id": s(prefix + id)},
			ConditionExpression: aws.String(condAbsent)}}
	}
	steps := []struct {
		shape string
		call  func(ctx context.Context) error
	}{
		{"Claim (UpdateItem): absent record, claimed", func(ctx context.Context) error { return want(store.Claim(ctx, claim(key("a"), "A"))) }},
		{"Claim (UpdateItem): live lease, refused", func(ctx context.Context) error { return refused(store.Claim(ctx, claim(key("a"), "B"))) }},
		{"Renew (UpdateItem)", func(ctx context.Context) error {
			return wantOK(store.Renew(ctx, lambdaidem.Renewal{Key: key("a"), Token: "A", Now: now, LeaseUntil: now.Add(2 * time.Minute), ExpiresAt: now.Add(time.Hour)}))
		}},
		{"Commit, record only (PutItem)", func(ctx context.Context) error { return want(store.Commit(ctx, commit(key("a"), "A"))) }},
		{"Commit, refused: another token (PutItem)", func(ctx context.Context) error { return refused(store.Commit(ctx, commit(key("a"), "B"))) }},
		{"Get (GetItem, consistent)", func(ctx context.Context) error { _, err := store.Get(ctx, key("a"), now); return err }},
		{"Claim (UpdateItem): for a commit with a business item", func(ctx context.Context) error { return want(store.Claim(ctx, claim(key("b"), "A"))) }},
		{"Commit + 1 business item (TransactWriteItems)", func(ctx context.Context) error { return want(store.Commit(ctx, commit(key("b"), "A", effect("b")))) }},
		{"Claim (UpdateItem): for a refused commit", func(ctx context.Context) error { return want(store.Claim(ctx, claim(key("c"), "A"))) }},
		{"Commit + 1 business item, refused: business condition (TransactWriteItems)", func(ctx context.Context) error {
			_, _, err := store.Commit(ctx, commit(key("c"), "A", effect("b")))
			if err == nil {
				return errors.New("a commit whose business condition fails succeeded")
			}
			return nil
		}},
		{"MarkExternal (UpdateItem)", func(ctx context.Context) error {
			return wantOK(store.MarkExternal(ctx, lambdaidem.Fence{Key: key("c"), Token: "A"}))
		}},
		{"MarkUnknown (UpdateItem)", func(ctx context.Context) error {
			return wantOK(store.MarkUnknown(ctx, lambdaidem.Fence{Key: key("c"), Token: "A"}))
		}},
		{"Claim (UpdateItem): for a release", func(ctx context.Context) error { return want(store.Claim(ctx, claim(key("d"), "A"))) }},
		{"Release (DeleteItem)", func(ctx context.Context) error {
			return wantOK(store.Release(ctx, lambdaidem.Fence{Key: key("d"), Token: "A"}))
		}},
		{"Optimistic commit + 1 business item (TransactWriteItems)", func(ctx context.Context) error {
			c := commit(key("e"), "A", effect("e"))
			c.Claim = true
			return want(store.Commit(ctx, c))
		}},
		{"Optimistic commit, refused: completed (TransactWriteItems)", func(ctx context.Context) error {
			c := commit(key("e"), "B", effect("e2"))
			c.Claim = true
			return refused(store.Commit(ctx, c))
		}},
	}
	// The operator's reads (dynamostore.Records, the lambdaidem command's).
	records, err := dynamostore.NewRecords(client, table)
	if err != nil {
		return err
	}
	steps = append(steps, []struct {
		shape string
		call  func(ctx context.Context) error
	}{
		{"Records.Read (GetItem, consistent)", func(ctx context.Context) error { _, err := records.Read(ctx, key("a")); return err }},
		{"Records.Scan (Scan, consistent): the shapes' 4 records", func(ctx context.Context) error {
			n := 0
			err := records.Scan(ctx, dynamostore.ScanOptions{}, func(lambdaidem.Record) error { n++; return nil })
			if err == nil && n != 4 { // a, b, c, e: d was released
				err = fmt.Errorf("%d records; want the 4 this run left (the table must hold no others)", n)
			}
			return err
		}},
	}...)
	for _, st := range steps {
		if err := st.call(withShape(ctx, st.shape)); err != nil {
			return fmt.Errorf("%s: %w", st.shape, err)
		}
	}
	return nil
}

func want(_ lambdaidem.Record, ok bool, err error) error {
	if err == nil && !ok {
		return errors.New("refused; want it done")
	}
	return err
}

func refused(_ lambdaidem.Record, ok bool, err error) error {
	if err == nil && ok {
		return errors.New("done; want it refused")
	}
	return err
}

func wantOK(ok bool, err error) error {
	if err == nil && !ok {
		return errors.New("refused; want it done")
	}
	return err
}

// shapesCheck records the ConsumedCapacity DynamoDB reports for every
// request shape of the store, beside ddbtest's.
var shapesCheck = &check{
	Name:   "shapes",
	Bound:  "18 store and operator calls (about 22 requests), the same on a fresh ddbtest endpoint",
	Budget: budget{WriteUnits: 100, ReadUnits: 20, Time: 2 * time.Minute},
	Run: func(ctx context.Context, w *world, sec *section) error {
		prefix := fmt.Sprintf("shapes-%d-", time.Now().UnixNano())
		got := newMeter()
		if err := storeShapes(ctx, w.client(got.option), w.table(tableProbe), w.table(tableProbeItems), prefix); err != nil {
			return err
		}
		ref := newMeter()
		if _, err := withReference(ctx, []string{"records", "items"}, func(ctx context.Context, r *reference) error {
			return storeShapes(ctx, r.client(ref.option), r.tables["records"], r.tables["items"], prefix)
		}); err != nil {
			return fmt.Errorf("the ddbtest reference: %w", err)
		}
		sec.printf("What each request reported with ReturnConsumedCapacity=TOTAL (summed over its requests, SDK retries included):")
		var obs, want []observation
		for _, l := range got.labels() {
			obs = append(obs, observation{Name: l, Result: got.get(l).String()})
			want = append(want, observation{Name: l, Result: ref.get(l).String()})
		}
		return compareObservations(sec, obs, want, w.Local)
	},
}

// The bench's capacity part (dev/bench, part 5): the same handler and the
// same phases at the same outcome sizes, fewer requests.
const (
	costRequests   = 4 // per phase
	costContenders = 5
	costBusiness   = 1000 // bytes of the business item
)

var costSizes = []int{1 << 10, 16 << 10, 64 << 10}

// costScenario is one way of handling a payment.
type costScenario struct {
	name    string
	bare    bool // the handler alone, no idempotency
	mode    lambdaidem.Mode
	cache   int
	options func(*lambdaidem.Options)
}

var costScenarios = []costScenario{
	{name: "bare handler", bare: true},
	{name: "lambdaidem claim-first", mode: lambdaidem.ClaimFirst},
	{name: "lambdaidem optimistic", mode: lambdaidem.Optimistic},
	{name: "lambdaidem claim-first, cached", mode: lambdaidem.ClaimFirst, cache: 4096},
	{name: "lambdaidem claim-first, uncompressed", mode: lambdaidem.ClaimFirst, options: func(o *lambdaidem.Options) { o.NoCompression = true }},
}

type payment struct {
	ID    string `json:"id"`
	Lines string `json:"lines"`
	Sleep int    `json:"sleep,omitempty"` // milliseconds the handler takes
}

type receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Lines  string `json:"lines"`
}

// costLines is a receipt filler of about n bytes that compresses like a
// JSON receipt, not like a run of one byte.
func costLines(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d: sku-%05d qty %d price %d.%02d; ", i, (i*7919)%100000, i%9+1, (i*31)%500, i%100)
	}
	return b.String()[:n]
}

// runCost runs every scenario at every size through client (metered by
// m), labelling each phase "<size> KB · <scenario> · <phase>".
func runCost(ctx context.Context, client *dynamodb.Client, m *meter, table, items, prefix string) error {
	store, err := dynamostore.New(client, table)
	if err != nil {
		return err
	}
	memo := strings.Repeat("m", costBusiness-60)
	for _, size := range costSizes {
		lines := costLines(size)
		for _, sc := range costScenarios {
			business := func(ctx context.Context, ev payment) (receipt, error) {
				if ev.Sleep > 0 {
					select {
					case <-time.After(time.Duration(ev.Sleep) * time.Millisecond):
					case <-ctx.Done():
						return receipt{}, ctx.Err()
					}
				}
				item := map[string]types.AttributeValue{"id": s("payment#" + ev.ID), "memo": s(memo)}
				if sc.bare {
					_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(items), Item: item})
					return receipt{ID: ev.ID, Status: "captured", Lines: ev.Lines}, err
				}
				return receipt{ID: ev.ID, Status: "captured", Lines: ev.Lines}, dynamostore.Stage(ctx, types.Put{TableName: aws.String(items), Item: item})
			}
			h := business
			if !sc.bare {
				g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
					o.Mode, o.CacheSize = sc.mode, sc.cache
					if sc.options != nil {
						sc.options(o)
					}
				})
				if err != nil {
					return err
				}
				wr, err := lambdaidem.NewWrapper(g, lambdaidem.Spec[payment, receipt]{Operation: "CreatePayment",
					Key: func(_ context.Context, ev payment) (string, error) { return ev.ID, nil }})
				if err != nil {
					return err
				}
				h = wr.Wrap(business)
			}
			label := func(phase string) string { return fmt.Sprintf("%d KB · %s · %s", size>>10, sc.name, phase) }
			id := func(i int) string {
				return fmt.Sprintf("%s%dk-%s-%d", prefix, size>>10, strings.ReplaceAll(sc.name, " ", "-"), i)
			}
			for _, phase := range []string{"first request", "completed duplicate"} {
				pctx := withShape(ctx, label(phase))
				for i := range costRequests {
					ictx, cancel := context.WithTimeout(pctx, 20*time.Second)
					_, err := h(ictx, payment{ID: id(i), Lines: lines})
					cancel()
					if err != nil {
						return fmt.Errorf("%s: %w", label(phase), err)
					}
				}
			}
			// Concurrent duplicates of a new key, released together.
			pctx := withShape(ctx, label("concurrent duplicates"))
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range costContenders {
				wg.Go(func() {
					<-start
					ictx, cancel := context.WithTimeout(pctx, 20*time.Second)
					defer cancel()
					_, _ = h(ictx, payment{ID: id(costRequests), Lines: lines, Sleep: 50})
				})
			}
			close(start)
			wg.Wait()
		}
	}
	return nil
}

// costCheck records the capacity units DynamoDB reports for every scenario
// of the bench's capacity part, beside what ddbtest reports for the same
// requests: on AWS, a difference is a bug in ddbtest's capacity rules.
var costCheck = &check{
	Name:   "cost",
	Bound:  fmt.Sprintf("%d scenarios × %d outcome sizes × (2×%d requests + %d concurrent duplicates), the same on a fresh ddbtest endpoint", len(costScenarios), len(costSizes), costRequests, costContenders),
	Budget: budget{WriteUnits: 30_000, ReadUnits: 3_000, Time: 4 * time.Minute},
	Run: func(ctx context.Context, w *world, sec *section) error {
		prefix := fmt.Sprintf("cost-%d-", time.Now().UnixNano())
		got := newMeter()
		if err := runCost(ctx, w.client(got.option), got, w.table(tableCapacity), w.table(tableCapacityItems), prefix); err != nil {
			return err
		}
		ref := newMeter()
		if _, err := withReference(ctx, []string{"records", "items"}, func(ctx context.Context, r *reference) error {
			return runCost(ctx, r.client(ref.option), ref, r.tables["records"], r.tables["items"], prefix)
		}); err != nil {
			return fmt.Errorf("the ddbtest reference: %w", err)
		}
		sec.printf("Capacity units per request (ReturnConsumedCapacity=TOTAL, summed over the phase's requests and divided by them; %d requests per phase, %d concurrent duplicates). Concurrent duplicates depend on timing: which contenders meet a transaction conflict differs run to run.", costRequests, costContenders)
		var obs, want []observation
		for _, l := range got.labels() {
			per := costRequests
			if strings.HasSuffix(l, "concurrent duplicates") {
				per = costContenders
			}
			volatile := per == costContenders
			obs = append(obs, observation{Name: l, Result: perRequest(got.get(l), per), Volatile: volatile})
			want = append(want, observation{Name: l, Result: perRequest(ref.get(l), per)})
		}
		return compareObservations(sec, obs, want, w.Local)
	},
}

// perRequest renders a phase's capacity per request.
func perRequest(e metered, requests int) string {
	if e.Requests == 0 {
		return "no DynamoDB request"
	}
	f := float64(requests)
	out := fmt.Sprintf("%.2f units (%.2f write, %.2f read); %d calls", e.Units/f, e.Write/f, e.Read/f, e.Requests)
	if len(e.Errors) > 0 {
		out += " (" + strings.Join(dedupe(e.Errors), ", ") + ")"
	}
	return out
}
