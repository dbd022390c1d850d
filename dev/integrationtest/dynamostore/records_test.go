package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// errProviderTimeout is an ambiguous failure after an external effect began.
var errProviderTimeout = errors.New("payment provider timed out")

// leaveUnknown runs an attempt at key that begins an external effect and
// fails ambiguously: the record is left UNKNOWN.
func leaveUnknown(t *testing.T, g *lambdaidem.Guard, key string) {
	t.Helper()
	_, err := lambdaidem.Do(context.Background(), g, call(key), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", errProviderTimeout
	})
	if !errors.Is(err, errProviderTimeout) {
		t.Fatalf("Do = %v; want the handler's error", err)
	}
}

func (e *env) records(t *testing.T, optFns ...func(*dynamostore.Options)) *dynamostore.Records {
	t.Helper()
	r, err := dynamostore.NewRecords(e.client, e.table, optFns...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordsReadReportsWhatAnOperatorMustKnow(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	leaveUnknown(t, g, "k1")
	r := e.records(t)
	ctx := context.Background()
	if err := r.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}

	rec, err := r.Read(ctx, recordKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != lambdaidem.StatusUnknown || !rec.External || rec.Attempts != 1 || rec.Token == "" || rec.Fingerprint != "fp-k1" {
		t.Fatalf("Read = %+v; want UNKNOWN, external, 1 attempt, a token, the fingerprint", rec)
	}

	tests := []struct {
		name string
		err  error
		call func() error
	}{
		{"missing record", dynamostore.ErrRecordNotFound, func() error { _, err := r.Read(ctx, recordKey("never")); return err }},
		{"key without '#'", dynamostore.ErrMalformedKey, func() error { _, err := r.Read(ctx, "k1"); return err }},
		{"key with a short hash", dynamostore.ErrMalformedKey, func() error { _, err := r.Read(ctx, "lambdaidem#abc"); return err }},
		{"key with an empty namespace", dynamostore.ErrMalformedKey, func() error { _, err := r.Read(ctx, recordKey("k1")[len("lambdaidem"):]); return err }},
		{"unknown table (read)", dynamostore.ErrTableNotFound, func() error {
			other, _ := dynamostore.NewRecords(e.client, "no-such-table")
			_, err := other.Read(ctx, recordKey("k1"))
			return err
		}},
		{"unknown table (check)", dynamostore.ErrTableNotFound, func() error {
			other, _ := dynamostore.NewRecords(e.client, "no-such-table")
			return other.Check(ctx)
		}},
	}
	for _, tc := range tests {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: error = %v; want %v", tc.name, err, tc.err)
		}
	}
	wrongKey, _ := dynamostore.NewRecords(e.client, e.table, func(o *dynamostore.Options) { o.KeyAttr = "pk" })
	if err := wrongKey.Check(ctx); err == nil {
		t.Error("Check accepted options whose key attribute is not the table's")
	}
}

func TestResolveDoneIsReplayedAndNotDoneRunsAgain(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	leaveUnknown(t, g, "done")
	leaveUnknown(t, g, "not-done")

	outcome, err := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"charged by hand"`)})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := r.Read(ctx, recordKey("done"))
	if err := r.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: clk.Now(), ExpiresAt: clk.Now().Add(48 * time.Hour)}); err != nil {
		t.Fatalf("Resolve done: %v", err)
	}
	got, err := lambdaidem.Do(ctx, g, call("done"), func(context.Context) (string, error) {
		t.Error("the handler ran after the record was resolved as done")
		return "", nil
	})
	if err != nil || got != "charged by hand" {
		t.Fatalf("duplicate = %q, %v; want the resolved outcome", got, err)
	}
	after, _ := r.Read(ctx, recordKey("done"))
	if after.Status != lambdaidem.StatusCompleted || after.Token != rec.Token || after.Attempts != rec.Attempts ||
		!after.CreatedAt.Equal(rec.CreatedAt) || after.ExpiresAt.Unix() != clk.Now().Add(48*time.Hour).Unix() {
		t.Fatalf("resolved record %+v; want COMPLETED with the owner's token, attempts, creation time and the new expiration", after)
	}

	rec, _ = r.Read(ctx, recordKey("not-done"))
	if err := r.Resolve(ctx, rec, dynamostore.Resolution{Now: clk.Now()}); err != nil {
		t.Fatalf("Resolve not done: %v", err)
	}
	ran := false
	if _, err := lambdaidem.Do(ctx, g, call("not-done"), func(context.Context) (string, error) { ran = true; return "ok", nil }); err != nil || !ran {
		t.Fatalf("retry after release: ran=%v err=%v; want it to run", ran, err)
	}
}

func TestResolveSettlesOnlyUnknownOrAbandonedExternalRecords(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`1`)})

	// A completed record.
	if _, err := lambdaidem.Do(ctx, g, call("completed"), func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	// In progress, external, owner alive: the handler is still running
	// while the test looks at it.
	inside := make(chan struct{})
	finish := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lambdaidem.Do(ctx, g, call("running"), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				t.Error(err)
			}
			close(inside)
			<-finish
			return "ok", nil
		})
	}()
	<-inside
	running, _ := r.Read(ctx, recordKey("running"))
	completed, _ := r.Read(ctx, recordKey("completed"))

	if err := r.Resolve(ctx, completed, dynamostore.Resolution{Done: true, Outcome: outcome, Now: clk.Now()}); !errors.Is(err, dynamostore.ErrNotSettleable) {
		t.Errorf("completed: Resolve = %v; want ErrNotSettleable", err)
	}
	// Its owner may still be running: held, and the error says until when.
	var held *dynamostore.HeldError
	if err := r.Resolve(ctx, running, dynamostore.Resolution{Done: true, Outcome: outcome, Now: clk.Now()}); !errors.As(err, &held) ||
		!errors.Is(err, dynamostore.ErrHeld) || !held.Until.Equal(r.HoldUntil(running)) {
		t.Errorf("in progress with a live lease: Resolve = %v; want a HeldError until %v", err, r.HoldUntil(running))
	}
	// Once the owner's lease has lapsed (it died after the effect began),
	// the record is as good as UNKNOWN.
	if !r.Judge(running, r.HoldUntil(running).Add(time.Millisecond)).Settleable() {
		t.Error("an external record whose lease lapsed is not settleable")
	}
	noExternal := running
	noExternal.External = false
	if r.Judge(noExternal, r.HoldUntil(running).Add(time.Millisecond)).Settleable() {
		t.Error("a lapsed record without an external effect is settleable; a retry takes it over instead")
	}
	close(finish)
	wg.Wait()
}

// TestSettlingIsFencedOnWhatWasRead changes each attribute the fence
// covers, the way the library's own writes change it, between the
// operator's read and write: the write is refused and the item unchanged.
func TestSettlingIsFencedOnWhatWasRead(t *testing.T) {
	ctx := context.Background()
	changes := []struct {
		name   string
		update string
		value  types.AttributeValue
	}{
		{"another attempt took it over (token)", "SET attempt = :v", &types.AttributeValueMemberS{Value: "someone-else"}},
		{"it was resolved meanwhile (status)", "SET #s = :v", &types.AttributeValueMemberS{Value: "COMPLETED"}},
		{"its expiration moved", "SET expiration = :v", &types.AttributeValueMemberN{Value: "1900000000"}},
		{"its lease was renewed", "SET in_progress_expiration = :v", &types.AttributeValueMemberN{Value: "1900000000000"}},
		// Two renewals capped at MaxRunTime write the same lease: the later
		// one changes only the renewal time and the hold, and it holds the
		// record again (the security review of issue 32).
		{"it was renewed again at the same lease (renewal time)", "SET renewed_at = :v", &types.AttributeValueMemberN{Value: "1900000000000"}},
		{"its hold moved (hold)", "SET hold_until = :v", &types.AttributeValueMemberN{Value: "1900000000000"}},
		{"its external mark changed", "SET #x = :v", &types.AttributeValueMemberBOOL{Value: false}},
		{"its attempt count changed", "SET attempts = :v", &types.AttributeValueMemberN{Value: "7"}},
	}
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"x"`)})
	writes := map[string]func(*dynamostore.Records, lambdaidem.Record, time.Time) error{
		"resolve done": func(r *dynamostore.Records, rec lambdaidem.Record, now time.Time) error {
			return r.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: now})
		},
		"resolve not done": func(r *dynamostore.Records, rec lambdaidem.Record, now time.Time) error {
			return r.Resolve(ctx, rec, dynamostore.Resolution{Now: now})
		},
		"forget": func(r *dynamostore.Records, rec lambdaidem.Record, now time.Time) error {
			return r.Forget(ctx, rec, dynamostore.Forgetting{Now: now})
		},
	}
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	for _, ch := range changes {
		for wname, write := range writes {
			t.Run(ch.name+"/"+wname, func(t *testing.T) {
				key := fmt.Sprintf("%s/%s", ch.name, wname)
				leaveUnknown(t, g, key)
				rec, err := r.Read(ctx, recordKey(key))
				if err != nil {
					t.Fatal(err)
				}
				names := map[string]string{}
				if ch.update == "SET #s = :v" {
					names["#s"] = "status"
				}
				if ch.update == "SET #x = :v" {
					names["#x"] = "external"
				}
				in := &dynamodb.UpdateItemInput{
					TableName:                 aws.String(e.table),
					Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey(key)}},
					UpdateExpression:          aws.String(ch.update),
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": ch.value},
				}
				if len(names) > 0 {
					in.ExpressionAttributeNames = names
				}
				if _, err := e.client.UpdateItem(ctx, in); err != nil {
					t.Fatalf("change: %v", err)
				}
				before := e.record(t, recordKey(key))
				if err := write(r, rec, clk.Now()); !errors.Is(err, dynamostore.ErrRecordChanged) {
					t.Fatalf("%s after the record changed: %v; want ErrRecordChanged", wname, err)
				}
				if after := e.record(t, recordKey(key)); !reflect.DeepEqual(after, before) {
					t.Fatalf("the refused write changed the item:\nbefore %v\nafter  %v", before, after)
				}
			})
		}
	}
	t.Run("unchanged/forget", func(t *testing.T) {
		leaveUnknown(t, g, "unchanged")
		rec, _ := r.Read(ctx, recordKey("unchanged"))
		if err := r.Forget(ctx, rec, dynamostore.Forgetting{Now: clk.Now()}); err != nil {
			t.Fatalf("Forget of an unchanged record: %v", err)
		}
		if _, err := r.Read(ctx, recordKey("unchanged")); !errors.Is(err, dynamostore.ErrRecordNotFound) {
			t.Fatalf("after Forget: %v; want ErrRecordNotFound", err)
		}
	})
}

