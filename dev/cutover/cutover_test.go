package cutover_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dev/chaos"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// orderEvent is the function's event; both versions key it on id and
// validate amount (Powertools: event_key_jmespath "id",
// payload_validation_jmespath "amount").
type orderEvent struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
	// hang, on the Go side: the handler stops after staging its write
	// (the instance died before the commit) and reports on the channel.
	hang chan<- string
}

// answer is what both versions return: the key and the run that had the
// effect.
type answer struct {
	Key string `json:"key"`
	Run string `json:"run"`
}

// side is the version that served an invocation.
type side string

const (
	oldTS side = "powertools"
	newGo side = "lambdaidem"
)

// result is one invocation's outcome.
type result struct {
	side  side
	ans   answer
	err   string // "" on success
	hung  bool
	busy  bool // in progress: the caller retries later
	other bool // any other error
}

// world is one table with both versions serving it.
type world struct {
	t        *testing.T
	client   *dynamodb.Client
	table    string
	business string
	url      string
	handle   func(context.Context, orderEvent) (answer, error)
	release  chan struct{}  // ends hung Go handlers at cleanup
	hung     sync.WaitGroup // the hung Go handlers
}

// newWorld starts the endpoint, the tables, the Powertools peer and the
// lambdaidem version (in mode), whose Powertools window is open until
// until.
func newWorld(t *testing.T, ptDir string, until time.Time, mode lambdaidem.Mode) *world {
	t.Helper()
	ep := ddbtest.Start(t)
	w := &world{t: t, client: ep.Client(), table: ddbtest.TableName(t, "idem"), business: ddbtest.TableName(t, "effects"), release: make(chan struct{})}
	ctx := context.Background()
	for _, name := range []string{w.table, w.business} {
		if err := ddbtest.CreateTable(ctx, w.client, name); err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
	}
	t.Cleanup(func() { close(w.release); w.hung.Wait() })

	// The old version: Powertools TypeScript in node.
	cmd := exec.Command("node", "peer.mjs")
	cmd.Env = append(os.Environ(),
		"CUTOVER_POWERTOOLS_DIR="+ptDir, "CUTOVER_ENDPOINT="+ep.URL,
		"CUTOVER_TABLE="+w.table, "CUTOVER_BUSINESS_TABLE="+w.business,
		"AWS_LAMBDA_FUNCTION_NAME=orders", "NODE_NO_WARNINGS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("peer did not start: %v", err)
	}
	var hello struct{ Port int }
	if err := json.Unmarshal([]byte(line), &hello); err != nil || hello.Port == 0 {
		t.Fatalf("peer said %q", line)
	}
	w.url = fmt.Sprintf("http://127.0.0.1:%d/invoke", hello.Port)

	// The new version: lambdaidem with a window over the old keys.
	store, err := dynamostore.New(w.client, w.table, func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{
			Config:     powertools.Config{Language: powertools.TypeScript, FunctionName: "orders"},
			Until:      until,
			Validation: true,
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = time.Hour
		o.Renew = lambdaidem.RenewNever
		o.LeaseMargin = 300 * time.Millisecond
		o.Mode = mode
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := func(ctx context.Context, ev orderEvent) (answer, error) {
		call := lambdaidem.Call[answer]{Operation: "CreateOrder", Key: ev.ID, Fingerprint: strconv.Itoa(ev.Amount)}
		return lambdaidem.Do(ctx, g, call, func(ctx context.Context) (answer, error) {
			run := newRun()
			if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(w.business), Item: map[string]types.AttributeValue{
				"id": str("effect#" + ev.ID + "#" + run), "key": str(ev.ID), "run": str(run), "by": str(string(newGo)),
			}}); err != nil {
				return answer{}, err
			}
			if ev.hang != nil {
				ev.hang <- run
				<-w.release
			}
			return answer{Key: ev.ID, Run: run}, nil
		})
	}
	w.handle = dynamostore.PowertoolsHandler(store, inner,
		func(ev orderEvent) (any, error) { return ev.ID, nil },
		func(ev orderEvent) (any, error) { return ev.Amount, nil })
	return w
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func newRun() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// old invokes the Powertools version; timeout is the invocation's
// remaining time (its lease); hang stops it after its business write.
func (w *world) old(id string, amount int, timeout time.Duration, hang bool) result {
	body, _ := json.Marshal(map[string]any{
		"event":     map[string]any{"id": id, "amount": amount, "call": newRun(), "hang": hang},
		"timeoutMs": timeout.Milliseconds(),
	})
	resp, err := http.Post(w.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return result{side: oldTS, err: err.Error(), other: true}
	}
	defer resp.Body.Close()
	var out struct {
		Result *answer
		Error  string
		Hung   bool
		Run    string
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return result{side: oldTS, err: err.Error(), other: true}
	}
	switch {
	case out.Hung:
		return result{side: oldTS, hung: true, ans: answer{Key: id, Run: out.Run}}
	case out.Error != "":
		return result{side: oldTS, err: out.Error, busy: strings.HasPrefix(out.Error, "IdempotencyAlreadyInProgressError"), other: !strings.HasPrefix(out.Error, "IdempotencyAlreadyInProgressError")}
	}
	return result{side: oldTS, ans: *out.Result}
}

// new invokes the lambdaidem version with a deadline timeout away; hang
// stops it after staging its write.
func (w *world) new(id string, amount int, timeout time.Duration, hang bool) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	ev := orderEvent{ID: id, Amount: amount}
	if !hang {
		defer cancel()
		ans, err := w.handle(ctx, ev)
		switch {
		case errors.Is(err, lambdaidem.ErrInProgress):
			return result{side: newGo, err: err.Error(), busy: true}
		case err != nil:
			return result{side: newGo, err: err.Error(), other: true}
		}
		return result{side: newGo, ans: ans}
	}
	ch := make(chan string, 1)
	ev.hang = ch
	w.hung.Add(1)
	go func() {
		defer w.hung.Done()
		defer cancel()
		_, _ = w.handle(ctx, ev)
	}()
	return result{side: newGo, hung: true, ans: answer{Key: id, Run: <-ch}}
}

