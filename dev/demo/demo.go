package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaidem/lambdaidem/dev/e2estack"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// demo holds one run's state.
type demo struct {
	out   io.Writer
	work  string
	log   io.Writer // the functions' and emulators' output
	cli   string    // the lambdaidem command, built
	emb   *e2estack.Embedded
	http  *http.Client
	start time.Time
	step  int

	mu      sync.Mutex
	batches []e2estack.Batch
}

// scenarioLimit bounds the scenarios once everything is built and started.
const scenarioLimit = 3 * time.Minute

// scenarios runs the narrated scenarios on the built bootstraps, within
// scenarioLimit; a step that fails or runs out of time says which it was.
func (d *demo) scenarios(parent context.Context, b builds) error {
	ctx, cancel := context.WithTimeout(parent, scenarioLimit)
	defer cancel()
	d.start = time.Now()
	d.http = &http.Client{Timeout: 30 * time.Second}
	d.say("Starting:")
	d.say("  - payments (examples/api-gateway) on 4 emulator instances, timeout 2s, behind a local HTTP API")
	d.say("  - orders (examples/sqs) on 1 emulator instance, timeout 2s, fed by a local SQS queue")
	d.say("  - DynamoDB (in-process minidyn) and SQS (in-process goaws) on 127.0.0.1")
	emb, err := e2estack.StartEmbedded(ctx, e2estack.EmbeddedOptions{
		RIE: b.rie, WorkDir: d.work, Log: &lockedWriter{w: d.log},
		PaymentsBootstrap: b.payments, OrdersBootstrap: b.orders,
		PaymentsInstances: 4, PaymentsTimeout: 2 * time.Second,
		OrdersTimeout: 2 * time.Second, OrdersVisibility: 2 * time.Second, OrdersMaxReceiveCount: 8,
		OnBatch: func(b e2estack.Batch) {
			d.mu.Lock()
			d.batches = append(d.batches, b)
			d.mu.Unlock()
		},
	})
	if err != nil {
		return stepFailed(parent, ctx, "starting the stack", scenarioLimit, err)
	}
	d.emb = emb
	defer d.emb.Close()
	d.cli = b.cli
	d.say(fmt.Sprintf("Up in %v.", d.since()))

	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"the first request", d.firstRequest}, {"the retry", d.retry}, {"12 concurrent retries", d.concurrent},
		{"the reused key", d.reusedKey}, {"the cut-off invocation", d.cutOff}, {"the SQS redelivery", d.redelivery},
		{"the operator's view", d.operator},
	}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			return stepFailed(parent, ctx, "scenario "+s.name, scenarioLimit, err)
		}
	}
	d.title(fmt.Sprintf("Done in %v: every retry had its effect once.", d.since()))
	return nil
}

const (
	keyA = "order-1001-pay"
	keyB = "order-1002-pay"
	keyC = "order-1003-pay"
)

func (d *demo) firstRequest(ctx context.Context) error {
	d.heading("A client pays an invoice", "POST /payments with Idempotency-Key: "+keyA)
	r, err := d.post(ctx, keyA, payment("inv-1001", 1250))
	if err != nil {
		return err
	}
	d.reply(r)
	return d.expect(r.status == http.StatusCreated, "want 201", d.tables(ctx))
}

func (d *demo) retry(ctx context.Context) error {
	d.heading("The response is lost; the client retries", "the same POST, the same key")
	r, err := d.post(ctx, keyA, payment("inv-1001", 1250))
	if err != nil {
		return err
	}
	d.reply(r)
	d.say("  The function ran again, found the completed record and replayed the stored response.")
	return d.expect(r.status == http.StatusCreated && r.replayed, "want a replayed 201", d.tables(ctx))
}

func (d *demo) concurrent(ctx context.Context) error {
	d.heading("An impatient client fires 12 retries at once", "12 simultaneous POSTs with key "+keyB+" across 4 instances")
	d.emb.DynamoDB.Proxy.SetLatency(10 * time.Millisecond) // a region's round trip
	defer d.emb.DynamoDB.Proxy.SetLatency(0)
	const n = 12
	replies := make([]reply, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i], errs[i] = d.post(ctx, keyB, payment("inv-1002", 990))
		})
	}
	close(start)
	wg.Wait()
	tally := map[string]int{}
	for i, r := range replies {
		if errs[i] != nil {
			return errs[i]
		}
		label := strconv.Itoa(r.status)
		switch {
		case r.status == http.StatusCreated && r.replayed:
			label = "201 replayed"
		case r.status == http.StatusCreated:
			label = "201 created"
		case r.status == http.StatusConflict:
			label = "409 in progress (Retry-After " + r.retryAfter + "s)"
		}
		tally[label]++
	}
	labels := make([]string, 0, len(tally))
	for l := range tally {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		d.say(fmt.Sprintf("  %2d × %s", tally[l], l))
	}
	d.say("  One contender claimed the key; the others were told to wait or got its outcome.")
	n2, err := d.countPayments(ctx, "inv-1002")
	if err != nil {
		return err
	}
	return d.expect(n2 == 1 && tally["201 created"] <= 1, "want one payment for inv-1002", d.tables(ctx))
}

