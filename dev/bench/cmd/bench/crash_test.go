package main

import (
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/dev/chaos"
)

func TestCrashSectionAndTarget(t *testing.T) {
	rep := &report{crash: &crashResults{
		keys:      20,
		ours:      chaos.CrashResult{Keys: 20, Effects: 20},
		theirs:    chaos.CrashResult{Keys: 20, Effects: 40, Duplicates: 20},
		ptVersion: "2.35.0",
	}}
	tg := rep.crashTarget()
	if !tg.known || !tg.met || tg.measured != "lambdaidem 0 for 20 crashed keys (Powertools 20 for 20)" {
		t.Fatalf("target = %+v", tg)
	}
	var b strings.Builder
	rep.writeCrash(&b)
	for _, want := range []string{
		"## 4. Crash after the business write",
		"| lambdaidem (claim-first, DynamoDB store) | 20 | 20 | **0** | identical |",
		"| Powertools for AWS Lambda (TypeScript) | 20 | 40 | **20** | identical |",
		"here 40 items for 20 keys",
		"`TransactWriteItems`",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}

	// A duplicate on lambdaidem's side misses the target; Powertools not run is reported, not hidden.
	rep.crash.ours = chaos.CrashResult{Keys: 20, Effects: 21, Duplicates: 1, Mismatched: 1}
	rep.crash.theirsErr = "node is not installed"
	if tg := rep.crashTarget(); !tg.known || tg.met || strings.Contains(tg.measured, "Powertools") {
		t.Fatalf("target = %+v", tg)
	}
	b.Reset()
	rep.writeCrash(&b)
	for _, want := range []string{"differ for 1 of 20 keys", "not measured: node is not installed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
	if (&report{}).crashTarget().known {
		t.Error("a skipped crash phase reads as measured")
	}
}
