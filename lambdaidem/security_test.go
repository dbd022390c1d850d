package lambdaidem_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestFingerprintJSONRejectsTrailingData: a document followed by anything
// but white space is not JSON, and must not fingerprint as the document
// alone; otherwise `{"amount":100}}` or `{"amount":100}]{"amount":999}`
// would be taken for the same intent as `{"amount":100}` and be answered
// with its stored outcome. Found by apigw's FuzzKeyAndFingerprint.
func TestFingerprintJSONRejectsTrailingData(t *testing.T) {
	base, err := lambdaidem.FingerprintJSON([]byte(`{"amount":100}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{`{"amount":100}}`, `{"amount":100}]`, `{"amount":100}]{"amount":999}`, `{"amount":100} x`, `""}`} {
		fp, err := lambdaidem.FingerprintJSON([]byte(doc))
		if err == nil {
			t.Errorf("FingerprintJSON(%#q) = %s, want an error (trailing data)", doc, fp)
		}
		if fp == base {
			t.Errorf("FingerprintJSON(%#q) equals the fingerprint of the document without its trailing data", doc)
		}
	}
	if _, err := lambdaidem.FingerprintJSON([]byte("{\"amount\":100} \n\t")); err != nil {
		t.Errorf("trailing white space is JSON: %v", err)
	}
}

// TestWaitersBounded: with InFlight = Wait, every duplicate of an
// in-flight key polls the store until the first attempt ends, so a client
// (or an attacker) who sends many copies of one request multiplies the
// store reads and holds that many invocations open. A Guard needs a bound,
// Options.MaxWaiters: past it, a duplicate is refused at once with
// ErrInProgress instead of waiting.
func TestWaitersBounded(t *testing.T) {
	const maxWaiters, duplicates = 3, 50
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.InFlight = lambdaidem.Wait
		o.MaxWaiters = maxWaiters
		o.WaitTimeout = time.Minute
		o.Now = time.Now
	})
	claimed, release := make(chan struct{}), make(chan struct{})
	first := make(chan error)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			close(claimed)
			<-release
			return "first", nil
		})
		first <- err
	}()
	<-claimed

	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make(chan error, duplicates)
	for range duplicates {
		wg.Go(func() {
			<-start
			_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
				t.Error("a duplicate ran while the first was in flight")
				return "", nil
			})
			results <- err
		})
	}
	close(start)
	// The refused duplicates return at once; the admitted ones wait.
	refused := 0
	for refused < duplicates-maxWaiters {
		select {
		case err := <-results:
			if !errors.Is(err, lambdaidem.ErrInProgress) {
				t.Fatalf("refused duplicate = %v; want ErrInProgress", err)
			}
			refused++
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d duplicates were refused; want %d (all but MaxWaiters)", refused, duplicates-maxWaiters)
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Fatalf("admitted waiter = %v; want the replay", err)
		}
	}
}
