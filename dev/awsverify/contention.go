package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Contention's bounds: rounds per mode, contenders per round, and the
// business items each contender stages (contender-specific, 8 KB each):
// they make each commit a transaction DynamoDB takes a while over, so that
// the contenders' commits and claims are in flight on the record together
// and meet DynamoDB's own TransactionConflict.
const (
	contentionRounds     = 2
	contentionContenders = 16
	contentionItems      = 8
	contentionItemBytes  = 8 << 10
	// contentionHold is how long the LOCAL endpoint holds each commit in
	// flight, as a slow DynamoDB transaction is.
	contentionHold = 40 * time.Millisecond
)

// roundResult is what one round of contenders saw.
type roundResult struct {
	winners []int // contenders whose items are in the table
	answers map[string]int
	errors  map[string]int
	partial int // contenders with only some of their items written (must be 0)

}

// contend runs one round: contenders, each its own Lambda instance (its own
// Guard), handle the same operation at once; every handler stages its
// items, then waits for all the others to get there, so that every commit
// (optimistic) or the winner's commit and the others' claims (claim-first)
// leave together.
func contend(ctx context.Context, client *dynamodb.Client, table, items, key string, mode lambdaidem.Mode) (roundResult, error) {
	res := roundResult{answers: map[string]int{}, errors: map[string]int{}}
	store, err := dynamostore.New(client, table)
	if err != nil {
		return res, err
	}
	body := strings.Repeat("c", contentionItemBytes-100)
	var arrived sync.WaitGroup
	arrived.Add(contentionContenders)
	allThere := make(chan struct{})
	go func() { arrived.Wait(); close(allThere) }()
	start := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range contentionContenders {
		g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Mode = mode })
		if err != nil {
			return res, err
		}
		w, err := lambdaidem.NewWrapper(g, lambdaidem.Spec[string, string]{Operation: "Contend",
			Key: func(_ context.Context, k string) (string, error) { return k, nil }})
		if err != nil {
			return res, err
		}
		var once sync.Once
		h := w.Wrap(func(ctx context.Context, k string) (string, error) {
			for i := range contentionItems {
				if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(items), Item: map[string]types.AttributeValue{
					"id": s(fmt.Sprintf("%s#%02d#%d", k, c, i)), "body": s(body)}}); err != nil {
					return "", err
				}
			}
			once.Do(arrived.Done)
			select { // the others, or (claim-first) as long as they may wait
			case <-allThere:
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
			}
			return fmt.Sprintf("contender %d", c), nil
		})
		wg.Go(func() {
			<-start
			defer once.Do(arrived.Done) // a contender that never runs the handler
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			out, err := h(cctx, key)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errors[errorClass(err)]++
				return
			}
			res.answers[out]++
		})
	}
	close(start)
	wg.Wait()
	// Read back every item any contender staged.
	for c := range contentionContenders {
		found := 0
		for i := range contentionItems {
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(items), ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"id": s(fmt.Sprintf("%s#%02d#%d", key, c, i))}, ProjectionExpression: aws.String("id")})
			if err != nil {
				return res, err
			}
			if out.Item != nil {
				found++
			}
		}
		switch found {
		case contentionItems:
			res.winners = append(res.winners, c)
		case 0:
		default:
			res.partial++
		}
	}
	return res, nil
}

// errorClass names an error for the tally: the lambdaidem sentinel it
// matches, else its API error code.
func errorClass(err error) string {
	for _, e := range []error{lambdaidem.ErrInProgress, lambdaidem.ErrStoreUnavailable} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline exceeded"
	}
	return errorCode(err)
}

// contentionCheck races synchronized contenders on one key per round, in
// both modes: exactly one contender's business items are written, every
// answer is that contender's, and the run meets DynamoDB's own transaction
// conflicts (the count is reported; locally the endpoint holds commits in
// flight so that it produces them).
var contentionCheck = &check{
	Name: "contention",
	Bound: fmt.Sprintf("%d rounds × 2 modes × %d contenders on one key, each committing %d items of %d KB",
		contentionRounds, contentionContenders, contentionItems, contentionItemBytes>>10),
	Budget: budget{WriteUnits: float64(2*contentionRounds*contentionContenders*(contentionItems*contentionItemBytes/1024+2)) * 2, ReadUnits: 2_000, Time: 3 * time.Minute},
	Run: func(ctx context.Context, w *world, sec *section) error {
		if w.Proxy != nil {
			remove := w.Proxy.Inject(ddbtest.Rule{Op: "TransactWriteItems", Hold: contentionHold})
			defer remove()
		}
		m := newMeter()
		client := w.client(m.option)
		var rows [][]string
		var problems []string
		optimisticConflicts := 0
		for _, mode := range []lambdaidem.Mode{lambdaidem.Optimistic, lambdaidem.ClaimFirst} {
			name := map[lambdaidem.Mode]string{lambdaidem.Optimistic: "optimistic", lambdaidem.ClaimFirst: "claim-first"}[mode]
			for r := range contentionRounds {
				m.reset()
				key := fmt.Sprintf("contention-%s-%d-%d", name, r, time.Now().UnixNano())
				res, err := contend(ctx, client, w.table(tableContention), w.table(tableContentionItems), key, mode)
				if err != nil {
					return fmt.Errorf("%s round %d: %w", name, r, err)
				}
				conflicts := m.count("TransactionConflict")
				if mode == lambdaidem.Optimistic {
					optimisticConflicts += conflicts
				}
				if len(res.winners) != 1 || res.partial != 0 {
					problems = append(problems, fmt.Sprintf("%s round %d: %d contenders' items written (%d partly); want exactly one", name, r, len(res.winners), res.partial))
				}
				if len(res.answers) > 1 {
					problems = append(problems, fmt.Sprintf("%s round %d: different answers %v; want one", name, r, res.answers))
				}
				if len(res.winners) == 1 {
					want := fmt.Sprintf("contender %d", res.winners[0])
					for a := range res.answers {
						if a != want {
							problems = append(problems, fmt.Sprintf("%s round %d: answer %q, but %s's items were written", name, r, a, want))
						}
					}
				}
				rows = append(rows, []string{name, fmt.Sprint(r), fmt.Sprint(res.winners), tally(res.answers), tally(res.errors), fmt.Sprint(conflicts)})
			}
		}
		sec.table([]string{"mode", "round", "items written by", "answers", "errors", "TransactionConflict met (requests)"}, rows)
		if optimisticConflicts == 0 {
			problems = append(problems, "the optimistic rounds met no TransactionConflict: the commits were not in flight together, so the rounds did not test what they claim")
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "\n"))
		}
		return nil
	},
}

func tally(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
