package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// str reads a String attribute of an item ("" if absent).
func str(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// TestUnpublishableIsSetAside: the FIFO queue refuses the second message
// every time (outbox.ErrUnpublishable). The relay sets the item aside
// instead of failing the stream record until the mapping gives up: the
// record succeeds, the original item is PUBLISHED (with a TTL) naming its
// copy, the copy is SET_ASIDE with the reason from that message on, one
// OutboxSetAside metric is written, and a new operation under the record
// key commits (before, the outbox Put's condition refused it as a business
// ConditionFailedError). The operator lists the copy, releases it, and the
// relay publishes the rest under the original ids.
func TestUnpublishableIsSetAside(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	m, err := emf.New(&metrics, func(o *emf.Options) { o.Service = "relay" })
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(e.client, e.outbox, e.targets, func(o *relay.Options) { o.Now = e.clock.Now; o.Retention = retention; o.Metrics = m })
	if err != nil {
		t.Fatal(err)
	}
	e.targets.set(func(m outbox.Message) error {
		if m.Kind == outbox.KindSQSFIFO {
			return fmt.Errorf("InvalidParameterValue: %w", outbox.ErrUnpublishable)
		}
		return nil
	}, nil)
	if failed := e.handle(t, r, e.change(t, "INSERT", k)); len(failed) != 0 {
		t.Fatalf("reported %v; a set-aside item must not hold the shard", failed)
	}
	orig := e.item(t, k)
	aside := str(orig, "set_aside")
	if str(orig, "status") != "PUBLISHED" || aside == "" || orig["expiration"] == nil {
		t.Fatalf("original item %v; want PUBLISHED, naming its copy, with a TTL", orig)
	}
	cp := e.item(t, aside)
	if str(cp, "status") != "SET_ASIDE" || str(cp, "record") != k || !strings.Contains(str(cp, "reason"), "InvalidParameterValue") {
		t.Fatalf("copy %v; want SET_ASIDE for the record with the reason", cp)
	}
	if got := strings.Count(metrics.String(), `"OutboxSetAside":1`); got != 1 {
		t.Errorf("%d OutboxSetAside metrics; want 1: %s", got, metrics.String())
	}
	// A new operation under the record key commits.
	e.clock.Advance(2 * time.Hour)
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err == nil {
		t.Fatal("the order was written twice") // the orders table's condition
	} else if strings.Contains(err.Error(), e.outbox) {
		t.Fatalf("a later commit under the key = %v; refused on the outbox table", err)
	}
	g := e.guard(t)
	if _, err := lambdaidem.Do(context.Background(), g, call("o-1"), func(ctx context.Context) (string, error) {
		_, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "again"})
		return "ok", err
	}); err != nil {
		t.Fatalf("a later commit under the key = %v", err)
	}
	// The operator.
	list, err := relay.ListSetAside(context.Background(), e.client, e.outbox)
	if err != nil || len(list) != 1 || list[0].Key != aside || list[0].Position != 1 || list[0].Record != k {
		t.Fatalf("ListSetAside = %+v, %v", list, err)
	}
	e.targets.set(nil, nil)
	if err := relay.Release(context.Background(), e.client, e.outbox, list[0], false); err != nil {
		t.Fatal(err)
	}
	if err := relay.Release(context.Background(), e.client, e.outbox, list[0], false); !errors.Is(err, relay.ErrNotSetAside) {
		t.Errorf("a second release of what was read = %v; want ErrNotSetAside", err)
	}
	if failed := e.handle(t, r, e.change(t, "MODIFY", aside)); len(failed) != 0 {
		t.Fatalf("reported %v", failed)
	}
	if str(e.item(t, aside), "status") != "PUBLISHED" {
		t.Errorf("the released copy is %s; want PUBLISHED", str(e.item(t, aside), "status"))
	}
	opKey := lambdaidem.OperationKey(k)
	want := "sqs:" + outbox.ID(opKey, start, 0) + " sqs:" + outbox.ID(opKey, start, 0) + " sqs-fifo:" + outbox.ID(opKey, start, 1) + " item:" + outbox.ID(opKey, start, 2)
	// The first send of the FIFO message was refused before it was sent.
	if got := ids(e.targets.sent()); !strings.HasSuffix(got, "sqs-fifo:"+outbox.ID(opKey, start, 1)+" item:"+outbox.ID(opKey, start, 2)) {
		t.Errorf("published %s; want the rest under the original ids (%s)", got, want)
	}
}

