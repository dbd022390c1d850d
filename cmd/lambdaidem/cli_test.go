package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func TestExitStatusAndMessageForEachFailure(t *testing.T) {
	w := newWorld(t)
	unknown := w.unknown(t, "charge-1")
	completed := w.completed(t, "charge-2", "ok")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"no command", "", nil, exitUsage, "usage: lambdaidem"},
		{"unknown command", "", []string{"purge"}, exitUsage, `unknown command "purge"`},
		{"unknown flag", "", []string{"list", "--frobnicate"}, exitUsage, "frobnicate"},
		{"unknown table", "", []string{"show", "--table", "no-such-table", unknown}, exitNoTable, `no table "no-such-table" at http://127.0.0.1`},
		{"unknown table (list)", "", []string{"list", "--table", "no-such-table"}, exitNoTable, `no table "no-such-table"`},
		{"table with another key", "", []string{"list", "--key-attr", "pk"}, exitFailure, `partition key "id", the options say "pk"`},
		{"malformed key: no namespace", "", []string{"show", "charge-1"}, exitMalformedKey, "malformed record key"},
		{"malformed key: bad hash", "", []string{"resolve", "--not-done", "lambdaidem#not-a-hash"}, exitMalformedKey, "43-character base64url"},
		{"missing record", "", []string{"show", recordKey("never-sent")}, exitNoRecord, "record not found"},
		{"revision moved on", "", []string{"resolve", "--not-done", "--revision", "AAAAAAAAAAAA", unknown}, exitChanged, "show it again"},
		{"resolving a completed record", "", []string{"resolve", "--done", "--outcome", `"x"`, completed}, exitNotSettle, "is COMPLETED"},
		{"resolve without a verdict", "", []string{"resolve", unknown}, exitUsage, "exactly one of --done and --not-done"},
		{"done without an outcome", "", []string{"resolve", "--done", unknown}, exitUsage, "exactly one of --outcome"},
		{"outcome that is not JSON", "", []string{"resolve", "--done", "--outcome", "{pay", unknown}, exitUsage, "not valid JSON"},
		{"forget not confirmed", "no\n", []string{"forget", unknown}, exitNotConfirmed, "not confirmed; nothing was deleted"},
		{"no table at all", "", []string{"list", "--table", ""}, exitUsage, "pass --table or set IDEMPOTENCY_TABLE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w.cli(t, tc.stdin, tc.args...).expect(t, tc.code, "", tc.stderr)
		})
	}
	// Nothing above wrote: both records are as they were.
	w.cli(t, "", "show", unknown).expect(t, exitOK, "UNKNOWN", "")
	w.cli(t, "", "show", completed).expect(t, exitOK, "COMPLETED", "")
}

func TestKeyIsTheRecordKeyTheLibraryWrites(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"key", "--operation", "CreatePayment", "charge-1"}, recordKey("charge-1")},
		{[]string{"key", "--operation", "CreateOrder", "--namespace", "orders", "--scope", "tenant-7", "m-1"}, lambdaidem.RecordKey("orders", "tenant-7", "CreateOrder", "m-1")},
		{[]string{"key", "--operation", "CreatePayment", "--principal", "user-1", "--route", "POST /payments", "k"}, lambdaidem.RecordKey("lambdaidem", "user-1\nPOST /payments", "CreatePayment", "k")},
		{[]string{"key", "--operation", "CreatePayment", "--anonymous", "--route", "POST /payments", "k"}, lambdaidem.RecordKey("lambdaidem", "\nPOST /payments", "CreatePayment", "k")},
	}
	for _, tc := range tests {
		w.cli(t, "", tc.args...).expect(t, exitOK, tc.want+"\n", "")
	}
	w.cli(t, "", "key", "--operation", "X", "--scope", "s", "--principal", "p", "--route", "r", "k").expect(t, exitUsage, "", "not both")
	w.cli(t, "", "key", "k").expect(t, exitUsage, "", "--operation is required")
	w.cli(t, "", "key", "--operation", "X", "--anonymous", "--principal", "p", "--route", "r", "k").expect(t, exitUsage, "", "--anonymous names a caller without a principal")
	w.cli(t, "", "key", "--operation", "X", "--anonymous", "k").expect(t, exitUsage, "", "--route goes with --principal or --anonymous")
}

