package streambatch_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// invoke runs one invocation of a batch handler the way the runtime does,
// on its own goroutine. crashed reports an invocation that never answered:
// the handler called runtime.Goexit, which, like a process killed mid-run,
// ends the invocation without releasing or committing anything.
func invoke(ctx context.Context, h func(context.Context, events.KinesisEvent) (events.KinesisEventResponse, error), ev events.KinesisEvent) (resp events.KinesisEventResponse, err error, crashed bool) {
	done := make(chan struct{})
	answered := false
	go func() {
		defer close(done)
		resp, err = h(ctx, ev)
		answered = true
	}()
	<-done
	return resp, err, !answered
}

// crashOnce makes the process die the first time the ledger's handler
// reaches the record with the event id: the handler's goroutine ends
// (runtime.Goexit) and, until the invocation has ended, every store call
// fails, as none gets out of a dead process (the Guard gives the claim back
// when a handler exits without returning; a crash leaves it in progress).
// It returns the store option that makes the store a dead process's, and
// the function that starts a new process after the crash.
func crashOnce(l *ledger, eventID string) (func(*memstore.Options), func()) {
	var crashed, dead atomic.Bool
	l.before = func(_ context.Context, id string) {
		if id == eventID && crashed.CompareAndSwap(false, true) {
			dead.Store(true)
			runtime.Goexit()
		}
	}
	return func(o *memstore.Options) {
			o.Fault = func(string, string) error {
				if dead.Load() {
					return errors.New("the process crashed")
				}
				return nil
			}
		}, func() {
			dead.Store(false)
		}
}

// A crash mid-batch is a function error: Lambda retries the whole batch
// from the last checkpoint, the records that completed before the crash
// included (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html:
// "Lambda treats all other results as a complete failure and retries
// processing the batch"). The retry meets the crashed record in progress
// until its lease lapses.
func TestABatchRedeliveredAfterACrashMidBatch(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	l := newLedger()
	dead, restart := crashOnce(l, ev.Records[2].EventID)
	store := memstore.New(dead)
	g, p := guarded(t, store, func(o *lambdaidem.Options) {
		o.Now = clock.Now
		o.Renew = lambdaidem.RenewNever // standard Lambda: a crashed owner's lease lapses at its deadline
	})
	h := p.Kinesis(l.kinesis)

	if _, _, crashed := invoke(t.Context(), h, ev); !crashed {
		t.Fatal("the first invocation should have crashed at record 2")
	}
	restart()
	if got := l.ran(ev); !slices.Equal(got, []int{1, 1, 0, 0}) {
		t.Fatalf("before the crash: runs %v, want [1 1 0 0]", got)
	}

	// The retry comes at once, while the crashed attempt's lease holds:
	// records 0 and 1 replay, record 2 is in progress and reported, record
	// 3 waits behind it.
	resp, err, _ := invoke(t.Context(), h, ev)
	wantReported(t, resp, err, seqs(ev, 2))

	// Once the lease has lapsed, Lambda's next retry (from the checkpoint
	// at record 2) takes record 2 over.
	clock.Advance(g.Options().Lease + time.Second)
	resp, err, _ = invoke(t.Context(), h, from(ev, 2))
	wantReported(t, resp, err, []string{})
	wantEachOnce(t, l, store, ev)
}

// With BisectBatchOnFunctionError, Lambda splits a batch whose invocation
// failed in two and retries each half, without counting the split against
// MaximumRetryAttempts
// (https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html).
// With InFlight: Wait, the half holding the crashed record waits for its
// lease to lapse and takes it over in the same invocation.
func TestABisectedBatchAfterACrash(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	l := newLedger()
	dead, restart := crashOnce(l, ev.Records[2].EventID)
	store := memstore.New(dead)
	_, p := guarded(t, store, func(o *lambdaidem.Options) {
		o.InFlight = lambdaidem.Wait
		o.LeaseMargin = 100 * time.Millisecond
		o.WaitTimeout = 5 * time.Second
		o.PollInterval = 10 * time.Millisecond
		o.Renew = lambdaidem.RenewNever // standard Lambda: a crashed owner's lease lapses at its deadline
	})
	h := p.Kinesis(l.kinesis)

	// The crashed invocation's deadline makes its lease short.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, _, crashed := invoke(ctx, h, ev); !crashed {
		t.Fatal("the first invocation should have crashed at record 2")
	}
	restart()

	// The first half: both completed before the crash, so both replay.
	first := events.KinesisEvent{Records: ev.Records[:2]}
	resp, err, _ := invoke(t.Context(), h, first)
	wantReported(t, resp, err, []string{})
	// The second half: record 2 is in progress; the retry waits out the
	// lease, takes the record over, and record 3 follows.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	resp, err, _ = invoke(ctx2, h, from(ev, 2))
	wantReported(t, resp, err, []string{})
	wantEachOnce(t, l, store, ev)
}

// Two invocations over the same records at once (a retry that overlaps an
// invocation Lambda gave up on, or two mappings on one stream) never run a
// record twice: the contenders leave together and each record has one
// effect.
func TestConcurrentInvocationsOfOneBatchRunEachRecordOnce(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	store := memstore.New()
	l := newLedger()
	h := newAdapter(t, store).Kinesis(l.kinesis)
	const n = 8
	start := make(chan struct{})
	done := make(chan events.KinesisEventResponse, n)
	for range n {
		go func() {
			<-start
			resp, _, _ := invoke(t.Context(), h, ev)
			done <- resp
		}()
	}
	close(start)
	for range n {
		<-done
	}
	wantEachOnce(t, l, store, ev)
}

// A record whose invocation ends before it runs is reported, so that
// Lambda sends it again; the records before it keep their outcome.
func TestRecordsLeftWhenTheDeadlineComesAreReported(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	ctx, cancel := context.WithCancel(t.Context())
	l := newLedger()
	l.before = func(_ context.Context, id string) {
		if id == ev.Records[1].EventID {
			cancel() // the invocation ends while record 1 runs
		}
	}
	resp, err := newAdapter(t, memstore.New()).Kinesis(l.kinesis)(ctx, ev)
	// Record 1 ran to the end: its commit ignores the cancellation, as
	// finishing writes do. Record 2 is the first not run.
	wantReported(t, resp, err, seqs(ev, 2))
	if l.ran(ev)[3] != 0 {
		t.Fatal("record 3 ran after the invocation ended")
	}
}
