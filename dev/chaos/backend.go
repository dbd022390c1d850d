package chaos

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// Backend is a store under test and the means to read its tables back.
type Backend interface {
	// Name names the backend in reports.
	Name() string
	// Store is the idempotency store.
	Store() lambdaidem.Store
	// Stage stages the business write of one handler run, to be committed
	// with the record: the item "effect#<key>#<run>".
	Stage(ctx context.Context, key, run string) error
	// LosesResponses reports whether the backend plays LostCommitResponse
	// and LostClaimResponse itself, below the store (in the SDK's transport);
	// otherwise the harness's wrapping store plays them.
	LosesResponses() bool
	// Snapshot reads every business effect and every record from the tables.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Calls counts the store's calls by operation.
	Calls() map[string]int
}

// Snapshot is what the tables hold after a run.
type Snapshot struct {
	// Effects maps a key to the runs whose business item is in the table.
	Effects map[string][]string
	// Records are the idempotency records, expired ones included.
	Records []RecordState
}

// RecordState is what the checks need of one record.
type RecordState struct {
	Key        string
	Status     lambdaidem.Status
	Token      string
	LeaseUntil time.Time
	ExpiresAt  time.Time
}

// effectID is the business item id of one run's effect.
func effectID(key, run string) string { return "effect#" + key + "#" + run }

// parseEffectID splits an effect item id into key and run.
func parseEffectID(id string) (key, run string, ok bool) {
	rest, ok := strings.CutPrefix(id, "effect#")
	if !ok {
		return "", "", false
	}
	key, run, ok = strings.Cut(rest, "#")
	return key, run, ok
}

// effectTable is the business table the handlers write to.
const effectTable = "chaos-effects"

// MemBackend is the in-memory store, with throttling and 5xx bursts played
// by its Fault hook.
type MemBackend struct {
	store  *memstore.Store
	bursts *bursts

	// direct, when set, writes business items at once instead of staging
	// them: the pattern of Powertools and of most idempotency layers, whose
	// handler writes its item before the record is completed.
	direct bool
	// unfenced, when set, makes every commit ignore the record's state
	// (see [NewUnfencedMemBackend]).
	unfenced bool
	mu       sync.Mutex
	items    map[string][]byte
}

// NewMemBackend returns a fresh in-memory backend. Bursts are wired by [Run].
func NewMemBackend() *MemBackend { return &MemBackend{} }

// NewDirectMemBackend returns an in-memory backend whose handlers write
// their business item directly, outside the record's commit, as a handler
// under Powertools does. The harness must find duplicates with it: it is
// the control that shows the checks can fail.
func NewDirectMemBackend() *MemBackend {
	return &MemBackend{direct: true, items: map[string][]byte{}}
}

// NewUnfencedMemBackend returns an in-memory backend whose store is
// deliberately broken: its commit is not fenced on the attempt token (nor
// on anything else), as Powertools' completion write is not. An attempt
// whose lease lapsed commits over the new owner's outcome. The
// linearizability check must fail with it: it is the control that shows
// the checker can see a broken store.
func NewUnfencedMemBackend() *MemBackend { return &MemBackend{unfenced: true} }

// unfencedStore commits whatever the record holds.
type unfencedStore struct{ *memstore.Store }

// Commit writes the record and the effects unconditionally: as a claim at
// a time when every record has expired.
func (s unfencedStore) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	c.Claim = true
	c.Now = c.Now.Add(100 * 365 * 24 * time.Hour)
	return s.Store.Commit(ctx, c)
}

func (b *MemBackend) init(bs *bursts) {
	b.bursts = bs
	b.store = memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if kind, refused := bs.take(); refused {
				return fmt.Errorf("chaos: injected %v: %w", kind, lambdaidem.ErrStoreUnavailable)
			}
			return nil
		}
	})
}

func (b *MemBackend) Name() string {
	switch {
	case b.direct:
		return "memstore, business writes outside the commit (control)"
	case b.unfenced:
		return "memstore with an unfenced commit (control)"
	}
	return "memstore"
}

func (b *MemBackend) Store() lambdaidem.Store {
	if b.unfenced {
		return unfencedStore{b.store}
	}
	return b.store
}
func (b *MemBackend) LosesResponses() bool  { return false }
func (b *MemBackend) Calls() map[string]int { return b.store.Calls() }

func (b *MemBackend) Stage(ctx context.Context, key, run string) error {
	if b.direct {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.items[effectID(key, run)] = []byte(run)
		return nil
	}
	return memstore.Stage(ctx, memstore.Put{Table: effectTable, Key: effectID(key, run), Value: []byte(run)})
}

// Relay publishes the committed outbox messages with memstore's relay.
func (b *MemBackend) Relay(ctx context.Context, p outbox.Publisher) error {
	_, err := b.store.Relay(ctx, time.Now(), p)
	return err
}

func (b *MemBackend) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{Effects: map[string][]string{}}
	items := map[string][]byte{}
	maps.Copy(items, b.store.Items(effectTable))
	b.mu.Lock()
	maps.Copy(items, b.items)
	b.mu.Unlock()
	for id := range items {
		key, run, ok := parseEffectID(id)
		if !ok {
			return s, fmt.Errorf("chaos: unexpected business item %q", id)
		}
		s.Effects[key] = append(s.Effects[key], run)
	}
	for _, r := range b.store.Records() {
		s.Records = append(s.Records, RecordState{Key: r.Key, Status: r.Status, Token: r.Token, LeaseUntil: r.LeaseUntil, ExpiresAt: r.ExpiresAt})
	}
	return s, nil
}

// backendInit is implemented by backends that need the run's shared bursts.
type backendInit interface{ init(*bursts) }