func TestShowRedactsTheOutcomeUnlessAsked(t *testing.T) {
	w := newWorld(t)
	key := w.completed(t, "charge-9", "card ending 4242 charged")
	r := w.cli(t, "", "show", key)
	r.expect(t, exitOK, "redacted (--reveal prints it)", "")
	if strings.Contains(r.out, "4242") {
		t.Fatalf("show printed the stored outcome without --reveal:\n%s", r.out)
	}
	for _, want := range []string{"status         COMPLETED", "attempts       1", "operation key  " + lambdaidem.OperationKey(key), "fingerprint    fp"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show lacks %q:\n%s", want, r.out)
		}
	}
	w.cli(t, "", "show", "--reveal", key).expect(t, exitOK, `"card ending 4242 charged"`, "")

	r = w.cli(t, "", "show", "--json", w.unknown(t, "charge-10"))
	var v map[string]any
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.out)
	}
	if v["status"] != "UNKNOWN" || v["external"] != true || v["outcome"] != nil || v["revision"] == "" {
		t.Fatalf("show --json = %v", v)
	}
}

func TestListFindsWhatNeedsALook(t *testing.T) {
	w := newWorld(t)
	var unknowns []string
	for _, k := range []string{"u1", "u2", "u3"} {
		unknowns = append(unknowns, w.unknown(t, k))
	}
	for _, k := range []string{"c1", "c2", "c3", "c4", "c5"} {
		w.completed(t, k, "ok")
	}
	// The command's clock two minutes ahead: the one-minute leases of
	// in-progress records have lapsed.
	later := func(t *testing.T, args ...string) result {
		t.Helper()
		e := w.env(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL})
		var out, errOut strings.Builder
		code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errOut}, e)
		return result{code, out.String(), errOut.String()}
	}
	r := later(t, "list", "--stuck", "--segments", "3")
	r.expect(t, exitOK, "STATUS", "3 records listed")
	for _, k := range unknowns {
		if !strings.Contains(r.out, k) {
			t.Errorf("list --stuck misses %s:\n%s", k, r.out)
		}
	}
	if strings.Contains(r.out, "COMPLETED") {
		t.Errorf("list --stuck lists completed records:\n%s", r.out)
	}
	w.cli(t, "", "list", "--status", "completed").expect(t, exitOK, "COMPLETED", "5 records listed")
	w.cli(t, "", "list", "--status", "DONE").expect(t, exitUsage, "", `--status "DONE"`)
	w.cli(t, "", "list", "--older-than", "1h").expect(t, exitOK, "", "0 records listed")
	w.cli(t, "", "list", "--limit", "2").expect(t, exitOK, "", "2 records listed; stopped at --limit")

	r = w.cli(t, "", "list", "--json", "--status", "UNKNOWN")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 3 {
		t.Fatalf("list --json printed %d lines; want 3:\n%s", len(lines), r.out)
	}
	for _, l := range lines {
		var v struct {
			Key, Status string
			External    bool
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Status != "UNKNOWN" || !v.External {
			t.Fatalf("line %q: %+v, %v", l, v, err)
		}
	}
}

func TestListReportsProgressOnStderr(t *testing.T) {
	w := newWorld(t)
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		w.completed(t, k, "ok")
	}
	e := w.env(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL})
	e.progressEvery = 0 // a line per page
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"list", "--segments", "2"}, streams{in: strings.NewReader(""), out: &out, err: &errOut}, e)
	if code != exitOK || !strings.Contains(errOut.String(), "2 of 2 segments done") || !strings.Contains(errOut.String(), "scanned 6 items") {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
	}
	if strings.Contains(out.String(), "scanned") {
		t.Fatalf("progress went to stdout:\n%s", out.String())
	}
}

func TestResolveSettlesForTheNextRetry(t *testing.T) {
	w := newWorld(t)
	done := w.unknown(t, "charge-done")
	notDone := w.unknown(t, "charge-not-done")
	w.cli(t, "", "resolve", "--done", "--outcome", `"charged by hand"`, done).expect(t, exitOK, "resolved "+done+" as done", "")
	w.cli(t, "", "resolve", "--not-done", notDone).expect(t, exitOK, "as not done: released", "")

	got, err := lambdaidem.Do(context.Background(), w.guard, payCall("charge-done"), func(context.Context) (string, error) {
		t.Error("the handler ran after the record was resolved as done")
		return "", nil
	})
	if err != nil || got != "charged by hand" {
		t.Fatalf("retry = %q, %v; want the resolved outcome", got, err)
	}
	ran := false
	if _, err := lambdaidem.Do(context.Background(), w.guard, payCall("charge-not-done"), func(context.Context) (string, error) {
		ran = true
		return "ok", nil
	}); err != nil || !ran {
		t.Fatalf("retry after not done: ran=%v, %v", ran, err)
	}

	declined := w.unknown(t, "charge-declined")
	w.cli(t, "", "resolve", "--done", "--error-type", "DeclinedError", "--error-message", "card declined", declined).expect(t, exitOK, "as done", "")
	_, err = lambdaidem.Do(context.Background(), w.guard, payCall("charge-declined"), func(context.Context) (string, error) { return "", nil })
	if err == nil || err.Error() != "card declined" {
		t.Fatalf("retry = %v; want the stored terminal error", err)
	}
}