// TestTwoOperatorsResolvingAtOnce: synchronized operators settle one
// record from the same read, some as done, some as not done; exactly one
// wins and the others are told the record changed.
func TestTwoOperatorsResolvingAtOnce(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	leaveUnknown(t, g, "contended")
	rec, _ := r.Read(ctx, recordKey("contended"))
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"done"`)})
	const n = 8
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = r.Resolve(ctx, rec, dynamostore.Resolution{Done: i%2 == 0, Outcome: outcome, Now: clk.Now()})
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, dynamostore.ErrRecordChanged):
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d operators settled the record; want exactly 1 (%v)", wins, errs)
	}
}

// TestAStalledOwnerReplaysWhatTheOperatorResolved: the owner began its
// effect, stalled past its lease, and the operator resolved the record as
// done; when the owner finally commits it is fenced out and answers with
// the operator's outcome, not its own.
func TestAStalledOwnerReplaysWhatTheOperatorResolved(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"resolved by the operator"`)})
	got, err := lambdaidem.Do(ctx, g, call("stalled"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		clk.Advance(2 * time.Minute) // past the one-minute lease
		rec, err := r.Read(ctx, recordKey("stalled"))
		if err != nil {
			return "", err
		}
		if err := r.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: clk.Now()}); err != nil {
			return "", err
		}
		return "the owner's own answer", nil
	})
	if err != nil || got != "resolved by the operator" {
		t.Fatalf("owner = %q, %v; want the operator's outcome", got, err)
	}
}

