package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The expiration is stored in whole seconds and the lease in milliseconds.
// With a retry horizon shorter than the lease, an in-progress record must
// still not read as expired while its lease runs, up to the last millisecond.
func TestLeaseOutlivesExpirationInWholeSeconds(t *testing.T) {
	e := newEnv(t)
	base := time.Now().Truncate(time.Second)
	clk := testclock.New(base)
	g := e.guard(t, clk, func(o *lambdaidem.Options) {
		o.RetryHorizon = 10 * time.Second
		o.LeaseMargin = 5 * time.Second
	})
	ctx, cancel := context.WithDeadline(context.Background(), base.Add(30*time.Second+700*time.Millisecond))
	defer cancel() // lease: base + 35.7s
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(ctx, g, call("k"), func(ctx context.Context) (string, error) {
			close(started)
			<-release
			return "first", nil
		})
		done <- err
	}()
	<-started
	clk.Advance(35*time.Second + 300*time.Millisecond) // inside the lease
	_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		return "second", nil
	})
	close(release)
	if !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Fatalf("duplicate inside the lease = %v; want ErrInProgress (the handler ran twice)", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first attempt = %v", err)
	}
}