func TestForgetAsksFirst(t *testing.T) {
	w := newWorld(t)
	key := w.completed(t, "k", "ok")
	r := w.cli(t, "no\n", "forget", key)
	r.expect(t, exitNotConfirmed, "", "Type 'forget' to delete it")
	w.cli(t, "", "show", key).expect(t, exitOK, "COMPLETED", "")
	w.cli(t, "forget\n", "forget", key).expect(t, exitOK, "forgot "+key, "")
	w.cli(t, "", "show", key).expect(t, exitNoRecord, "", "record not found")
	key2 := w.completed(t, "k2", "ok")
	w.cli(t, "", "forget", "--yes", key2).expect(t, exitOK, "forgot", "")
}

// racingClient changes the record right after the command has read it, as
// a retry taking it over (or another operator) would.
type racingClient struct {
	dynamostore.RecordsClient
	change func()
}

func (c racingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.RecordsClient.GetItem(ctx, in, optFns...)
	c.change()
	return out, err
}

func TestAChangeBetweenReadAndWriteIsRefused(t *testing.T) {
	for _, args := range [][]string{{"resolve", "--done", "--outcome", `"x"`}, {"resolve", "--not-done"}, {"forget", "--yes"}} {
		t.Run(args[0]+" "+args[1], func(t *testing.T) {
			w := newWorld(t)
			key := w.unknown(t, "charge")
			other, err := dynamostore.NewRecords(w.client, w.table)
			if err != nil {
				t.Fatal(err)
			}
			w.wrap = func(c dynamostore.RecordsClient) dynamostore.RecordsClient {
				return racingClient{c, func() {
					// Another operator resolves it between our read and our write.
					rec, err := other.Read(context.Background(), key)
					if err != nil {
						t.Error(err)
						return
					}
					if rec.Status == lambdaidem.StatusUnknown {
						if err := other.Resolve(context.Background(), rec, dynamostore.Resolution{Now: rec.CreatedAt}); err != nil {
							t.Error(err)
						}
					}
				}}
			}
			w.cli(t, "", append(args, key)...).expect(t, exitChanged, "", "record changed since it was read")
		})
	}
}

// TestSettlingAHeldRecordIsRefused: an UNKNOWN record whose owner renewed a
// minute ago (a Lambda Managed Instances owner: a call it made may still
// land) is shown with its renewal and hold; resolve refuses to settle it
// with exit status 10 and says when it may; --force settles it and says
// what that risks.
func TestSettlingAHeldRecordIsRefused(t *testing.T) {
	w := newWorld(t)
	key := recordKey("held")
	now := time.Now()
	ms := func(t time.Time) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
	}
	if _, err := w.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(w.table), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: key}, "status": &types.AttributeValueMemberS{Value: "UNKNOWN"},
		"attempt": &types.AttributeValueMemberS{Value: "owner"}, "attempts": &types.AttributeValueMemberN{Value: "1"},
		"validation": &types.AttributeValueMemberS{Value: "fp"}, "external": &types.AttributeValueMemberBOOL{Value: true},
		"created_at": ms(now.Add(-2 * time.Minute)), "in_progress_expiration": ms(now.Add(-time.Minute)),
		"renewed_at": ms(now.Add(-time.Minute)), "renews": &types.AttributeValueMemberBOOL{Value: true},
		"hold_until": ms(now.Add(29 * time.Minute)),
	}}); err != nil {
		t.Fatal(err)
	}
	w.cli(t, "", "show", key).expect(t, exitOK, "held until", "")
	w.cli(t, "", "show", key).expect(t, exitOK, "renewed", "")
	w.cli(t, "", "list").expect(t, exitOK, "RENEWED", "")
	w.cli(t, "", "resolve", "--not-done", key).expect(t, exitHeld, "", "settle or forget it after")
	w.cli(t, "", "forget", "--yes", key).expect(t, exitHeld, "", "is held")
	w.cli(t, "", "resolve", "--not-done", "--force", key).expect(t, exitOK, "as not done: released", "may happen twice")
}

// scanSpy records the filter of every Scan the command sends.
type scanSpy struct {
	dynamostore.RecordsClient
	mu      sync.Mutex
	filters []string
}

