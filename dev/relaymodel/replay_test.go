package relaymodel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/testclock"
)

// The model's parameters for the simulations (model/outbox.sh's goal lines)
// and their meaning in the replay: one tick is one minute of the test clock.
const (
	tmax   = 4
	window = 2 // W, in ticks
	tick   = time.Minute
	// skew is the relays' ClockSkew: the model's SKEW is 0, and the relay's
	// zero means its default; a millisecond keeps the margin's comparisons
	// on whole ticks the model's.
	skew     = time.Millisecond
	nmsg     = 2
	none     = 255
	pending  = 1
	recKey   = "order-1"
	seedsEnv = "RELAYMODEL_SEEDS"
)

// start is the replay clock's tick 0.
var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// ev is one "EV pid event op pos now iop istatus ipub idisp" line: the
// actor, the event, its operation and position, and the model's state
// after it.
type ev struct {
	pid                    int
	kind                   string
	op, pos                int
	now, iop, ist, ipub, d int
}

func (e ev) String() string {
	return fmt.Sprintf("%d %s op=%d pos=%d now=%d | iop=%d ist=%d ipub=%d idisp=%d", e.pid, e.kind, e.op, e.pos, e.now, e.iop, e.ist, e.ipub, e.d)
}

// parse reads a simulation's EV lines; anything else (spin's own lines) is
// skipped, an assertion violation is an error (but a goal's, of an aimed
// trail). It reports whether the run
// ended (nothing could move: the model's Check ran its P1).
func parse(out string) ([]ev, bool, error) {
	var evs []ev
	ended := false
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "assertion violated") && !strings.Contains(out, "goalReached") {
			return nil, false, fmt.Errorf("the simulation violated an assertion: %s", strings.TrimSpace(line))
		}
		if strings.TrimSpace(line) == "timeout" {
			ended = true
		}
		f := strings.Fields(line)
		if len(f) != 10 || f[0] != "EV" {
			continue
		}
		var n [8]int
		for i, j := range []int{1, 3, 4, 5, 6, 7, 8, 9} {
			v, err := strconv.Atoi(f[j])
			if err != nil {
				return nil, false, fmt.Errorf("EV line %q: %w", line, err)
			}
			n[i] = v
		}
		evs = append(evs, ev{pid: n[0], kind: f[2], op: n[1], pos: n[2], now: n[3], iop: n[4], ist: n[5], ipub: n[6], d: n[7]})
	}
	return evs, ended, nil
}

// The aimed classes of relay crash.
const (
	crashPublished  = "crash after publishing, before the mark"
	crashDispatched = "crash after the dispatch mark"
	lateMark        = "late mark after the other relay moved on"
	// lateDispatch is no crash: a dispatch answer judged again (finding O1).
	lateDispatch = "late dispatch answer past the window"
)

// allClasses lists the classes counted; each must be reached.
var allClasses = []string{crashPublished, crashDispatched, lateMark, lateDispatch}

// classes names the classes a schedule reaches.
func classes(evs []ev) []string {
	prev := map[int]string{}
	got := map[string]bool{}
	for _, e := range evs {
		switch {
		case e.kind == "crash" && (prev[e.pid] == "land" || prev[e.pid] == "landdup"):
			got[crashPublished] = true
		case e.kind == "crash" && (prev[e.pid] == "dispatch" || prev[e.pid] == "recheckok"):
			got[crashDispatched] = true
		case e.kind == "markrefused":
			got[lateMark] = true
		case e.kind == "recheckaside":
			got[lateDispatch] = true
		}
		prev[e.pid] = e.kind
	}
	var out []string
	for _, c := range allClasses {
		if got[c] {
			out = append(out, c)
		}
	}
	return out
}

// simulate runs spin's random simulation of model/outbox.pml with seed.
func simulate(t *testing.T, model string, seed int) ([]ev, bool) {
	t.Helper()
	cmd := exec.Command("spin", "-n"+strconv.Itoa(seed), "-DTMAX="+strconv.Itoa(tmax), "-DW="+strconv.Itoa(window), model)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spin -n%d: %v\n%s", seed, err, out)
	}
	evs, ended, err := parse(string(out))
	if err != nil {
		t.Fatalf("spin -n%d: %v", seed, err)
	}
	return evs, ended
}

