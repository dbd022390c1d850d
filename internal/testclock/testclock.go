// Package testclock is the library's own tests' name for the exported
// manual clock, [testclock.Clock] of lambdaidem/testclock (one
// implementation).
package testclock

import (
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem/testclock"
)

// Clock is lambdaidem/testclock's Clock.
type Clock = testclock.Clock

// New returns a clock standing at t.
func New(t time.Time) *Clock { return testclock.New(t) }