func TestScanListsEveryRecordOnceAcrossSegments(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	want := map[string]lambdaidem.Status{}
	for i := range 23 {
		key := fmt.Sprintf("order-%02d", i)
		if i%5 == 0 {
			leaveUnknown(t, g, key)
			want[recordKey(key)] = lambdaidem.StatusUnknown
			continue
		}
		if _, err := lambdaidem.Do(ctx, g, call(key), func(context.Context) (string, error) { return "ok", nil }); err != nil {
			t.Fatal(err)
		}
		want[recordKey(key)] = lambdaidem.StatusCompleted
	}
	// An item that is not a record.
	if _, err := e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "not-a-record"}, "status": &types.AttributeValueMemberN{Value: "1"},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, segments := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d segments", segments), func(t *testing.T) {
			got := map[string]lambdaidem.Status{}
			var malformed []string
			var last dynamostore.ScanProgress
			err := r.Scan(ctx, dynamostore.ScanOptions{
				Segments:  segments,
				PageSize:  3,
				Progress:  func(p dynamostore.ScanProgress) { last = p },
				Malformed: func(key string, err error) { malformed = append(malformed, key) },
			}, func(rec lambdaidem.Record) error {
				if _, dup := got[rec.Key]; dup {
					t.Errorf("%s listed twice", rec.Key)
				}
				got[rec.Key] = rec.Status
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("scan found %v\nwant %v", got, want)
			}
			if fmt.Sprint(malformed) != "[not-a-record]" {
				t.Errorf("malformed items reported: %v", malformed)
			}
			if last.Items != 24 || last.SegmentsDone != segments || last.Segments != segments || last.Pages < 8 {
				t.Errorf("last progress %+v; want 24 items in at least 8 pages, every segment done", last)
			}
		})
	}
	t.Run("an error from fn stops the scan", func(t *testing.T) {
		stop := errors.New("enough")
		n := 0
		err := r.Scan(ctx, dynamostore.ScanOptions{Segments: 4, PageSize: 2}, func(lambdaidem.Record) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 3 {
			t.Fatalf("Scan = %v after %d records; want fn's error after 3", err, n)
		}
	})
}

