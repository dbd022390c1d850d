// Package rolling_test runs v0.2.0 and this version of the library side by
// side on one table, as a rolling deploy does (a Lambda weighted alias or a
// CodeDeploy canary serves both versions for minutes): the same keys from
// both, in both orders, one after the other, while the other runs, and at
// once. v0.2.0 is built from this repository's history (the "release
// v0.2.0" commit, or its tag) through a module proxy in a folder
// (dev/tools/modproxy), as a user would get it; this version from the
// working tree. Both run the same program (driver/) in their own process.
package rolling_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// released is the version beside which this one must run.
const released = "v0.2.0"

// drivers are the two builds of driver/, by version name.
var drivers = map[string]string{}

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "rolling")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code, err := buildDrivers(tmp)
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "rolling:", err)
	}
	_ = exec.Command("chmod", "-R", "u+w", tmp).Run() // the module cache is read-only
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// buildDrivers builds driver/ against this version and against released.
// Without the release commit in the history (a shallow clone) it reports
// the skip and returns 0, except under CI, which must run it.
func buildDrivers(tmp string) (int, error) {
	cur, err := goBuild(".", filepath.Join(tmp, "main"), nil, "./driver")
	if err != nil {
		return 1, err
	}
	drivers["main"] = cur
	top, err := output(".", nil, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return 1, err
	}
	rev := releaseCommit(top)
	if rev == "" {
		if os.Getenv("CI") != "" {
			return 1, fmt.Errorf("no %s tag or 'release %s' commit in the history: CI needs a full clone", released, released)
		}
		fmt.Printf("rolling: skipped: no %s in this clone's history (shallow?)\n", released)
		return 0, fmt.Errorf("skipped")
	}
	clone := filepath.Join(tmp, "clone")
	if _, err := output(".", nil, "git", "clone", "-q", "--no-checkout", top, clone); err != nil {
		return 1, err
	}
	modproxy, err := goBuild(".", filepath.Join(tmp, "modproxy"), nil, "../../tools/modproxy")
	if err != nil {
		return 1, err
	}
	proxy := filepath.Join(tmp, "goproxy")
	if _, err := output(".", nil, modproxy, "-repo", clone, "-out", proxy, "-version", released, "-rev", rev, "."); err != nil {
		return 1, err
	}
	// A module that requires the release, fetched from the folder proxy;
	// third-party modules from this machine's module cache first.
	old := filepath.Join(tmp, "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		return 1, err
	}
	src, err := os.ReadFile("driver/main.go")
	if err != nil {
		return 1, err
	}
	gomod := "module example.com/rolling/old\n\ngo 1.26\n\nrequire github.com/lambdaidem/lambdaidem " + released + "\n"
	if err := os.WriteFile(filepath.Join(old, "go.mod"), []byte(gomod), 0o644); err != nil {
		return 1, err
	}
	if err := os.WriteFile(filepath.Join(old, "main.go"), src, 0o644); err != nil {
		return 1, err
	}
	cache, err := output(".", nil, "go", "env", "GOMODCACHE")
	if err != nil {
		return 1, err
	}
	ambient, err := output(".", nil, "go", "env", "GOPROXY")
	if err != nil {
		return 1, err
	}
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod -modcacherw", "GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=file://" + proxy + ",file://" + filepath.Join(cache, "cache", "download") + "," + ambient,
		"GONOSUMDB=github.com/lambdaidem/lambdaidem", "GOPRIVATE=", "GONOPROXY="}
	if _, err := output(old, env, "go", "mod", "tidy"); err != nil {
		return 1, err
	}
	bin, err := goBuild(old, filepath.Join(tmp, released), env, ".")
	if err != nil {
		return 1, err
	}
	drivers[released] = bin
	return 0, nil
}

// releaseCommit is the commit of the release: its tag, else the commit
// that made it.
func releaseCommit(top string) string {
	if c, err := output(top, nil, "git", "rev-parse", "-q", "--verify", "refs/tags/"+released+"^{commit}"); err == nil && c != "" {
		return c
	}
	c, _ := output(top, nil, "git", "log", "-1", "--format=%H", "--grep=^release "+released+"$")
	return c
}

func goBuild(dir, out string, env []string, pkg string) (string, error) {
	_, err := output(dir, env, "go", "build", "-o", out, pkg)
	return out, err
}

