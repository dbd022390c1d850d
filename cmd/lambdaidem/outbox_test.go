package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// TestOutboxSetAside: a message its queue refuses every time is set aside
// by the relay; the command lists it (with the reason), shows it (ids,
// kinds, sizes, never bodies), refuses to discard it without --yes,
// releases it (the relay then publishes it), and says when a second
// release finds it changed.
func TestOutboxSetAside(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ob := ddbtest.TableName(t, "outbox")
	if err := ddbtest.CreateTable(ctx, w.client, ob); err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(w.client, w.table, func(o *dynamostore.Options) { o.OutboxTable = ob })
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lambdaidem.Do(ctx, g, payCall("k"), func(ctx context.Context) (string, error) {
		_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: "https://sqs.eu-west-1.amazonaws.com/1/gone", Body: "secret body"})
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	refuse := true
	var sent int
	p := outbox.PublisherFunc(func(context.Context, outbox.Message) error {
		if refuse {
			return errors.New("QueueDoesNotExist: " + outbox.ErrUnpublishable.Error())
		}
		sent++
		return nil
	})
	wrapped := outbox.PublisherFunc(func(ctx context.Context, m outbox.Message) error {
		if err := p(ctx, m); err != nil {
			return errors.Join(outbox.ErrUnpublishable, err)
		}
		return nil
	})
	r, err := relay.New(w.client, ob, wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(ctx, recordKey("k")); !errors.Is(err, relay.ErrSetAside) {
		t.Fatalf("Publish = %v; want set aside", err)
	}
	vars := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL, "OUTBOX_TABLE": ob}
	cli := func(args ...string) result {
		var out, errOut strings.Builder
		code := run(ctx, args, streams{in: strings.NewReader(""), out: &out, err: &errOut}, w.env(vars))
		return result{code, out.String(), errOut.String()}
	}
	list := cli("outbox", "list")
	list.expect(t, exitOK, "QueueDoesNotExist", "1 set-aside outbox items")
	key := strings.SplitN(list.out, "\t", 2)[0]
	if !strings.HasPrefix(key, recordKey("k")+"#aside#") {
		t.Fatalf("listed key %q", key)
	}
	show := cli("outbox", "show", key)
	show.expect(t, exitOK, `"body_bytes": 11`, "")
	if strings.Contains(show.out, "secret body") {
		t.Errorf("show printed a message body:\n%s", show.out)
	}
	var v struct{ Record string }
	if err := json.Unmarshal([]byte(show.out), &v); err != nil || v.Record != recordKey("k") {
		t.Errorf("show = %s (%v)", show.out, err)
	}
	cli("outbox", "discard", key).expect(t, exitNotConfirmed, "", "--yes")
	cli("outbox", "show", "nope").expect(t, exitNoRecord, "", "no set-aside outbox item")
	refuse = false
	cli("outbox", "release", key).expect(t, exitOK, "released", "")
	if err := r.Publish(ctx, key); err != nil || sent != 1 {
		t.Fatalf("Publish after release = %v, %d sent; want 1", err, sent)
	}
	cli("outbox", "release", key).expect(t, exitNoRecord, "", "PUBLISHED")
	cli("outbox", "list", "--outbox-table", "").expect(t, exitUsage, "", "no outbox table")
}