func TestScanOfASharedTableSkipsOtherItems(t *testing.T) {
	opts := func(o *dynamostore.Options) {
		o.KeyAttr, o.SortKeyAttr, o.SortKeyValue = "pk", "sk", "IDEMPOTENCY"
	}
	e := newEnv(t, opts)
	g := e.guard(t, newClock())
	ctx := context.Background()
	if _, err := lambdaidem.Do(ctx, g, call("a"), func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "CUSTOMER#1"}, "sk": &types.AttributeValueMemberS{Value: "PROFILE"},
	}}); err != nil {
		t.Fatal(err)
	}
	r := e.records(t, opts)
	if err := r.Check(ctx); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := r.Scan(ctx, dynamostore.ScanOptions{Malformed: func(k string, err error) { t.Errorf("malformed %s: %v", k, err) }},
		func(rec lambdaidem.Record) error { keys = append(keys, rec.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != fmt.Sprint([]string{recordKey("a")}) {
		t.Fatalf("scan found %v; want only the record", keys)
	}
}

// TestScanOfOneStatus: ScanOptions.Status lists only the records of that
// status, filtered by DynamoDB (statusFilter; Records does not filter them
// again), across segments and pages, in a table of its own and in one
// shared with other items (currentStatusFilter), where a business item
// with a status attribute of the same value is not a record. It is what
// the lambdaidem command's list --status UNKNOWN and --emf scan.
func TestScanOfOneStatus(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "own table", true: "shared table"}[shared], func(t *testing.T) {
			opts := func(o *dynamostore.Options) {}
			if shared {
				opts = func(o *dynamostore.Options) { o.KeyAttr, o.SortKeyAttr, o.SortKeyValue = "pk", "sk", "IDEMPOTENCY" }
			}
			e := newEnv(t, opts)
			g := e.guard(t, newClock())
			ctx := context.Background()
			want := map[string]bool{}
			for i := range 9 {
				key := fmt.Sprintf("order-%d", i)
				switch i % 3 {
				case 0:
					leaveUnknown(t, g, key)
					want[recordKey(key)] = true
				case 1:
					if _, err := lambdaidem.Do(ctx, g, call(key), func(context.Context) (string, error) { return "ok", nil }); err != nil {
						t.Fatal(err)
					}
				case 2: // a claim whose handler still runs
					release := make(chan struct{})
					running := make(chan struct{})
					done := make(chan struct{})
					go func() {
						defer close(done)
						_, _ = lambdaidem.Do(ctx, g, call(key), func(context.Context) (string, error) { close(running); <-release; return "ok", nil })
					}()
					<-running
					t.Cleanup(func() { close(release); <-done })
				}
			}
			if shared { // a business item with a status attribute, not a record
				if _, err := e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "TICKET#1"}, "sk": &types.AttributeValueMemberS{Value: "TICKET"},
					"status": &types.AttributeValueMemberS{Value: "UNKNOWN"},
				}}); err != nil {
					t.Fatal(err)
				}
			}
			r := e.records(t, opts)
			for _, segments := range []int{1, 3} {
				got := map[string]bool{}
				err := r.Scan(ctx, dynamostore.ScanOptions{Segments: segments, PageSize: 2, Status: lambdaidem.StatusUnknown,
					Malformed: func(k string, err error) { t.Errorf("malformed %s: %v", k, err) }},
					func(rec lambdaidem.Record) error {
						if rec.Status != lambdaidem.StatusUnknown || got[rec.Key] {
							t.Errorf("listed %s (%s) again or of another status", rec.Key, rec.Status)
						}
						got[rec.Key] = true
						return nil
					})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%d segments: scan for UNKNOWN found %v\nwant %v", segments, got, want)
				}
			}
			if err := r.Scan(ctx, dynamostore.ScanOptions{Status: "PAUSED"}, func(lambdaidem.Record) error { return nil }); err == nil {
				t.Fatal("a scan for status PAUSED ran; want an error")
			}
		})
	}
}

