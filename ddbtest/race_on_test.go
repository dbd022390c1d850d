//go:build race

package ddbtest_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
