package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// Outboxer is a backend whose commits can carry outbox messages, and which
// relays them.
type Outboxer interface {
	// Relay publishes, through p, every committed outbox message not yet
	// marked published, as the backend's relay does.
	Relay(ctx context.Context, p outbox.Publisher) error
}

// delivery is one publish the relay made.
type delivery struct {
	id, run string
}

// stageMessage stages, with Config.Outbox, the outbox message of one run
// of key: its body names the key and the run.
func (r *run) stageMessage(ctx context.Context, key, run string) error {
	if !r.cfg.Outbox {
		return nil
	}
	_, err := outbox.Stage(ctx, outbox.Item{Target: "chaos", Body: key + "#" + run})
	return err
}

// Publish records a delivery in the history, as an operation from the
// publish's call to its return, so that the linearizability check places
// it among the key's requests: a published message must be the committed
// run's, and published after that commit.
func (r *run) Publish(_ context.Context, m outbox.Message) error {
	call := r.hist.now()
	key, run, ok := strings.Cut(m.Body, "#")
	if !ok {
		return fmt.Errorf("chaos: outbox message %s has body %q", m.ID, m.Body)
	}
	r.mu.Lock()
	r.deliveries[key] = append(r.deliveries[key], delivery{id: m.ID, run: run})
	r.mu.Unlock()
	r.hist.add(call, histInput{key: key}, histOutput{answer: answerDelivered, run: run})
	if !r.relayCalm.Load() && r.publishes.Add(1)%5 == 0 {
		// Every fifth publish while the faults play: the relay crashes
		// after the publish, before its mark, and the message goes again.
		return errCrashAfterPublish
	}
	return nil
}

var errCrashAfterPublish = errors.New("chaos: the relay crashed after a publish, before its mark")

// startRelay runs the backend's relay every few milliseconds while the
// operations and the drain run (under the same faults), until stopped.
func (r *run) startRelay(ctx context.Context) (stop func()) {
	r.deliveries = map[string][]delivery{}
	ob, ok := r.backend.(Outboxer)
	if !r.cfg.Outbox || !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = ob.Relay(ctx, r) // a failure is retried on the next pass, as Lambda retries the batch
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() { cancel(); <-done }
}

// finishRelay relays until nothing fails (the faults are over), at most 20
// passes.
func (r *run) finishRelay(ctx context.Context) {
	ob, ok := r.backend.(Outboxer)
	if !r.cfg.Outbox {
		return
	}
	if !ok {
		r.problems = append(r.problems, fmt.Sprintf("Config.Outbox with a backend (%s) that relays no outbox", r.backend.Name()))
		return
	}
	r.relayCalm.Store(true)
	var err error
	for range 20 {
		if err = ob.Relay(ctx, r); err == nil {
			return
		}
	}
	r.problems = append(r.problems, fmt.Sprintf("the relay still fails after the drain: %v", err))
}

// reportOutbox checks that each committed key's message was published, and
// only its.
func (r *run) reportOutbox(rep *Report, keys []string, final Snapshot, violate func(string, ...any)) {
	if !r.cfg.Outbox {
		return
	}
	seen := map[string]bool{}
	for _, key := range keys {
		ds := r.deliveries[key]
		for _, d := range ds {
			rep.OutboxDeliveries++
			if seen[d.id] {
				rep.OutboxRepublished++
			}
			seen[d.id] = true
		}
		if kindOf(r.requested[key]) == external {
			if len(ds) > 0 {
				violate("%s: %d outbox messages for an external key", key, len(ds))
			}
			continue
		}
		committed := final.Effects[key]
		if len(committed) != 1 {
			continue // reported as lost or duplicated already
		}
		if len(ds) == 0 {
			violate("%s: the committed run %s's outbox message was never published", key, committed[0])
		}
		for _, d := range ds {
			if d.run != committed[0] {
				violate("%s: published the message of run %s; the committed run is %s", key, d.run, committed[0])
			}
		}
	}
}