// TestSettlingDuringATransactionIsRefused: a reconcile function commits
// the record (with a staged write, so in a transaction) while the operator
// deletes it. DynamoDB refuses the operator's single-item write with
// TransactionConflictException while the transaction is in flight
// (Developer Guide, "Transaction conflict handling in DynamoDB"): the
// record is about to change, so Forget reports ErrRecordChanged, and the
// reconciler's commit stands.
func TestSettlingDuringATransactionIsRefused(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	leaveUnknown(t, g, "in-flight")
	rec, _ := r.Read(ctx, recordKey("in-flight"))
	release := p.HoldNext(t, "TransactWriteItems")
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"reconciled"`)})
	done := make(chan error, 1)
	go func() {
		_, ok, err := e.store.Commit(ctx, lambdaidem.Commit{
			Key: rec.Key, Token: rec.Token, Fingerprint: rec.Fingerprint, Outcome: outcome,
			Now: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour), Attempts: rec.Attempts, CreatedAt: rec.CreatedAt,
			Effects: []any{e.order("o-in-flight")},
		})
		if err == nil && !ok {
			err = errors.New("the reconciler's commit was refused")
		}
		done <- err
	}()
	waitUntil(t, "the transaction to get in flight", func() bool { return p.InFlight() > 0 })
	if err := r.Forget(ctx, rec, dynamostore.Forgetting{Now: clk.Now()}); !errors.Is(err, dynamostore.ErrRecordChanged) {
		t.Fatalf("Forget during the transaction = %v; want ErrRecordChanged", err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if after, err := r.Read(ctx, recordKey("in-flight")); err != nil || after.Status != lambdaidem.StatusCompleted {
		t.Fatalf("after: %+v, %v; want the reconciler's COMPLETED record", after, err)
	}
}

// TestSettlingRetriesATransactionConflict: an operator's write meets a
// transaction in flight on the record (TransactionConflictException, which
// the SDK does not retry) that is then cancelled: a stale attempt's commit,
// fenced on a token the record no longer holds. Records retries the
// conflict as the Store does, so the record, unchanged, is settled; before,
// the first conflict was reported as ErrRecordChanged.
func TestSettlingRetriesATransactionConflict(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	clk := newClock()
	g := e.guard(t, clk)
	r := e.records(t)
	ctx := context.Background()
	leaveUnknown(t, g, "contended")
	rec, _ := r.Read(ctx, recordKey("contended"))
	release := p.HoldNext(t, "TransactWriteItems")
	stale := make(chan error, 1)
	go func() {
		_, ok, err := e.store.Commit(ctx, lambdaidem.Commit{
			Key: rec.Key, Token: "a-stale-attempt", Fingerprint: rec.Fingerprint, Outcome: []byte(`{"value":"stale"}`),
			Now: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour), Attempts: rec.Attempts, CreatedAt: rec.CreatedAt,
			Effects: []any{e.order("o-stale")},
		})
		if err == nil && ok {
			err = errors.New("the stale attempt's commit went through")
		}
		stale <- err
	}()
	waitUntil(t, "the transaction to get in flight", func() bool { return p.InFlight() > 0 })
	puts := p.Count("PutItem")
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"charged"`)})
	resolved := make(chan error, 1)
	go func() {
		resolved <- r.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: clk.Now()})
	}()
	waitUntil(t, "the operator's write to meet the transaction", func() bool { return p.Count("PutItem") > puts })
	release()
	if err := <-stale; err != nil {
		t.Fatal(err)
	}
	if err := <-resolved; err != nil {
		t.Fatalf("Resolve after the conflicting transaction was cancelled = %v; want it settled", err)
	}
	if after, err := r.Read(ctx, recordKey("contended")); err != nil || after.Status != lambdaidem.StatusCompleted || after.Token != rec.Token {
		t.Fatalf("after: %+v, %v; want COMPLETED under the owner's token", after, err)
	}
}

