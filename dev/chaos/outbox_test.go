package chaos_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/dev/chaos"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// TestOutboxChaos: every run also stages an outbox message naming it; a
// relay publishes while the faults play and after the drain. Besides the
// usual checks, each committed key's message is published (at least once,
// always with its one id) and no other run's ever is, and every publish is
// placed in the linearizability check: it must follow the commit of the
// run it names. In memory and against the DynamoDB store with
// dynamostore/relay over the faulty transport.
func TestOutboxChaos(t *testing.T) {
	ctx := context.Background()
	t.Run("memstore", func(t *testing.T) {
		cfg := config(t, 1500)
		cfg.Outbox = true
		rep, err := chaos.Run(ctx, chaos.NewMemBackend(), cfg)
		check(t, rep, err)
		if rep.OutboxDeliveries == 0 {
			t.Error("nothing published")
		}
	})
	t.Run("dynamostore", func(t *testing.T) {
		b, err := chaos.NewDynamoBackend(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		cfg := config(t, 800)
		cfg.Outbox = true
		rep, err := chaos.Run(ctx, b, cfg)
		check(t, rep, err)
		if rep.OutboxDeliveries == 0 {
			t.Error("nothing published")
		}
	})
}

// forging is the control: a relay that, beside each message, publishes one
// naming a run that was never committed.
type forging struct{ *chaos.MemBackend }

func (f forging) Relay(ctx context.Context, p outbox.Publisher) error {
	return f.MemBackend.Relay(ctx, outbox.PublisherFunc(func(ctx context.Context, m outbox.Message) error {
		if err := p.Publish(ctx, m); err != nil {
			return err
		}
		key, _, _ := strings.Cut(m.Body, "#")
		m.Body = key + "#forged"
		return p.Publish(ctx, m)
	}))
}

// TestOutboxChecksCatchAForgedMessage: the checks and the linearizability
// model must see a published message whose run never committed.
func TestOutboxChecksCatchAForgedMessage(t *testing.T) {
	cfg := config(t, 300)
	cfg.Outbox = true
	rep, err := chaos.Run(context.Background(), forging{chaos.NewMemBackend()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Linearizable {
		t.Fatalf("a forged message passed the checks:\n%s", rep)
	}
}