// TestWindowPassedIsSetAside: a FIFO message whose first send's answer was
// lost and whose window has since passed (less the margin) is set aside,
// not retried; released as it is, it is set aside again in place (its
// window still counts); released with resend, it is published.
func TestWindowPassedIsSetAside(t *testing.T) {
	e := newEnv(t)
	k := e.fifoAnswerLost(t, "o-1")
	e.targets.set(nil, nil)
	e.clock.Advance(outbox.FIFOWindow)
	if err := e.relay.Publish(context.Background(), k); !errors.Is(err, relay.ErrSetAside) || !errors.Is(err, outbox.ErrWindowPassed) && !strings.Contains(err.Error(), "deduplicates for") {
		t.Fatalf("Publish = %v; want ErrSetAside saying the window passed", err)
	}
	list, err := relay.ListSetAside(context.Background(), e.client, e.outbox)
	if err != nil || len(list) != 1 || list[0].DispatchedAt.IsZero() {
		t.Fatalf("ListSetAside = %+v, %v; want the copy with its first dispatch", list, err)
	}
	if err := relay.Release(context.Background(), e.client, e.outbox, list[0], false); err != nil {
		t.Fatal(err)
	}
	if err := e.relay.Publish(context.Background(), list[0].Key); !errors.Is(err, relay.ErrSetAside) {
		t.Fatalf("released without resend: Publish = %v; want set aside again", err)
	}
	again, err := relay.ReadSetAside(context.Background(), e.client, e.outbox, list[0].Key)
	if err != nil || again.Key != list[0].Key {
		t.Fatalf("ReadSetAside = %+v, %v; want the same copy, set aside in place", again, err)
	}
	if err := relay.Release(context.Background(), e.client, e.outbox, again, true); err != nil {
		t.Fatal(err)
	}
	if err := e.relay.Publish(context.Background(), list[0].Key); err != nil {
		t.Fatalf("released with resend: Publish = %v", err)
	}
	if status, _, _ := e.state(t, list[0].Key); status != "PUBLISHED" {
		t.Errorf("copy %s; want PUBLISHED", status)
	}
}

// TestDiscardSetAside: a discarded copy is PUBLISHED with a TTL and sends
// nothing.
func TestDiscardSetAside(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	e.targets.set(func(outbox.Message) error { return outbox.ErrUnpublishable }, nil)
	if err := e.relay.Publish(context.Background(), k); !errors.Is(err, relay.ErrSetAside) {
		t.Fatalf("Publish = %v", err)
	}
	list, err := relay.ListSetAside(context.Background(), e.client, e.outbox)
	if err != nil || len(list) != 1 || list[0].Position != 0 {
		t.Fatalf("ListSetAside = %+v, %v", list, err)
	}
	if err := relay.Discard(context.Background(), e.client, e.outbox, list[0], e.clock.Now(), retention); err != nil {
		t.Fatal(err)
	}
	if status, _, exp := e.state(t, list[0].Key); status != "PUBLISHED" || exp == "" {
		t.Errorf("discarded copy %s, expiration %q; want PUBLISHED with a TTL", status, exp)
	}
	if n := len(e.targets.sent()); n != 0 {
		t.Errorf("%d sends; want none", n)
	}
}