// TestSettlingRefusesALateRenewalAtTheSameLease: the security review's case
// of issue 32. A renewing owner's two renewals are capped at its MaxRunTime,
// so both ask for the same lease. The operator reads the record after the
// first renewal's hold has ended (an external record nobody runs: settleable),
// then the second renewal, sent before that lease ended and applied by
// DynamoDB late, holds the record again with only its renewal time and hold
// changed. resolve --not-done must then be refused: the owner may still be
// running, and its effect may still land.
func TestSettlingRefusesALateRenewalAtTheSameLease(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	r := e.records(t)
	const maxRun = 10 * time.Minute
	t0 := time.Unix(1_800_000_000, 0)
	key := recordKey("late-renewal")
	lease := t0.Add(maxRun) // both renewals capped here
	claim := lambdaidem.Claim{Key: key, Token: "A", Now: t0, LeaseUntil: lease, Renews: true,
		HoldUntil: t0.Add(maxRun), ExpiresAt: t0.Add(horizon)}
	if _, ok, err := e.store.Claim(ctx, claim); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if ok, err := e.store.MarkExternal(ctx, lambdaidem.Fence{Key: key, Token: "A", Now: t0}); err != nil || !ok {
		t.Fatalf("MarkExternal = %v, %v", ok, err)
	}
	renewal := func(at time.Time) lambdaidem.Renewal {
		return lambdaidem.Renewal{Key: key, Token: "A", Now: at, LeaseUntil: lease, HoldUntil: at.Add(maxRun), External: true}
	}
	first, second := renewal(t0.Add(8*time.Minute)), renewal(t0.Add(9*time.Minute))
	if ok, err := e.store.Renew(ctx, first); err != nil || !ok {
		t.Fatalf("first Renew = %v, %v", ok, err)
	}
	// The operator reads after the first renewal's hold has ended.
	now := first.HoldUntil.Add(time.Second)
	rec, err := r.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Judge(rec, now); !v.Settleable() {
		t.Fatalf("verdict at the operator's read: %v; want settleable", v)
	}
	// The second renewal lands now: the same lease, a later renewal and hold.
	if ok, err := e.store.Renew(ctx, second); err != nil || !ok {
		t.Fatalf("late Renew = %v, %v", ok, err)
	}
	if err := r.Resolve(ctx, rec, dynamostore.Resolution{Now: now}); !errors.Is(err, dynamostore.ErrRecordChanged) {
		t.Fatalf("resolve --not-done after a renewal at the same lease: %v; want ErrRecordChanged", err)
	}
	after, err := r.Read(ctx, key)
	if err != nil {
		t.Fatalf("the record is gone after the refused resolve: %v", err)
	}
	if v := r.Judge(after, now); v != lambdaidem.VerdictHeld {
		t.Fatalf("verdict after the late renewal: %v; want held", v)
	}
}