// TestReplayRelayCrashes replays spin simulations of the outbox model
// (seeds 1 to RELAYMODEL_SEEDS, default 120; make model-relay-replay runs
// 1000) against two real relays, counts those that reach each relay crash
// class, and fails on a class no replayed schedule reached.
func TestReplayRelayCrashes(t *testing.T) {
	if _, err := exec.LookPath("spin"); err != nil {
		t.Skip("spin is not installed (make model installs nothing; see docs/testing.md)")
	}
	model, err := filepath.Abs("../../model/outbox.pml")
	if err != nil {
		t.Fatal(err)
	}
	seeds := 120
	if s := os.Getenv(seedsEnv); s != "" {
		if seeds, err = strconv.Atoi(s); err != nil {
			t.Fatalf("%s: %v", seedsEnv, err)
		}
	}
	ep := ddbtest.Start(t)
	count := map[string]int{}
	replayed, ends := 0, 0
	for seed := 1; seed <= seeds; seed++ {
		evs, ended := simulate(t, model, seed)
		cs := classes(evs)
		ok := t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			replay(t, ep, evs, ended)
		})
		if ok {
			replayed++
			if ended {
				ends++
			}
			for _, c := range cs {
				count[c]++
			}
		}
	}
	for _, c := range allClasses {
		t.Logf("%s: %d schedules replayed", c, count[c])
		if count[c] == 0 {
			t.Errorf("no schedule of class %q replayed", c)
		}
	}
	t.Logf("%d of %d simulations replayed, %d to their end (P1 checked on the stored items)", replayed, seeds, ends)
}

// call is one relay's DynamoDB call or publish, held at the gate until the
// replay lets it through (or crashes it).
type call struct {
	kind   string // "get", "update" or "publish"
	update *dynamodb.UpdateItemInput
	get    *dynamodb.GetItemInput
	msg    outbox.Message
	answer chan answer
}

type answer struct {
	get    *dynamodb.GetItemOutput
	update *dynamodb.UpdateItemOutput
	err    error
}

// expr names an update call by its expression.
func (c *call) expr() string {
	if c.update == nil || c.update.UpdateExpression == nil {
		return ""
	}
	return *c.update.UpdateExpression
}

// gate is a relay's client and publisher: every call waits for the replay.
type gate struct{ calls chan *call }

func (g gate) GetItem(ctx context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c := &call{kind: "get", get: in, answer: make(chan answer, 1)}
	g.calls <- c
	a := <-c.answer
	return a.get, a.err
}

func (g gate) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c := &call{kind: "update", update: in, answer: make(chan answer, 1)}
	g.calls <- c
	a := <-c.answer
	return a.update, a.err
}

func (g gate) Publish(ctx context.Context, m outbox.Message) error {
	c := &call{kind: "publish", msg: m, answer: make(chan answer, 1)}
	g.calls <- c
	return (<-c.answer).err
}

var errCrash = errors.New("relaymodel: the relay crashed here")

// driven is one relay under the replay.
type driven struct {
	r       *relay.Relay
	g       gate
	running bool
	done    chan error
	pending *call   // the call waiting at the gate
	held    *answer // the answer to pending's predecessor, not yet returned
	heldTo  *call
}

// player is one schedule's replay.
type player struct {
	t       *testing.T
	ctx     context.Context
	client  *dynamodb.Client
	table   string
	clock   *testclock.Clock
	relays  map[int]*driven
	seen    map[string]time.Time // the target: when it last accepted each id
	ids     map[string][2]int    // message id -> (op, pos)
	copies  map[int]int          // operation -> the position its aside copy holds
	trail   []string
	fromOps map[int]bool // committed operations
}

func committedAt(op int) time.Time { return start.Add(time.Duration(op) * time.Millisecond) }

func messages(op int) []outbox.Message {
	ms := make([]outbox.Message, nmsg)
	for i := range ms {
		ms[i] = outbox.Message{
			ID: outbox.ID(recKey, committedAt(op), i), Position: i, Kind: outbox.KindSQSFIFO,
			Target: "https://sqs.eu-west-1.amazonaws.com/123456789012/accepted.fifo", GroupID: "g",
			Body: fmt.Sprintf("op %d message %d", op, i), Window: window * tick,
		}
	}
	return ms
}

