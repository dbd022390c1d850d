// Package testclock is a manual clock for tests of idempotent handlers: it
// stands still until the test moves it, its timers fire when it is moved past
// them, and it is safe for concurrent use. Give its Now and After to the
// clock seams (lambdaidem.Options.Now and After, the relay's Options.Now) and
// move it past a lease, a hold, a downstream window or the retry horizon
// instead of sleeping:
//
//	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	guard, _ := lambdaidem.New(store, func(o *lambdaidem.Options) {
//		o.Now, o.After = clock.Now, clock.After
//	})
//	...
//	clock.Advance(25 * time.Hour) // past a 24 h window
//
// It imports only the standard library: a test of the library module and a
// user's test import the same clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is a manual clock. The zero value stands at the zero time.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	timers []timer
}

type timer struct {
	at time.Time
	c  chan time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d and fires every timer due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.t) {
			kept = append(kept, tm)
			continue
		}
		tm.c <- c.t // buffered: never blocks
	}
	clear(c.timers[len(kept):])
	c.timers = kept
}

// After returns a channel that receives the clock's time once the clock
// has been moved d past now, like time.After.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.t
		return ch
	}
	c.timers = append(c.timers, timer{at: c.t.Add(d), c: ch})
	return ch
}

// Timers returns how many timers are waiting to fire.
func (c *Clock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