func (c *scanSpy) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.mu.Lock()
	c.filters = append(c.filters, aws.ToString(in.FilterExpression)+" "+fmt.Sprint(in.ExpressionAttributeValues[":status"]))
	c.mu.Unlock()
	return c.RecordsClient.Scan(ctx, in, optFns...)
}

// TestListEMFReportsTheOldestUnknown: list --emf prints one CloudWatch
// embedded-metric-format line, UnknownAge = the age of the oldest UNKNOWN
// record (emf.Metrics.WriteUnknownAge), under the Service the alarm
// watches, for a scheduled job: the records nobody retries raise the alarm
// too. Completed records, older still, do not count; an empty table writes
// 0; DynamoDB filters the pages to UNKNOWN (statusFilter).
func TestListEMFReportsTheOldestUnknown(t *testing.T) {
	w := newWorld(t)
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	store, err := dynamostore.New(w.client, w.table)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ago time.Duration) *lambdaidem.Guard {
		g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
			o.Lease, o.Renew = time.Minute, lambdaidem.RenewNever
			o.RetryHorizon = 24 * time.Hour
			o.Now = func() time.Time { return now.Add(-ago) }
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	spy := &scanSpy{}
	w.wrap = func(c dynamostore.RecordsClient) dynamostore.RecordsClient { spy.RecordsClient = c; return spy }
	cli := func(args ...string) result {
		e := w.env(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL})
		e.now = func() time.Time { return now }
		var out, errOut strings.Builder
		code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errOut}, e)
		return result{code, out.String(), errOut.String()}
	}
	emfLine := func(r result) map[string]any {
		t.Helper()
		var v map[string]any
		if ls := strings.Split(strings.TrimSpace(r.out), "\n"); len(ls) != 1 || json.Unmarshal([]byte(ls[0]), &v) != nil {
			t.Fatalf("stdout is not one JSON line:\n%s", r.out)
		}
		return v
	}

	r := cli("list", "--emf", "--emf-service", "payments")
	r.expect(t, exitOK, `"UnknownAge":0`, "0 records listed")
	if v := emfLine(r); v["Service"] != "payments" {
		t.Fatalf("EMF line %v; want Service payments", v)
	}

	if _, err := lambdaidem.Do(context.Background(), at(5*time.Hour), payCall("done-long-ago"), func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	var oldest string
	for _, ago := range []time.Duration{time.Hour, 3 * time.Hour, 10 * time.Minute} {
		key := fmt.Sprintf("charge-%v", ago)
		_, err := lambdaidem.Do(context.Background(), at(ago), payCall(key), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				return "", err
			}
			return "", errProviderTimeout
		})
		if !errors.Is(err, errProviderTimeout) {
			t.Fatal(err)
		}
		if ago == 3*time.Hour {
			oldest = recordKey(key)
		}
	}
	spy.filters = nil
	r = cli("list", "--emf", "--emf-service", "payments", "--emf-namespace", "Shop/Idempotency", "--segments", "3")
	r.expect(t, exitOK, `"UnknownAge":10800`, "3 records listed\nthe oldest UNKNOWN record listed is 3h0m0s old: "+oldest+"\n")
	v := emfLine(r)
	cw := v["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if cw["Namespace"] != "Shop/Idempotency" || v["Service"] != "payments" || v["Operation"] != "scan" {
		t.Fatalf("EMF line %v; want namespace Shop/Idempotency, Service payments, Operation scan", v)
	}
	if len(spy.filters) != 3 {
		t.Fatalf("%d scans; want one per segment", len(spy.filters))
	}
	for _, f := range spy.filters {
		if !strings.HasPrefix(f, "#status = :status ") || !strings.Contains(f, "UNKNOWN") {
			t.Fatalf("scan filter %q; want the UNKNOWN status filter", f)
		}
	}

	r = cli("list", "--status", "UNKNOWN")
	r.expect(t, exitOK, "3h0m0s", "the oldest UNKNOWN record listed is 3h0m0s old")
	if strings.Contains(r.out, "COMPLETED") || strings.Count(r.out, "UNKNOWN") != 3 {
		t.Fatalf("list --status UNKNOWN:\n%s", r.out)
	}
	cli("list", "--emf", "--status", "COMPLETED").expect(t, exitUsage, "", "--emf")
	cli("list", "--emf", "--limit", "1").expect(t, exitUsage, "", "--emf")
	cli("list", "--emf", "--emf-namespace", ":bad").expect(t, exitUsage, "", "--emf-namespace")
}