func (d *demo) reusedKey(ctx context.Context) error {
	d.heading("A buggy client reuses a key for another payment", "POST with key "+keyA+" and a different body")
	r, err := d.post(ctx, keyA, payment("inv-9999", 50000))
	if err != nil {
		return err
	}
	d.reply(r)
	d.say("  Refused: the stored response of the first payment is never revealed to another request.")
	n, err := d.countPayments(ctx, "inv-9999")
	if err != nil {
		return err
	}
	return d.expect(r.status == http.StatusUnprocessableEntity && n == 0, "want 422 and no payment", d.tables(ctx))
}

func (d *demo) cutOff(ctx context.Context) error {
	d.heading("The function is cut off by its 2s timeout after claiming the key",
		"POST with key "+keyC+"; DynamoDB stalls its commit, the emulator kills it at the timeout")
	d.emb.DynamoDB.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: "inv-1003"})
	r, err := d.post(ctx, keyC, payment("inv-1003", 7000))
	if err != nil {
		return err
	}
	d.reply(r)
	if err := d.tables(ctx); err != nil {
		return err
	}
	d.say("  The claim survives the dead attempt: its lease runs until the invocation's deadline + 5s.")
	r, err = d.post(ctx, keyC, payment("inv-1003", 7000))
	if err != nil {
		return err
	}
	d.say("  An immediate retry:")
	d.reply(r)
	for i := 0; r.status == http.StatusConflict && i < 20; i++ {
		wait, _ := strconv.Atoi(r.retryAfter)
		if wait < 1 {
			wait = 1
		}
		d.say(fmt.Sprintf("  ...the client waits %ds as told, and retries", wait))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(wait) * time.Second):
		}
		if r, err = d.post(ctx, keyC, payment("inv-1003", 7000)); err != nil {
			return err
		}
	}
	d.reply(r)
	d.say("  The lease had lapsed: this attempt took the record over and ran the payment, once.")
	n, err := d.countPayments(ctx, "inv-1003")
	if err != nil {
		return err
	}
	return d.expect(r.status == http.StatusCreated && !r.replayed && n == 1, "want a fresh 201 and one payment", d.tables(ctx))
}

func (d *demo) redelivery(ctx context.Context) error {
	d.heading("SQS: the orders function crashes halfway through a batch",
		"3 order messages in one batch; the process is killed when it reaches the second order's commit")
	ids := []string{"ord-2001", "ord-2002", "ord-2003"}
	d.emb.DynamoDB.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: ids[1], OnHold: func() {
		_ = d.emb.Orders.KillRuntime()
	}})
	entries := make([]sqstypes.SendMessageBatchRequestEntry, len(ids))
	for i, id := range ids {
		body := fmt.Sprintf(`{"order_id": %q, "customer": "c-7", "items": [{"sku": "mug", "qty": 1}], "total": 1200}`, id)
		entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body)}
	}
	out, err := d.emb.SQS.Client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(d.emb.QueueURL), Entries: entries})
	if err != nil {
		return err
	}
	pending := map[string]bool{}
	for _, s := range out.Successful {
		pending[aws.ToString(s.MessageId)] = true
	}
	seen := 0
	deadline := time.Now().Add(30 * time.Second)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("orders not processed after 30s (%d left)", len(pending))
		}
		d.mu.Lock()
		batches := append([]e2estack.Batch(nil), d.batches[seen:]...)
		seen = len(d.batches)
		d.mu.Unlock()
		for _, b := range batches {
			d.say("  " + describeBatch(b))
			for _, id := range b.Deleted {
				delete(pending, id)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	d.say("  Redelivered messages whose order was already committed were answered from their records;")
	d.say("  the one left in progress was retried until its lease lapsed, then committed.")
	orders, err := d.scan(ctx, d.emb.OrdersTable)
	if err != nil {
		return err
	}
	d.say(fmt.Sprintf("  orders table: %d item(s): %s", len(orders), joinIDs(orders)))
	return d.expect(len(orders) == len(ids), "want one order each", nil)
}

func describeBatch(b e2estack.Batch) string {
	counts := make([]string, len(b.ReceiveCounts))
	for i, c := range b.ReceiveCounts {
		counts[i] = fmt.Sprintf("#%d", c)
	}
	switch {
	case b.Invocation.FunctionError != "":
		return fmt.Sprintf("batch of %d (deliveries %s): the function died (%s); all %d stay on the queue",
			len(b.MessageIDs), strings.Join(counts, " "), b.Invocation.FunctionError, len(b.Failed))
	case len(b.Failed) > 0:
		return fmt.Sprintf("batch of %d (deliveries %s): %d done and deleted, %d reported as batch item failures (still in progress elsewhere)",
			len(b.MessageIDs), strings.Join(counts, " "), len(b.Deleted), len(b.Failed))
	}
	return fmt.Sprintf("batch of %d (deliveries %s): all done and deleted", len(b.MessageIDs), strings.Join(counts, " "))
}

// reply is what the HTTP client got.
type reply struct {
	status     int
	replayed   bool
	retryAfter string
	body       string
	fnError    string
}

func (d *demo) post(ctx context.Context, key, body string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.emb.APIURL+"/payments", strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := d.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, err
	}
	return reply{
		status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true",
		retryAfter: resp.Header.Get("Retry-After"), body: string(b), fnError: resp.Header.Get("X-E2e-Function-Error"),
	}, nil
}