// effects are the business effects per key, by the side that had them.
func (w *world) effects() map[string][]string {
	w.t.Helper()
	out, err := w.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.business), ConsistentRead: aws.Bool(true)})
	if err != nil {
		w.t.Fatal(err)
	}
	m := map[string][]string{}
	for _, it := range out.Items {
		key := it["key"].(*types.AttributeValueMemberS).Value
		m[key] = append(m[key], it["by"].(*types.AttributeValueMemberS).Value+":"+it["run"].(*types.AttributeValueMemberS).Value)
	}
	return m
}

// tally is what a run of the scenarios found.
type tally struct {
	keys, effects int
	duplicates    int // effects beyond one per key that lambdaidem's side could prevent
	ownCrash      int // Powertools' own crash between its effect and its completion (by design)
	answers       int
	mismatched    int // successful answers naming a run other than the key's effects
	busy, other   int
	missing       int // keys without any effect
}

func (t tally) String() string {
	return fmt.Sprintf("%d keys, %d effects, %d duplicates (+%d by Powertools' own crash), %d keys without an effect, %d answers, %d mismatched, %d in progress, %d other errors",
		t.keys, t.effects, t.duplicates, t.ownCrash, t.missing, t.answers, t.mismatched, t.busy, t.other)
}

// scenarios runs every scenario on w with fresh keys (prefix) and counts.
func scenarios(t *testing.T, w *world, prefix string) tally {
	const lease = 1500 * time.Millisecond
	var mu sync.Mutex
	answers := map[string][]result{}
	ownCrash := map[string]bool{}
	note := func(id string, r result) {
		mu.Lock()
		defer mu.Unlock()
		answers[id] = append(answers[id], r)
	}
	long := 30 * time.Second
	id := func(s string, i int) string { return fmt.Sprintf("%s-%s-%d", prefix, s, i) }
	const n = 4
	for i := range n {
		// Old first, then new, then old again.
		k := id("old-first", i)
		note(k, w.old(k, 10, long, false))
		note(k, w.new(k, 10, long, false))
		note(k, w.old(k, 10, long, false))
		// New first, then old, then new again.
		k = id("new-first", i)
		note(k, w.new(k, 10, long, false))
		note(k, w.old(k, 10, long, false))
		note(k, w.new(k, 10, long, false))
		// Both at once: three of each, started together, then one of each.
		k = id("both", i)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if j%2 == 0 {
					note(k, w.old(k, 10, long, false))
				} else {
					note(k, w.new(k, 10, long, false))
				}
			}()
		}
		close(start)
		wg.Wait()
		note(k, w.old(k, 10, long, false))
		note(k, w.new(k, 10, long, false))
	}
	// Crashes in between: each version dies after its effect (Powertools:
	// after its business write; lambdaidem: after staging, before the
	// commit), the other version retries at once and again after the
	// lease, then both once more.
	for i := range 2 {
		k := id("old-crash", i)
		note(k, w.old(k, 10, lease, true))
		ownCrash[k] = true
		note(k, w.new(k, 10, long, false))
		time.Sleep(lease + 500*time.Millisecond)
		note(k, w.new(k, 10, long, false))
		note(k, w.old(k, 10, long, false))

		k = id("new-crash", i)
		note(k, w.new(k, 10, lease, true))
		note(k, w.old(k, 10, long, false))
		time.Sleep(lease + 800*time.Millisecond)
		note(k, w.old(k, 10, long, false))
		note(k, w.new(k, 10, long, false))
	}

	var res tally
	effects := w.effects()
	for k, rs := range answers {
		res.keys++
		runs := effects[k]
		res.effects += len(runs)
		if len(runs) == 0 {
			res.missing++
		}
		if extra := len(runs) - 1; extra > 0 {
			// A Powertools instance that died after its effect leaves a
			// record that lapses: the next attempt runs again, by design.
			if ownCrash[k] {
				res.ownCrash++
				extra--
			}
			res.duplicates += extra
		}
		for _, r := range rs {
			switch {
			case r.hung:
			case r.busy:
				res.busy++
			case r.other:
				res.other++
				t.Logf("%s %s: %s", k, r.side, r.err)
			default:
				res.answers++
				found := false
				for _, e := range runs {
					found = found || strings.HasSuffix(e, ":"+r.ans.Run)
				}
				if !found || r.ans.Key != k {
					res.mismatched++
				}
			}
		}
		if len(runs) > 1 {
			t.Logf("%s: effects %v", k, runs)
		}
	}
	return res
}

