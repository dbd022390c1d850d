package memstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// OutboxTable names the outbox in memstore's messages. A commit that meets
// an unpublished outbox entry of its record key fails as in progress
// (lambdaidem.ErrInProgress), no longer with a [*ConditionFailedError].
const OutboxTable = "outbox"

// entry is the outbox messages of one commit and how far the relay got.
type entry struct {
	key           string
	messages      []outbox.Message
	published     int
	committedAt   time.Time
	firstDispatch time.Time // of messages[published]; zero before it is dispatched
	setAside      string    // why messages[published] cannot be published; "" if it can
}

// Entry is an outbox entry as [Store.Outbox] shows it.
type Entry struct {
	// Key is the record key of the commit that wrote the entry.
	Key string
	// Messages are its messages in position order.
	Messages []outbox.Message
	// Published is how many of them the relay has published (in order).
	Published int
	// CommittedAt is when the commit wrote it.
	CommittedAt time.Time
	// SetAside says why the relay set the entry aside at message
	// Published (its target refuses it every time, or its window has
	// passed); "" if it did not. A set-aside entry blocks nothing.
	SetAside string
}

// outboxPending reports whether key has an entry with unpublished
// messages. The caller holds the lock.
func (s *Store) outboxPending(key string) bool {
	for _, e := range s.outbox {
		if e.key == key && e.published < len(e.messages) && e.setAside == "" {
			return true
		}
	}
	return false
}

// commitMessages records the outbox entry of a commit. The caller holds
// the lock.
func (s *Store) commitMessages(key string, messages []outbox.Message, now time.Time) {
	s.outbox = slices.DeleteFunc(s.outbox, func(e *entry) bool { return e.key == key && e.published == len(e.messages) })
	s.outbox = append(s.outbox, &entry{key: key, messages: slices.Clone(messages), committedAt: now})
}

// Outbox returns every outbox entry in commit order, published ones
// included (memstore expires none).
func (s *Store) Outbox() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.outbox))
	for i, e := range s.outbox {
		out[i] = Entry{Key: e.key, Messages: slices.Clone(e.messages), Published: e.published, CommittedAt: e.committedAt, SetAside: e.setAside}
	}
	return out
}

// Relay publishes, in commit order and within an entry in position order,
// every committed outbox message not yet published, through p, and marks
// each published after p returns: the in-memory counterpart of
// dynamostore/relay. A message that cannot be published (p's error
// matches [outbox.ErrUnpublishable], or its target's window has passed
// since its first dispatch at now: [outbox.Window]) sets its entry aside
// (Entry.SetAside; it no longer blocks its record key) and the relay goes
// on with the next entry. It stops at any other error of p and returns it
// with how many messages it published. p runs without the store's lock
// held.
func (s *Store) Relay(ctx context.Context, now time.Time, p outbox.Publisher) (int, error) {
	n := 0
	for {
		s.mu.Lock()
		var e *entry
		for _, c := range s.outbox {
			if c.published < len(c.messages) && c.setAside == "" {
				e = c
				break
			}
		}
		if e == nil {
			s.mu.Unlock()
			return n, nil
		}
		i := e.published
		m := e.messages[i]
		if err := outbox.Window(m, e.firstDispatch, now); err != nil {
			e.setAside = err.Error()
			s.mu.Unlock()
			continue
		}
		if e.firstDispatch.IsZero() {
			e.firstDispatch = now
		}
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if err := p.Publish(ctx, m); err != nil {
			if errors.Is(err, outbox.ErrUnpublishable) {
				s.mu.Lock()
				if e.published == i {
					e.setAside, e.firstDispatch = err.Error(), time.Time{}
				}
				s.mu.Unlock()
				continue
			}
			return n, err
		}
		s.mu.Lock()
		if e.published == i {
			e.published++
			e.firstDispatch = time.Time{}
			n++
		}
		s.mu.Unlock()
	}
}