func (d *demo) reply(r reply) {
	line := fmt.Sprintf("  → %d %s", r.status, http.StatusText(r.status))
	if r.replayed {
		line += "  (Idempotent-Replayed: true)"
	}
	if r.retryAfter != "" {
		line += "  (Retry-After: " + r.retryAfter + ")"
	}
	if r.fnError != "" {
		line += "  (the function failed: " + r.fnError + ")"
	}
	d.say(line)
	d.say("    " + summarize(r.body))
}

// summarize shortens a JSON body to its most telling fields.
func summarize(body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return body
	}
	var parts []string
	for _, k := range []string{"id", "amount", "currency", "reference", "title", "detail", "message"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// tables prints the payments and their idempotency records.
func (d *demo) tables(ctx context.Context) error {
	pays, err := d.scan(ctx, d.emb.PaymentsTable)
	if err != nil {
		return err
	}
	refs := map[string]int{}
	for _, p := range pays {
		refs[str(p, "reference")]++
	}
	keys := make([]string, 0, len(refs))
	for k := range refs {
		keys = append(keys, fmt.Sprintf("%s×%d", k, refs[k]))
	}
	sort.Strings(keys)
	d.say(fmt.Sprintf("  payments table: %d item(s) %s", len(pays), strings.Join(keys, " ")))
	recs, err := d.scan(ctx, d.emb.PaymentsIdempotencyTable)
	if err != nil {
		return err
	}
	sort.Slice(recs, func(i, j int) bool { return num(recs[i], "created_at") < num(recs[j], "created_at") })
	for _, r := range recs {
		line := fmt.Sprintf("  idempotency record %s…: %-10s claims=%s", short(str(r, "id")), str(r, "status"), strconv.FormatInt(num(r, "attempts"), 10))
		if str(r, "status") == "INPROGRESS" {
			if lease := num(r, "in_progress_expiration"); lease > 0 {
				line += fmt.Sprintf(" lease ends in %.1fs", time.Until(time.UnixMilli(lease)).Seconds())
			}
		}
		d.say(line)
	}
	return nil
}

func (d *demo) countPayments(ctx context.Context, reference string) (int, error) {
	pays, err := d.scan(ctx, d.emb.PaymentsTable)
	n := 0
	for _, p := range pays {
		if str(p, "reference") == reference {
			n++
		}
	}
	return n, err
}

func (d *demo) scan(ctx context.Context, table string) ([]map[string]ddbtypes.AttributeValue, error) {
	var items []map[string]ddbtypes.AttributeValue
	var start map[string]ddbtypes.AttributeValue
	for range 100 {
		out, err := d.emb.DynamoDB.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	return items, nil
}

func (d *demo) expect(ok bool, what string, err error) error {
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("step %d went wrong: %s", d.step, what)
	}
	return nil
}

func (d *demo) title(s string) {
	fmt.Fprintf(d.out, "\n%s\n%s\n", s, strings.Repeat("=", len([]rune(s))))
}

func (d *demo) heading(what, how string) {
	d.step++
	fmt.Fprintf(d.out, "\n[%d] %s   (t=%v)\n    %s\n", d.step, what, d.since(), how)
}

func (d *demo) say(s string) { fmt.Fprintln(d.out, s) }

func (d *demo) since() time.Duration { return time.Since(d.start).Round(100 * time.Millisecond) }

func payment(reference string, amount int) string {
	return fmt.Sprintf(`{"amount": %d, "currency": "EUR", "reference": %q}`, amount, reference)
}

func str(it map[string]ddbtypes.AttributeValue, k string) string {
	if v, ok := it[k].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func num(it map[string]ddbtypes.AttributeValue, k string) int64 {
	if v, ok := it[k].(*ddbtypes.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

func short(id string) string {
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		id = id[i+1:]
	}
	if len(id) > 10 {
		id = id[:10]
	}
	return id
}

func joinIDs(items []map[string]ddbtypes.AttributeValue) string {
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, str(it, "id"))
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

// lockedWriter serializes writes from several emulator processes' pipes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
