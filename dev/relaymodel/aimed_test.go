package relaymodel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// aim is a schedule searched for (breadth first: the shortest) instead of
// sampled: a state of the model's globals that only a run through the
// class reaches, given as a never claim (spin -N, the model unchanged), or
// one of the model's goals (-DGOAL=id, model/outbox.sh's goal lines).
type aim struct {
	class string
	claim string // a Promela expression over outbox.pml's globals
	goal  int
}

// aims: each class at the first and the second message's position; the
// late mark by the goal G_LATE_MARK (its EV line prints before the goal's
// assertion stops the trail). A crash after the dispatch mark: still inside
// the window at the dispatch's tick (now == idisp: the recheck admits it)
// and nothing set aside, so that the crash is the publish's.
var aims = []aim{
	{class: crashPublished, claim: "crashes == 1 && got[0] && iop == 1 && ipub == 0 && istatus == 1"},
	{class: crashPublished, claim: "crashes == 1 && got[1] && iop == 1 && ipub == 1 && istatus == 1"},
	{class: crashDispatched, claim: "crashes == 1 && idisp != 255 && now == idisp && copyPos[1] == 255 && !got[0] && iop == 1 && ipub == 0 && istatus == 1"},
	{class: crashDispatched, claim: "crashes == 1 && idisp != 255 && now == idisp && copyPos[1] == 255 && !got[1] && iop == 1 && ipub == 1 && istatus == 1"},
	{class: lateMark, goal: 3},
}

// search runs the aimed search and returns its trail's EV lines.
func search(t *testing.T, model string, a aim) []ev {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outbox.pml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-DTMAX=" + strconv.Itoa(tmax), "-DW=" + strconv.Itoa(window)}
	if a.goal != 0 {
		flags = append(flags, "-DGOAL="+strconv.Itoa(a.goal))
	} else {
		claim := "never {\n\tdo\n\t:: (" + a.claim + ") -> break\n\t:: else\n\tod\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "claim.pml"), []byte(claim), 0o644); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "-N", "claim.pml")
	}
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run("spin", slices.Concat([]string{"-a"}, flags, []string{"outbox.pml"})...)
	run("cc", "-O1", "-DBFS", "-DSAFETY", "-DMEMLIM=1000", "-o", "pan", "pan.c")
	out := run("./pan", "-E")
	if _, err := os.Stat(filepath.Join(dir, "outbox.pml.trail")); err != nil {
		t.Fatalf("the search for %q found no trail:\n%s", a.class, out)
	}
	evs, _, err := parse(run("spin", slices.Concat([]string{"-t"}, flags, []string{"outbox.pml"})...))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestReplayAimed searches the outbox model for a schedule through each
// relay crash class (aims), checks that it holds the class, and replays it
// against two real relays as TestReplayRelayCrashes does. It compiles pan:
// make model-relay-replay runs it (RELAYMODEL_AIMED=1).
func TestReplayAimed(t *testing.T) {
	if os.Getenv("RELAYMODEL_AIMED") == "" {
		t.Skip("aimed searches compile pan: make model-relay-replay runs them (RELAYMODEL_AIMED=1)")
	}
	for _, tool := range []string{"spin", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	model, err := filepath.Abs("../../model/outbox.pml")
	if err != nil {
		t.Fatal(err)
	}
	ep := ddbtest.Start(t)
	count := map[string]int{}
	for i, a := range aims {
		evs := search(t, model, a)
		if !slices.Contains(classes(evs), a.class) {
			t.Errorf("aim %d (%q): the trail does not hold the class:\n%v", i, a.class, evs)
			continue
		}
		if t.Run("aim"+strconv.Itoa(i), func(t *testing.T) { replay(t, ep, evs, false) }) {
			count[a.class]++
		}
		t.Logf("aim %d (%s): %d events replayed", i, a.class, len(evs))
	}
	for _, c := range []string{crashPublished, crashDispatched, lateMark} {
		t.Logf("%s: %d aimed schedules replayed", c, count[c])
		if count[c] == 0 {
			t.Errorf("no aimed schedule of class %q replayed", c)
		}
	}
}