func replay(t *testing.T, ep *ddbtest.Endpoint, evs []ev, ended bool) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &player{
		t: t, ctx: ctx, client: ep.Client(), table: ddbtest.TableName(t, "outbox"), clock: testclock.New(start),
		relays: map[int]*driven{}, seen: map[string]time.Time{}, ids: map[string][2]int{}, copies: map[int]int{}, fromOps: map[int]bool{},
	}
	if err := ddbtest.CreateTable(ctx, p.client, p.table); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		for _, d := range p.relays {
			p.stop(d)
		}
	}()
	for op := 1; op <= 2; op++ {
		for _, m := range messages(op) {
			p.ids[m.ID] = [2]int{op, m.Position}
		}
	}
	for _, e := range evs {
		p.trail = append(p.trail, e.String())
		p.step(e)
		if t.Failed() {
			t.Logf("schedule up to the departure:\n%s", strings.Join(p.trail, "\n"))
			return
		}
		p.compare(e)
		if t.Failed() {
			t.Logf("schedule up to the departure:\n%s", strings.Join(p.trail, "\n"))
			return
		}
	}
	if ended {
		p.delivered()
	}
}

// delivered is the model's P1 on the Go side once the schedule has ended:
// every message of a committed operation reached the target or is held by
// its aside copy (which starts at a position no later than it).
func (p *player) delivered() {
	for op := range p.fromOps {
		for _, m := range messages(op) {
			if _, ok := p.seen[m.ID]; ok {
				continue
			}
			if pos, ok := p.copies[op]; ok && pos <= m.Position {
				continue
			}
			p.t.Errorf("the schedule ended: message %s (operation %d, position %d) committed, never published nor set aside", m.ID, op, m.Position)
		}
	}
}

// stop crashes a relay still running (the end of a schedule): every call
// it makes from here fails.
func (p *player) stop(d *driven) {
	if d.held != nil {
		d.heldTo.answer <- answer{err: errCrash}
		d.held, d.heldTo = nil, nil
	}
	if d.pending != nil {
		d.pending.answer <- answer{err: errCrash}
		d.pending = nil
	}
	for d.running {
		select {
		case c := <-d.g.calls:
			c.answer <- answer{err: errCrash}
		case <-d.done:
			d.running = false
		}
	}
}

func (p *player) driver(pid int) *driven {
	d, ok := p.relays[pid]
	if !ok {
		g := gate{calls: make(chan *call)}
		r, err := relay.New(g, p.table, g, func(o *relay.Options) {
			o.Now = p.clock.Now
			o.PublishTimeout = tick
			o.ClockSkew = skew
		})
		if err != nil {
			p.t.Fatal(err)
		}
		d = &driven{r: r, g: g}
		p.relays[pid] = d
	}
	return d
}

// advance returns the held answer, if any, and waits for the relay's next
// call or its end. With no call pending and the relay stopped, it starts a
// Publish (a delivery of the item's stream record) when begin is set.
func (p *player) advance(d *driven, begin bool) {
	if d.pending != nil {
		return
	}
	if d.held != nil {
		d.heldTo.answer <- *d.held
		d.held, d.heldTo = nil, nil
	} else if !d.running {
		if !begin {
			return
		}
		d.running, d.done = true, make(chan error, 1)
		go func() { d.done <- d.r.Publish(p.ctx, recKey) }()
	}
	select {
	case c := <-d.g.calls:
		d.pending = c
	case err := <-d.done:
		d.running = false
		p.trail = append(p.trail, fmt.Sprintf("  (relay's Publish returned: %v)", err))
	case <-time.After(30 * time.Second):
		p.t.Fatal("the relay neither called nor returned in 30s")
	}
}

// want fails unless the relay waits at a call of kind whose update
// expression is one of exprs (none: any).
func (p *player) want(d *driven, e ev, kind string, exprs ...string) bool {
	p.t.Helper()
	if d.pending == nil {
		p.t.Errorf("model %v: the relay is at no call (returned); want a %s", e, kind)
		return false
	}
	if d.pending.kind != kind {
		p.t.Errorf("model %v: the relay calls %s %q; want a %s %q", e, d.pending.kind, d.pending.expr(), kind, exprs)
		return false
	}
	if len(exprs) == 0 {
		return true
	}
	for _, x := range exprs {
		if d.pending.expr() == x {
			return true
		}
	}
	p.t.Errorf("model %v: the relay's update is %q; want one of %q", e, d.pending.expr(), exprs)
	return false
}

