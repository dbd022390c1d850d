package model

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A class of transitions a replay must reach, aimed at by a reachability
// goal of the model (G_* in record.pml, model/goals.sh): random samples
// rarely reach them (over 1,300 seeds: no MarkUnknown, no resolve --done,
// no "cannot tell"), so a schedule is searched for instead.
type class struct {
	name string
	goal int                // G_<goal> in record.pml
	has  func([]event) bool // the schedule holds the transition
	// bound: the model's parameters that differ from the samples' (NAME=value,
	// as model/goals.sh gives a bound); NATT stays the replay's
	bound []string
}

// noRenews is the bound of the classes searched before the samples renewed
// (the searches stay as they were: renewing owners only widen them).
var noRenews = []string{"RENEWS=0"}

// classes are the transition classes an aimed replay covers, each with
// the event that shows it in a schedule and the bound it is searched at.
var classes = []class{
	{"mark unknown", 5, func(evs []event) bool {
		return anyEvent(evs, func(e event) bool { return e.kind == "w" && e.code == wMarkUnk && e.ok == 1 })
	}, noRenews},
	{"reconcile done", 13, reconciled("done"), noRenews},
	{"reconcile not done", 14, reconciled("notdone"), noRenews},
	{"reconcile cannot tell", 15, reconciled("cannottell"), noRenews},
	{"resolve done", 2, func(evs []event) bool {
		return anyEvent(evs, func(e event) bool { return e.actor == operator && e.kind == "w" && e.code == wDone && e.ok == 1 })
	}, noRenews},
	// at the samples' bound (two faults, the operator) no whole run to it
	// was found within a minute's search; at goals.sh's bound for it, in
	// under a second
	{"optimistic refused", 7, optimisticRefused, []string{"TMAX=3", "FAULTS=0", "OPERATOR=0", "LATE=0", "RENEWS=0"}},
	// a live owner's commit always meets its own claim: the fence refuses
	// only a commit that lands after its client gave up (a late write,
	// which the samples leave out)
	{"lease lost", 8, func(evs []event) bool {
		cf := map[int]bool{}
		return anyEvent(evs, func(e event) bool {
			if e.kind == "cfg" {
				cf[e.actor] = e.cfg["mode"] == 0
			}
			return e.kind == "late" && e.code == lateCommit && e.ok == 0 && cf[e.n]
		})
	}, []string{"TMAX=5", "FAULTS=1", "OPERATOR=0", "LATE=1", "RENEWS=0"}},
	// a renewal sent at the Go renewer's tick applied (record.pml's
	// G_RENEW_APPLIED, under SIM): the stored lease, hold, renewed_at and
	// expiration move. Its refusal (G_RENEW_REFUSED, the lease lost at
	// renewal) has no schedule at this bound: a renewer on time renews a
	// lease nobody may take over yet (model/README.md)
	{"renewal applied", 16, func(evs []event) bool {
		return anyEvent(evs, func(e event) bool { return renewalApplied(e) && e.rec != nil && e.rec.ren != 0 })
	}, nil},
}

// optimisticRefused: an optimistic attempt's commit (the claim and the
// completion in one write) is refused, and the attempt does not answer
// with its own outcome (the refused commit was not its own, applied
// before a lost answer: ownLostCommit)
func optimisticRefused(evs []event) bool {
	opt := map[int]bool{}
	refused := map[int]bool{}
	for _, e := range evs {
		switch {
		case e.kind == "cfg":
			opt[e.actor] = e.cfg["mode"] == 1
		case opt[e.actor] && e.kind == "w" && e.code == wCommit && e.ok == 0 && (e.resend || e.fault == fNone || e.fault == fLostRetry):
			refused[e.actor] = true
		case refused[e.actor] && e.kind == "end" && !(e.n == endAnswer && e.out == e.actor):
			return true
		}
	}
	return false
}

func reconciled(answer string) func([]event) bool {
	return func(evs []event) bool {
		return anyEvent(evs, func(e event) bool { return e.kind == "reconcile" && e.arg == answer })
	}
}

// renewalApplied: a renewal the model's owner sent applied.
func renewalApplied(e event) bool { return e.kind == "w" && e.code == wRenew && e.ok == 1 }

func anyEvent(evs []event, f func(event) bool) bool {
	for _, e := range evs {
		if f(e) {
			return true
		}
	}
	return false
}

// aimed searches the model, at the replay's bound, for a whole run that
// reaches goal (-DGOAL=goal -DGOAL_AT_END: the run's end asserts the goal
// was not reached, so the counterexample is a complete schedule), in the
// search order seed gives (pan -RS with randomized transitions and
// processes), and returns its events. dir is a work folder.
func aimed(pml, dir string, goal int, bound []string, seed int) ([]event, error) {
	flags := append(boundFlags(bound), "-DGOAL="+strconv.Itoa(goal), "-DGOAL_AT_END")
	src, err := os.ReadFile(pml)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "record.pml"), src, 0o644); err != nil {
		return nil, err
	}
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := run("spin", append(append([]string{"-a"}, flags...), "record.pml")...); err != nil {
		return nil, fmt.Errorf("spin -a: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pan")); err != nil {
		if out, err := run("cc", "-O0", "-DSAFETY", "-DHC4", "-DT_RAND", "-DP_RAND", "-DMEMLIM=2000", "-o", "pan", "pan.c"); err != nil {
			return nil, fmt.Errorf("cc: %v\n%s", err, out)
		}
	}
	os.Remove(filepath.Join(dir, "record.pml.trail"))
	out, _ := run("./pan", "-m400000", "-w24", "-E", "-RS"+strconv.Itoa(seed))
	if !strings.Contains(out, "assertion violated  !(goalReached)") {
		return nil, fmt.Errorf("goal %d not reached at the replay's bound (%s):\n%s", goal, strings.Join(flags, " "), out)
	}
	trail, err := run("spin", append(append([]string{"-t"}, flags...), "record.pml")...)
	if err != nil {
		return nil, fmt.Errorf("spin -t: %v\n%s", err, trail)
	}
	return parse(trail)
}

// boundFlags are sampleFlags with the parameters bound sets (NAME=value)
// replaced or added.
func boundFlags(bound []string) []string {
	flags := append([]string{}, sampleFlags...)
	for _, b := range bound {
		name, _, _ := strings.Cut(b, "=")
		replaced := false
		for i, f := range flags {
			if strings.HasPrefix(f, "-D"+name+"=") {
				flags[i], replaced = "-D"+b, true
			}
		}
		if !replaced {
			flags = append(flags, "-D"+b)
		}
	}
	return flags
}
