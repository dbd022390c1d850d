package ddbtest_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Contend gives the in-process endpoint DynamoDB's order of latency: a
// call takes milliseconds, not the emulator's microseconds.
func TestContendAddsLatency(t *testing.T) {
	kit := ddbtest.NewKit(t)
	kit.Endpoint.RequireProxy(t)
	kit.Contend()
	// The fastest of several calls: load can only slow a call down, so
	// only the added latency keeps the fastest above 5 ms.
	fastest := time.Hour
	for range 20 {
		start := time.Now()
		if _, err := kit.Client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(kit.Table)}); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Since(start))
	}
	if fastest < 5*time.Millisecond {
		t.Fatalf("the fastest of 20 calls took %v; want the 5 ms Contend adds", fastest)
	}
}

// How docs/testing.md makes contenders really race on one key: released
// together by closing a channel, the endpoint at DynamoDB's latency
// (kit.Contend), and the first attempt's handler held until the others
// have answered. Every other contender then meets the first one's claim:
// refused as in progress (HTTP 409), none replaying a record that was
// already complete; one run, one commit.
func TestContendersRace(t *testing.T) {
	const n = 8
	kit := ddbtest.NewKit(t)
	kit.Contend()
	guard, err := lambdaidem.New(kit.Store)
	if err != nil {
		t.Fatal(err)
	}
	call := lambdaidem.Call[string]{Operation: "CreateOrder", Key: "o-1", Fingerprint: "fp"}
	var runs, inProgress atomic.Int32
	othersAnswered := make(chan struct{})
	var answered atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := lambdaidem.Do(context.Background(), guard, call, func(context.Context) (string, error) {
				runs.Add(1)
				select { // hold the claim until the others have met it
				case <-othersAnswered:
				case <-time.After(10 * time.Second):
				}
				return "order o-1", nil
			})
			switch {
			case errors.Is(err, lambdaidem.ErrInProgress):
				inProgress.Add(1)
			case err != nil:
				t.Errorf("contender: %v", err)
			}
			if answered.Add(1) == n-1 {
				close(othersAnswered)
			}
		}()
	}
	close(start)
	wg.Wait()
	if runs.Load() != 1 || inProgress.Load() != n-1 {
		t.Fatalf("%d runs, %d refused in progress; want 1 and %d", runs.Load(), inProgress.Load(), n-1)
	}
}