// perform sends the pending call to the endpoint and holds its answer
// until the relay's next event.
func (p *player) perform(d *driven) answer {
	c := d.pending
	var a answer
	switch c.kind {
	case "get":
		a.get, a.err = p.client.GetItem(p.ctx, c.get)
	case "update":
		a.update, a.err = p.client.UpdateItem(p.ctx, c.update)
	}
	d.pending, d.held, d.heldTo = nil, &a, c
	return a
}

// refused reports whether an update's answer is a failed condition.
func refused(a answer) bool {
	var failed *types.ConditionalCheckFailedException
	return errors.As(a.err, &failed)
}

// ends waits for the relay's Publish to return (the model went to "again").
func (p *player) ends(d *driven, e ev) {
	p.t.Helper()
	p.advance(d, false)
	if d.pending != nil {
		p.t.Errorf("model %v: the relay returns; Go's calls %s %q", e, d.pending.kind, d.pending.expr())
	}
}

func (p *player) step(e ev) {
	t := p.t
	switch e.kind {
	case "tick":
		p.clock.Advance(tick)
		return
	case "attcrash":
		return
	case "commit", "refused":
		p.commit(e)
		return
	}
	d := p.driver(e.pid)
	p.advance(d, e.kind == "read")
	switch e.kind {
	case "read":
		if p.want(d, e, "get") {
			if a := p.perform(d); a.err != nil {
				t.Errorf("model %v: GetItem: %v", e, a.err)
			}
			if e.ist != pending || e.iop == 0 {
				p.ends(d, e)
			}
		}
	case "crash":
		if d.pending == nil {
			t.Errorf("model %v: the relay is at no call to crash", e)
			return
		}
		d.pending.answer <- answer{err: errCrash}
		d.pending = nil
		p.ends(d, e)
	case "windowaside", "recheckaside":
		p.want(d, e, "update", outboxitem.AsideUpdate, outboxitem.AsideDispatchedUpdate)
	case "resume", "recheckok":
		p.want(d, e, "publish")
	case "dispatch", "dispatchrefused":
		if p.want(d, e, "update", outboxitem.DispatchUpdate) {
			a := p.perform(d)
			if a.err != nil && !refused(a) {
				t.Errorf("model %v: DispatchUpdate: %v", e, a.err)
			} else if refused(a) != (e.kind == "dispatchrefused") {
				t.Errorf("model %v: DispatchUpdate refused: %v", e, refused(a))
			}
		}
	case "land", "landdup":
		if !p.want(d, e, "publish") {
			return
		}
		c := d.pending
		if got := p.ids[c.msg.ID]; got != [2]int{e.op, e.pos} {
			t.Errorf("model %v: the relay publishes %s (op %d position %d)", e, c.msg.ID, got[0], got[1])
		}
		if !p.fromOps[e.op] {
			t.Errorf("model %v: published a message of operation %d, which never committed", e, e.op)
		}
		now := p.clock.Now()
		first, seen := p.seen[c.msg.ID]
		dup := seen && now.Before(first.Add(window*tick))
		if !dup {
			p.seen[c.msg.ID] = now
		}
		if dup != (e.kind == "landdup") {
			t.Errorf("model %v: the target drops it as a duplicate: %v", e, dup)
		}
		d.pending, d.held, d.heldTo = nil, &answer{}, c
	case "pubfail":
		if p.want(d, e, "publish") {
			d.pending.answer <- answer{err: errors.New("relaymodel: the publish failed before landing")}
			d.pending = nil
			p.ends(d, e)
		}
	case "unpub":
		if p.want(d, e, "publish") {
			c := d.pending
			d.pending, d.held, d.heldTo = nil, &answer{err: fmt.Errorf("relaymodel: refused: %w", outbox.ErrUnpublishable)}, c
		}
	case "mark", "markrefused":
		if p.want(d, e, "update", outboxitem.MarkUpdate, outboxitem.MarkLastUpdate) {
			a := p.perform(d)
			if a.err != nil && !refused(a) {
				t.Errorf("model %v: mark: %v", e, a.err)
			} else if refused(a) != (e.kind == "markrefused") {
				t.Errorf("model %v: mark refused: %v", e, refused(a))
			}
			if e.kind == "mark" && e.ipub == nmsg {
				p.ends(d, e)
			}
		}
	case "copy":
		if p.want(d, e, "update", outboxitem.AsideUpdate, outboxitem.AsideDispatchedUpdate) {
			if a := p.perform(d); a.err != nil && !refused(a) {
				t.Errorf("model %v: the aside copy: %v", e, a.err)
			}
			if _, ok := p.copies[e.op]; !ok {
				p.copies[e.op] = e.pos // the model's copyPos: the first copy's
			}
		}
	case "moved", "movedrefused":
		if p.want(d, e, "update", outboxitem.MovedUpdate) {
			a := p.perform(d)
			if a.err != nil && !refused(a) {
				t.Errorf("model %v: MovedUpdate: %v", e, a.err)
			} else if refused(a) != (e.kind == "movedrefused") {
				t.Errorf("model %v: MovedUpdate refused: %v", e, refused(a))
			}
			if e.kind == "moved" {
				p.ends(d, e)
			}
		}
	default:
		t.Fatalf("model %v: an event this replay does not know", e)
	}
}