func output(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(b)), nil
}

// world is one set of tables on the test endpoint: the idempotency
// table, the handler's effects and the outbox.
type world struct {
	ep                     *ddbtest.Endpoint
	client                 *dynamodb.Client
	table, effects, outbox string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ep := ddbtest.Start(t)
	w := &world{ep: ep, client: ep.Client(), table: ddbtest.TableName(t, "idem"), effects: ddbtest.TableName(t, "effects"),
		outbox: ddbtest.TableName(t, "outbox")}
	ctx := context.Background()
	for _, table := range []string{w.table, w.effects, w.outbox} {
		if err := ddbtest.CreateTable(ctx, w.client, table); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// relay runs version's driver as the outbox relay of key's record and
// returns the messages published so far into file.
func (w *world) relay(t *testing.T, version, key, file string) []map[string]string {
	t.Helper()
	out, err := output(".", nil, drivers[version], "-endpoint", w.ep.URL, "-outbox", w.outbox,
		"-relay", lambdaidem.RecordKey("lambdaidem", "", "Pay", key), "-published", file)
	if err != nil || !strings.Contains(out, `"out":"published"`) {
		t.Fatalf("%s relay on %s: %s, %v", version, key, out, err)
	}
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var msgs []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("published %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

type result struct {
	Out, Kind, Err string
}

// run runs version's driver on key with the flags given.
func (w *world) run(t *testing.T, version, key string, flags ...string) result {
	t.Helper()
	args := append([]string{"-endpoint", w.ep.URL, "-table", w.table, "-effects", w.effects, "-key", key, "-by", version}, flags...)
	out, err := output(".", nil, drivers[version], args...)
	if err != nil {
		t.Fatalf("%s driver: %v", version, err)
	}
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s driver printed %q: %v", version, out, err)
	}
	if r.Kind == "error" {
		t.Fatalf("%s driver on %s: %s", version, key, r.Err)
	}
	return r
}

// effects lists the ids of the effects committed for key.
func (w *world) effectsOf(t *testing.T, key string) []string {
	t.Helper()
	out, err := w.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.effects), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, item := range out.Items {
		if k, ok := item["key"].(*types.AttributeValueMemberS); ok && k.Value == key {
			ids = append(ids, item["id"].(*types.AttributeValueMemberS).Value)
		}
	}
	return ids
}

// orders are the two versions, each first once.
var orders = [][2]string{{released, "main"}, {"main", released}}

// TestRollingDeployReplaysAcrossVersions: an operation one version
// completed is replayed by the other, whose handler does not run; a
// different payload under the key is refused by the other.
func TestRollingDeployReplaysAcrossVersions(t *testing.T) {
	w := newWorld(t)
	for _, o := range orders {
		t.Run(o[0]+" first", func(t *testing.T) {
			key := "replay-" + o[0]
			first := w.run(t, o[0], key)
			if first.Out == "" || first.Kind != "" {
				t.Fatalf("%s: %+v; want an outcome", o[0], first)
			}
			if again := w.run(t, o[1], key); again.Out != first.Out {
				t.Fatalf("%s after %s: %+v; want the replay of %q", o[1], o[0], again, first.Out)
			}
			if ids := w.effectsOf(t, key); len(ids) != 1 || ids[0] != first.Out {
				t.Fatalf("effects %v; want only %s's", ids, o[0])
			}
			if other := w.run(t, o[1], key, "-fp", "another payload"); other.Kind != "key-reused" {
				t.Fatalf("%s with another payload: %+v; want key-reused", o[1], other)
			}
		})
	}
}

// TestRollingDeployInProgressAcrossVersions: while one version's handler
// runs, the other version's duplicate is told it is in progress (it does
// not run), and replays the outcome once the first has committed.
func TestRollingDeployInProgressAcrossVersions(t *testing.T) {
	w := newWorld(t)
	for _, o := range orders {
		t.Run(o[0]+" running", func(t *testing.T) {
			key := "running-" + o[0]
			started := filepath.Join(t.TempDir(), "started")
			done := make(chan result, 1)
			go func() {
				done <- w.run(t, o[0], key, "-hold", "2s", "-started", started)
			}()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s's handler did not start", o[0])
				}
			}
			if dup := w.run(t, o[1], key); dup.Kind != "in-progress" {
				t.Fatalf("%s while %s runs: %+v; want in-progress", o[1], o[0], dup)
			}
			first := <-done
			if again := w.run(t, o[1], key); again.Out != first.Out || first.Out == "" {
				t.Fatalf("%s after %s committed %q: %+v; want the replay", o[1], o[0], first.Out, again)
			}
			if ids := w.effectsOf(t, key); len(ids) != 1 {
				t.Fatalf("effects %v; want one", ids)
			}
		})
	}
}