// TestCutoverWithPowertoolsTypeScript runs Powertools TypeScript 2.35.0
// and lambdaidem on one table with the same requests, interleaved,
// concurrent and crashing in between, with the Powertools window open and
// then closed: open (claim-first and optimistic), no duplicate effect that lambdaidem's side could
// prevent and every answer the run that had the effect; closed, the
// duplicates the window prevents.
func TestCutoverWithPowertoolsTypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs node with Powertools")
	}
	ptDir, err := chaos.PowertoolsDir()
	if err != nil {
		t.Skipf("Powertools side skipped: %v", err)
	}
	for _, mode := range []lambdaidem.Mode{lambdaidem.ClaimFirst, lambdaidem.Optimistic} {
		t.Run(mode.String(), func(t *testing.T) {
			open := newWorld(t, ptDir, time.Now().Add(time.Hour), mode)
			got := scenarios(t, open, "open")
			t.Logf("window open, %s: %v", mode, got)
			if got.duplicates != 0 || got.mismatched != 0 || got.other != 0 || got.missing != 0 {
				t.Errorf("window open: %v; want no duplicate, every answer the run that had the effect, no error but in progress", got)
			}
			if got.ownCrash == 0 {
				t.Errorf("window open: %v; the Powertools crash scenario ran nothing again after its lease (it should, by Powertools' design)", got)
			}
			// Another amount under a key the other version completed is
			// refused both ways: never the other request's answer.
			if r := open.old("open-v-1", 10, 30*time.Second, false); r.err != "" {
				t.Fatal(r.err)
			}
			if r := open.new("open-v-1", 11, 30*time.Second, false); !strings.Contains(r.err, "reused") {
				t.Errorf("new version, other amount after the old one completed: %+v; want ErrKeyReused", r)
			}
			if r := open.new("open-v-2", 10, 30*time.Second, false); r.err != "" {
				t.Fatal(r.err)
			}
			if r := open.old("open-v-2", 11, 30*time.Second, false); !strings.HasPrefix(r.err, "IdempotencyValidationError") {
				t.Errorf("old version, other amount after the new one completed: %+v; want IdempotencyValidationError", r)
			}
		})
	}
	closed := newWorld(t, ptDir, time.Now().Add(-time.Hour), lambdaidem.ClaimFirst)
	without := scenarios(t, closed, "closed")
	t.Logf("window closed: %v", without)
	if without.duplicates == 0 {
		t.Errorf("window closed: %v; want the duplicates the window prevents", without)
	}
}