// commit writes operation e.op's outbox item as dynamostore's commit does
// (outboxPut: its Put under PutCondition).
func (p *player) commit(e ev) {
	_, err := p.client.PutItem(p.ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(p.table),
		Item:                      outboxitem.Encode(recKey, messages(e.op), committedAt(e.op)),
		ConditionExpression:       aws.String(outboxitem.PutCondition),
		ExpressionAttributeNames:  outboxitem.Names(outboxitem.PutCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{":published": outboxitem.S(outboxitem.Published)},
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case err != nil && !errors.As(err, &failed):
		p.t.Errorf("model %v: the commit: %v", e, err)
	case (err != nil) != (e.kind == "refused"):
		p.t.Errorf("model %v: the commit refused: %v", e, err != nil)
	case err == nil:
		p.fromOps[e.op] = true
	}
}

// compare reads the item under the record key and compares it with the
// model's state after e: whose operation, status, position, first dispatch.
func (p *player) compare(e ev) {
	out, err := p.client.GetItem(p.ctx, &dynamodb.GetItemInput{
		TableName: aws.String(p.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(recKey)},
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if len(out.Item) == 0 {
		if e.iop != 0 {
			p.t.Errorf("model %v: no item stored", e)
		}
		return
	}
	it, err := outboxitem.Decode(out.Item)
	if err != nil {
		p.t.Fatalf("model %v: %v", e, err)
	}
	op := 0
	for o := 1; o <= 2; o++ {
		if it.CommittedAt.Equal(committedAt(o)) {
			op = o
		}
	}
	status := 2
	if it.Status == outboxitem.Pending {
		status = pending
	}
	disp := none
	if !it.DispatchedAt.IsZero() {
		disp = int(it.DispatchedAt.Sub(start) / tick)
		if !it.DispatchedAt.Equal(start.Add(time.Duration(disp) * tick)) {
			disp = -1
		}
	}
	if op != e.iop || status != e.ist || it.Published != e.ipub || disp != e.d {
		p.t.Errorf("model %v: stored item op=%d status=%s(%d) published=%d dispatched=%d", e, op, it.Status, status, it.Published, disp)
	}
	for o, pos := range p.copies {
		got, err := p.client.GetItem(p.ctx, &dynamodb.GetItemInput{
			TableName: aws.String(p.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(outboxitem.AsideKey(recKey, committedAt(o)))},
		})
		if err != nil {
			p.t.Fatal(err)
		}
		if len(got.Item) == 0 {
			p.t.Errorf("model %v: no aside copy of operation %d", e, o)
			continue
		}
		c, err := outboxitem.Decode(got.Item)
		if err != nil {
			p.t.Fatalf("model %v: the aside copy: %v", e, err)
		}
		if c.Status != outboxitem.SetAside || c.Published != pos {
			p.t.Errorf("model %v: the aside copy of operation %d is %s at position %d; want %s at %d", e, o, c.Status, c.Published, outboxitem.SetAside, pos)
		}
	}
}