// TestRollingDeployContendersAcrossVersions: contenders of both versions,
// started together on one key (each waits at a start line), commit one
// effect; every other one is in progress or replays that effect.
func TestRollingDeployContendersAcrossVersions(t *testing.T) {
	w := newWorld(t)
	for round := range 3 {
		key := fmt.Sprintf("contended-%d", round)
		line := filepath.Join(t.TempDir(), "go")
		var wg sync.WaitGroup
		results := make([]result, 4)
		for i := range results {
			version := orders[i%2][0]
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = w.run(t, version, key, "-go", line, "-hold", "200ms")
			}()
		}
		time.Sleep(time.Second) // every driver waits at the line
		if err := os.WriteFile(line, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		ids := w.effectsOf(t, key)
		if len(ids) != 1 {
			t.Fatalf("round %d: effects %v from %+v; want one", round, ids, results)
		}
		for i, r := range results {
			if r.Kind != "in-progress" && r.Out != ids[0] {
				t.Fatalf("round %d: contender %d (%s): %+v; want in progress or %q", round, i, orders[i%2][0], r, ids[0])
			}
		}
	}
}

// TestRollingDeployOutbox: a message one version's handler committed to
// the outbox is published once by the other version's relay (the items
// have one layout), and a second pass publishes nothing more.
func TestRollingDeployOutbox(t *testing.T) {
	w := newWorld(t)
	for _, o := range orders {
		t.Run(o[0]+" commits, "+o[1]+" relays", func(t *testing.T) {
			key := "outbox-" + o[0]
			res := w.run(t, o[0], key, "-outbox", w.outbox)
			if res.Out == "" {
				t.Fatalf("%s: %+v", o[0], res)
			}
			file := filepath.Join(t.TempDir(), "published")
			w.relay(t, o[1], key, file)
			msgs := w.relay(t, o[1], key, file)
			if len(msgs) != 1 || msgs[0]["body"] != res.Out {
				t.Fatalf("%s relay published %v; want one message with body %q", o[1], msgs, res.Out)
			}
		})
	}
}

// TestRollingDeploySetAsideDoesNotBlockOldWriters: this version's relay
// sets aside a message its target refuses every time (the original item is
// marked published, the copy kept under its aside key); a v0.2.0 writer's
// new operation under the same record key, once the first has expired, then
// commits (its outbox Put's condition admits a published item) and a v0.2.0
// relay publishes its message.
func TestRollingDeploySetAsideDoesNotBlockOldWriters(t *testing.T) {
	w := newWorld(t)
	const key = "aside"
	first := w.run(t, "main", key, "-outbox", w.outbox, "-horizon", "1s")
	if first.Out == "" {
		t.Fatalf("main: %+v", first)
	}
	refusing := outbox.PublisherFunc(func(context.Context, outbox.Message) error { return outbox.ErrUnpublishable })
	r, err := relay.New(w.client, w.outbox, refusing)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(context.Background(), lambdaidem.RecordKey("lambdaidem", "", "Pay", key)); !errors.Is(err, relay.ErrSetAside) {
		t.Fatalf("this version's relay on a refused message: %v; want it set aside", err)
	}
	aside, err := relay.ListSetAside(context.Background(), w.client, w.outbox)
	if err != nil || len(aside) != 1 {
		t.Fatalf("set aside: %v, %v; want one item", aside, err)
	}
	time.Sleep(2 * time.Second) // the first operation's record expires (its horizon is 1 s)
	second := w.run(t, released, key, "-outbox", w.outbox)
	if second.Out == "" || second.Out == first.Out {
		t.Fatalf("%s's new operation under the key: %+v; want it run and committed", released, second)
	}
	msgs := w.relay(t, released, key, filepath.Join(t.TempDir(), "published"))
	if len(msgs) != 1 || msgs[0]["body"] != second.Out {
		t.Fatalf("%s relay published %v; want the new operation's message", released, msgs)
	}
}
