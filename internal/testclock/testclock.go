// Package testclock is a manual clock for the Options.Now seams of tests:
// it stands still until a test moves it, and it is safe for concurrent use.
package testclock

import (
	"sync"
	"time"
)

// Clock is a manual clock. The zero value stands at the zero time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
