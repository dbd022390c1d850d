//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// TestEndToEnd drives the example functions from outside, as AWS would: an
// HTTP client in front of the payments API, a producer in front of the
// orders queue, and the tables read afterwards.
func TestEndToEnd(t *testing.T) {
	s := startStack(t)

	t.Run("payments", func(t *testing.T) {
		t.Run("a POST and its retry make one payment and the retry gets the stored response", func(t *testing.T) {
			ref, key := unique("retry"), unique("key")
			body := paymentBody(ref, 1250)

			first := s.postPayment(t, s.apiURL, key, body)
			if first.Status != http.StatusCreated || first.replayed() {
				t.Fatalf("first POST: want 201, not replayed; got %s (replayed=%v)", first, first.replayed())
			}
			retry := s.postPayment(t, s.apiURL, key, body)
			if retry.Status != http.StatusCreated || !retry.replayed() {
				t.Fatalf("retry: want 201 with Idempotent-Replayed: true; got %s (replayed=%v)", retry, retry.replayed())
			}
			if retry.Body != first.Body || retry.Header.Get("Location") != first.Header.Get("Location") {
				t.Fatalf("retry: want the first response replayed\nfirst: %s\nretry: %s", first, retry)
			}
			if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); n != 1 {
				t.Fatalf("payments with reference %s: want 1, got %d", ref, n)
			}
		})

		concurrent := func(t *testing.T, base string) {
			if s.emb != nil {
				// A DynamoDB round trip of 10ms, as in a region, so that the
				// contenders overlap the winner's claim-to-commit window.
				s.emb.DynamoDB.Proxy.SetLatency(10 * time.Millisecond)
				t.Cleanup(func() { s.emb.DynamoDB.Proxy.SetLatency(0) })
			}
			const n = 20
			ref, key := unique("burst"), unique("key")
			body := paymentBody(ref, 990)
			replies := make([]reply, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start // all contenders leave together
					replies[i], errs[i] = s.tryPost(t.Context(), base, key, body)
				})
			}
			close(start)
			wg.Wait()

			created, inProgress := 0, 0
			var createdBody string
			for i, r := range replies {
				if errs[i] != nil {
					t.Fatalf("contender %d: %v", i, errs[i])
				}
				switch r.Status {
				case http.StatusCreated:
					if created > 0 && r.Body != createdBody {
						t.Fatalf("two different 201 bodies:\n%s\n%s", createdBody, r.Body)
					}
					created++
					createdBody = r.Body
				case http.StatusConflict:
					inProgress++
					if r.Header.Get("Retry-After") == "" {
						t.Errorf("409 without Retry-After: %s", r)
					}
				default:
					t.Fatalf("contender %d: want 201 or 409 (in progress), got %s", i, r)
				}
			}
			t.Logf("%d contenders: %d got 201 (one created, the rest replayed), %d got 409 in progress", n, created, inProgress)
			if created == 0 {
				// Every contender overlapped the winner: its retry replays.
				r := s.postPayment(t, base, key, body)
				if r.Status != http.StatusCreated || !r.replayed() {
					t.Fatalf("retry after the burst: want a replayed 201, got %s", r)
				}
			}
			if got := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); got != 1 {
				t.Fatalf("payments with reference %s: want exactly 1, got %d", ref, got)
			}
		}
		t.Run("20 concurrent duplicates on scaled-out instances make one payment", func(t *testing.T) {
			concurrent(t, s.apiURL)
		})
		t.Run("20 concurrent duplicates in one Lambda Managed Instances process make one payment", func(t *testing.T) {
			if s.managedAPIURL == "" {
				t.Skip(s.managedWhy)
			}
			concurrent(t, s.managedAPIURL)
		})
		t.Run("a charge that outlives its timeout in one Lambda Managed Instances process is made once", func(t *testing.T) {
			managedChargeOutlivesTimeout(t, s)
		})

		t.Run("8 duplicates while the first request's commit is in flight get no 5xx, make one payment, then the replay", func(t *testing.T) {
			emb := s.needFaults(t)
			ref, key := unique("held"), unique("key")
			body := paymentBody(ref, 3100)
			// The first request's commit stays in flight in the test endpoint
			// for 1.5s: the duplicates' claims meet DynamoDB's
			// TransactionConflictException (HTTP 400, not retried by the SDK).
			var held atomic.Bool
			emb.DynamoDB.Proxy.Inject(ddbtest.Rule{Op: "TransactWriteItems", Hold: 1500 * time.Millisecond, Times: 1,
				Match: func(b []byte) bool { return strings.Contains(string(b), ref) && held.CompareAndSwap(false, true) }})
			conflictsBefore := emb.DynamoDB.Proxy.Conflicts()
			first := make(chan reply, 1)
			go func() { first <- s.postPayment(t, s.apiURL, key, body) }()
			eventually(t, 10*time.Second, 5*time.Millisecond, "the first request's commit is in flight", held.Load)

			const n = 8
			replies := make([]reply, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { replies[i], errs[i] = s.tryPost(t.Context(), s.apiURL, key, body) })
			}
			wg.Wait()
			created := <-first
			if created.Status != http.StatusCreated || created.replayed() {
				t.Fatalf("the first request: want 201, not replayed; got %s", created)
			}
			statuses := map[int]int{}
			for i, r := range replies {
				if errs[i] != nil {
					t.Fatalf("duplicate %d: %v", i, errs[i])
				}
				statuses[r.Status]++
				switch {
				case r.Status == http.StatusConflict && r.Header.Get("Retry-After") != "":
				case r.Status == http.StatusCreated && r.replayed() && r.Body == created.Body:
				default:
					t.Errorf("duplicate %d: want 409 with Retry-After or the replayed 201, got %s", i, r)
				}
			}
			t.Logf("%d duplicates during the held commit: %v; the endpoint refused %d writes for a transaction conflict",
				n, statuses, emb.DynamoDB.Proxy.Conflicts()-conflictsBefore)
			if emb.DynamoDB.Proxy.Conflicts() == conflictsBefore {
				t.Error("no duplicate met the held commit: the scenario tested nothing")
			}
			if got := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); got != 1 {
				t.Fatalf("payments with reference %s: want exactly 1, got %d", ref, got)
			}
			again := s.postPayment(t, s.apiURL, key, body)
			if again.Status != http.StatusCreated || !again.replayed() || again.Body != created.Body {
				t.Fatalf("a retry after the commit: want the 201 replayed, got %s", again)
			}
		})

		t.Run("the same key with another body gets 422 and never the first payment", func(t *testing.T) {
			ref, key := unique("reuse"), unique("key")
			first := s.postPayment(t, s.apiURL, key, paymentBody(ref, 1000))
			if first.Status != http.StatusCreated {
				t.Fatalf("first POST: want 201, got %s", first)
			}
			other := unique("other")
			r := s.postPayment(t, s.apiURL, key, paymentBody(other, 2000))
			if r.Status != http.StatusUnprocessableEntity || r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("want 422 application/problem+json, got %s", r)
			}
			problemType(t, r)
			if r.Body == first.Body || r.replayed() {
				t.Fatalf("the 422 must not reveal the stored response: %s", r)
			}
			if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); n != 1 {
				t.Fatalf("payments for the first body: want 1, got %d", n)
			}
			if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", other)); n != 0 {
				t.Fatalf("payments for the other body: want 0, got %d", n)
			}
		})

		t.Run("a client that gives up after the commit gets the payment replayed on its retry", func(t *testing.T) {
			// An invocation runs to its end after its caller has gone (Lambda
			// does not stop a running invocation, nor does the emulator): a
			// client deadline shorter than the round trip, on a warm
			// connection, leaves a committed payment whose answer nobody read.
			// The deadline doubles until one gives up after the request left.
			warm := s.postPayment(t, s.apiURL, unique("warm"), paymentBody(unique("warm"), 100))
			if warm.Status != http.StatusCreated {
				t.Fatalf("warm-up POST: want 201, got %s", warm)
			}
			for d := 5 * time.Millisecond; d <= 2*time.Second; d *= 2 {
				ref, key := unique("gaveup"), unique("key")
				body := paymentBody(ref, 3100)
				ctx, cancel := context.WithTimeout(t.Context(), d)
				r, err := s.tryPost(ctx, s.apiURL, key, body)
				cancel()
				if err == nil {
					t.Skipf("answered (%d) within %v before any shorter deadline left a committed payment behind", r.Status, d)
				}
				committed := false
				for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait) && !committed; time.Sleep(100 * time.Millisecond) {
					committed = len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)) == 1
				}
				if !committed {
					t.Logf("gave up after %v before the request reached the function", d)
					continue
				}
				retry := s.postPayment(t, s.apiURL, key, body)
				if retry.Status != http.StatusCreated || !retry.replayed() {
					t.Fatalf("the retry after a client gave up at %v, once its payment was committed: want a replayed 201, got %s", d, retry)
				}
				if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); n != 1 {
					t.Fatalf("payments: want exactly 1, got %d", n)
				}
				t.Logf("the client gave up after %v; the function committed; the retry was replayed", d)
				return
			}
			t.Fatal("no deadline up to 2s cut a request off after it reached the function")
		})

		t.Run("a POST cut off by the Lambda timeout after its claim, retried after the lease lapses, makes one payment", func(t *testing.T) {
			emb := s.needFaults(t)
			ref, key := unique("cutoff"), unique("key")
			body := paymentBody(ref, 4200)
			// The function claims the key, then stalls on its commit (the
			// transaction that writes the payment) until the emulator kills it
			// at its timeout.
			emb.DynamoDB.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: ref})

			began := time.Now()
			cut := s.postPayment(t, s.apiURL, key, body)
			if cut.Status != http.StatusInternalServerError || cut.Header.Get("X-E2e-Function-Error") != "Sandbox.Timedout" {
				t.Fatalf("want 500 from a function cut off at its timeout, got %s (function error %q)", cut, cut.Header.Get("X-E2e-Function-Error"))
			}
			if held, _ := emb.DynamoDB.Hold.Stats(); held == 0 {
				t.Fatal("the commit was never stalled: the function did not reach its commit")
			}
			if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); n != 0 {
				t.Fatalf("payments after the cut-off: want 0, got %d", n)
			}

			early := s.postPayment(t, s.apiURL, key, body)
			if early.Status != http.StatusConflict {
				t.Fatalf("a retry while the lease holds: want 409 in progress, got %s", early)
			}
			t.Logf("retry at %v: 409, Retry-After %s", time.Since(began).Round(time.Millisecond), early.Header.Get("Retry-After"))

			final := early
			for i := 0; final.Status == http.StatusConflict; i++ {
				if i == 20 {
					t.Fatalf("still in progress after 20 retries: %s", final)
				}
				time.Sleep(retryAfter(final))
				final = s.postPayment(t, s.apiURL, key, body)
			}
			if final.Status != http.StatusCreated || final.replayed() {
				t.Fatalf("the retry after the lease lapsed: want a normal (not replayed) 201, got %s", final)
			}
			t.Logf("retry at %v took the lapsed lease over: %d", time.Since(began).Round(time.Millisecond), final.Status)
			if n := len(itemsWhere(t, s.ddb, s.paymentsTable, "reference", ref)); n != 1 {
				t.Fatalf("payments: want exactly 1, got %d", n)
			}
			again := s.postPayment(t, s.apiURL, key, body)
			if again.Status != http.StatusCreated || !again.replayed() || again.Body != final.Body {
				t.Fatalf("a later retry: want the 201 replayed, got %s", again)
			}
		})
	})

	t.Run("orders", func(t *testing.T) {
		// The three scenarios share the queue and run side by side, as
		// unrelated traffic would; each waits only for its own messages.
		redelivery := s.maxReceive * int(s.visibility/time.Second+1)
		deadline := time.Duration(redelivery)*time.Second + 30*time.Second

		t.Run("a message sent twice makes one order", func(t *testing.T) {
			t.Parallel()
			id := unique("order")
			body := orderBody(id)
			m1 := sendOrder(t, s, body)
			m2 := sendOrder(t, s, body)
			eventually(t, deadline, 100*time.Millisecond, "the order is written and both messages are processed", func() bool {
				_, ok := order(t, s, id)
				if s.emb == nil {
					return ok
				}
				return ok && s.deleted(m1) && s.deleted(m2)
			})
			it, _ := order(t, s, id)
			if got := it["customer"]; got == nil {
				t.Fatalf("order %s lacks its customer: %v", id, it)
			}
		})

		t.Run("a batch redelivered after the function crashed mid-batch makes one order each", func(t *testing.T) {
			t.Parallel()
			emb := s.needFaults(t)
			ids := make([]string, 5)
			entries := make([]sqstypes.SendMessageBatchRequestEntry, 5)
			for i := range ids {
				ids[i] = unique("batch")
				entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(ids[i]), MessageBody: aws.String(orderBody(ids[i]))}
			}
			// The function crashes (its process is killed) when it reaches the
			// commit of the third order: whatever the batch committed before
			// stays, the third order's record is left in progress.
			emb.DynamoDB.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: ids[2], OnHold: func() {
				if err := emb.Orders.KillRuntime(); err != nil {
					t.Errorf("crash the function: %v", err)
				}
			}})
			out, err := s.sqs.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
			if err != nil || len(out.Successful) != len(entries) {
				t.Fatalf("send the batch: %v (%d sent)", err, len(out.Successful))
			}
			msgIDs := make([]string, 0, len(out.Successful))
			for _, r := range out.Successful {
				msgIDs = append(msgIDs, aws.ToString(r.MessageId))
			}
			eventually(t, deadline, 100*time.Millisecond, "every order is written and every message processed", func() bool {
				for _, m := range msgIDs {
					if !s.deleted(m) {
						return false
					}
				}
				return true
			})
			for _, id := range ids {
				if _, ok := order(t, s, id); !ok {
					t.Errorf("order %s missing", id)
				}
			}
			crashed := false
			for _, b := range emb.Poller.Batches() {
				if b.Invocation.FunctionError == "Runtime.ExitError" && slices.ContainsFunc(msgIDs, func(m string) bool { return slices.Contains(b.MessageIDs, m) }) {
					crashed = true
				}
			}
			if !crashed {
				t.Fatal("no batch of these messages crashed: the fault never fired")
			}
			for i, m := range msgIDs {
				t.Logf("order %d received %d time(s)", i+1, emb.Poller.Received(m))
			}
		})

		t.Run("a message the handler always rejects ends in the dead-letter queue after maxReceiveCount receives", func(t *testing.T) {
			t.Parallel()
			body := `{"order_id": "` + unique("bad") + `", "customer": "", "items": [], "total": 0}`
			m := sendOrder(t, s, body)
			eventually(t, deadline, 250*time.Millisecond, "the message reaches the dead-letter queue", func() bool {
				return findInDLQ(t, s, body)
			})
			if s.emb != nil {
				if got := s.emb.Poller.Received(m); got != s.maxReceive {
					t.Fatalf("the function saw the message %d times, want maxReceiveCount = %d", got, s.maxReceive)
				}
			}
		})
	})
}

// deleted reports whether the embedded poller deleted the message as
// processed.
func (s *stack) deleted(messageID string) bool {
	for _, b := range s.emb.Poller.Batches() {
		if slices.Contains(b.Deleted, messageID) {
			return true
		}
	}
	return false
}