// TestRefusedAfterALostAnswerKeepsItsWindow: the FIFO message's first send
// was delivered but its answer lost (its first dispatch is recorded); the
// next try is refused every time (the relay's permission was withdrawn,
// say). The message may have reached the queue, so the copy keeps its
// first dispatch: released without resend once the window has passed, it
// is set aside again rather than delivered a second time past the queue's
// deduplication. Before, a refusal dropped the first dispatch and the
// release delivered the message twice.
func TestRefusedAfterALostAnswerKeepsItsWindow(t *testing.T) {
	e := newEnv(t)
	k := e.fifoAnswerLost(t, "o-1")
	e.targets.set(func(m outbox.Message) error {
		if m.Kind == outbox.KindSQSFIFO {
			return fmt.Errorf("AccessDenied: %w", outbox.ErrUnpublishable)
		}
		return nil
	}, nil)
	if err := e.relay.Publish(context.Background(), k); !errors.Is(err, relay.ErrSetAside) || !errors.Is(err, outbox.ErrUnpublishable) {
		t.Fatalf("Publish = %v; want ErrSetAside for a refusal", err)
	}
	list, err := relay.ListSetAside(context.Background(), e.client, e.outbox)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListSetAside = %+v, %v", list, err)
	}
	if list[0].DispatchedAt.IsZero() {
		t.Errorf("the copy forgot the first dispatch of a message that may have been delivered")
	}
	e.targets.set(nil, nil)
	e.clock.Advance(outbox.FIFOWindow)
	if err := relay.Release(context.Background(), e.client, e.outbox, list[0], false); err != nil {
		t.Fatal(err)
	}
	if err := e.relay.Publish(context.Background(), list[0].Key); !errors.Is(err, relay.ErrSetAside) {
		t.Errorf("released without resend past the window: Publish = %v; want set aside again", err)
	}
	e.targets.mu.Lock()
	delivered := len(e.targets.fifo)
	e.targets.mu.Unlock()
	if delivered != 1 {
		t.Errorf("the FIFO queue delivered the message %d times; want 1", delivered)
	}
}

// fifoAnswerLost commits order key and runs the relay once on it, with
// the FIFO message delivered and its answer lost: the item stays pending
// at that message, its first dispatch recorded. It returns the record key.
func (e *env) fifoAnswerLost(t *testing.T, key string) string {
	t.Helper()
	k := recordKey(key)
	if err := e.accept(context.Background(), e.guard(t), key); err != nil {
		t.Fatal(err)
	}
	e.targets.set(nil, func(m outbox.Message) error {
		if m.Kind == outbox.KindSQSFIFO {
			return errors.New("answer lost")
		}
		return nil
	})
	e.handle(t, e.relay, e.change(t, "INSERT", k))
	return k
}

// TestListSetAsideSkipsAMalformedItem: one set-aside item the relay cannot
// read (written by hand, or by a later version) does not hide the others:
// ListSetAside returns every item it reads and an error matching
// ErrMalformed that names the one it could not. Before, the first such item
// failed the whole list.
func TestListSetAsideSkipsAMalformedItem(t *testing.T) {
	e := newEnv(t)
	k := e.fifoAnswerLost(t, "o-1")
	e.targets.set(nil, nil)
	e.clock.Advance(outbox.FIFOWindow)
	if err := e.relay.Publish(context.Background(), k); !errors.Is(err, relay.ErrSetAside) {
		t.Fatalf("Publish = %v; want ErrSetAside", err)
	}
	bad := k + "#aside#broken"
	if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(e.outbox),
		Item: map[string]types.AttributeValue{
			"id":     &types.AttributeValueMemberS{Value: bad},
			"status": &types.AttributeValueMemberS{Value: "SET_ASIDE"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	list, err := relay.ListSetAside(context.Background(), e.client, e.outbox)
	if len(list) != 1 || list[0].Record != k {
		t.Errorf("ListSetAside = %+v; want the readable copy of %s", list, k)
	}
	if !errors.Is(err, relay.ErrMalformed) || !strings.Contains(err.Error(), bad) {
		t.Errorf("ListSetAside error = %v; want ErrMalformed naming %s", err, bad)
	}
}
