package lambdaidem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A retry horizon shorter than the lease must not let the in-progress record
// expire while its lease still runs: a duplicate would claim the "absent"
// record and run the handler a second time, concurrently.
func TestReviewInProgressOutlivesShortHorizon(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.RetryHorizon = time.Minute }) // lease: 15m, no deadline
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			close(started)
			<-release
			return "first", nil
		})
		done <- err
	}()
	<-started
	f.clock.Advance(2 * time.Minute) // past the horizon, well within the lease
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return "second", nil
	})
	close(release)
	if !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Fatalf("duplicate during a live lease = %v; want ErrInProgress (the handler ran twice)", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first attempt = %v", err)
	}
}
