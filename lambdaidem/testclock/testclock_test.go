package testclock

import (
	"sync"
	"testing"
	"time"
)

// TestAdvanceFiresDueTimers: a timer fires once the clock is moved to or
// past it, never before, and After(0) fires at once.
func TestAdvanceFiresDueTimers(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	early, late := c.After(time.Minute), c.After(time.Hour)
	select {
	case <-c.After(0):
	default:
		t.Fatal("After(0) did not fire at once")
	}
	c.Advance(59 * time.Second)
	select {
	case <-early:
		t.Fatal("a timer fired before its time")
	default:
	}
	c.Advance(time.Second)
	if got := <-early; !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("the timer received %v", got)
	}
	if c.Timers() != 1 {
		t.Fatalf("Timers() = %d after one fired; want 1", c.Timers())
	}
	c.Advance(2 * time.Hour)
	<-late
	if !c.Now().Equal(start.Add(time.Minute + 2*time.Hour)) {
		t.Fatalf("Now() = %v", c.Now())
	}
}

// TestConcurrentUse: timers set and the clock moved from many goroutines
// at once (run with -race); every timer fires.
func TestConcurrentUse(t *testing.T) {
	c := New(time.Unix(0, 0))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ch := c.After(time.Duration(i+1) * time.Second)
			for {
				select {
				case <-ch:
					return
				default:
					c.Advance(time.Second)
					_ = c.Now()
				}
			}
		})
	}
	wg.Wait()
}
