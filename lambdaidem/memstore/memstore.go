// Package memstore is an in-memory [lambdaidem.Store] for tests, examples
// and local development. It keeps the store contract exactly (conditional,
// atomic writes, fencing, expiration treated as absence) and can inject
// faults; it is not durable and is not shared between processes.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// Put is a business write that the store commits atomically with a
// record, the in-memory counterpart of a DynamoDB Put in a transaction.
type Put struct {
	// Table and Key name the item.
	Table, Key string
	// Value is the item's content.
	Value []byte
	// IfAbsent makes the write conditional on the item not existing.
	IfAbsent bool
}

// Check is a condition on a business item that the store checks atomically
// with a commit: the item must exist. It writes nothing.
type Check struct {
	Table, Key string
}

// Stage stages a Put or a Check in the wrapped invocation of ctx; see
// [lambdaidem.Stage].
func Stage[E Put | Check](ctx context.Context, e E) error {
	switch e := any(e).(type) {
	case Put:
		if e.Table == "" || e.Key == "" {
			return errors.New("memstore: Put needs a Table and a Key")
		}
	case Check:
		if e.Table == "" || e.Key == "" {
			return errors.New("memstore: Check needs a Table and a Key")
		}
	}
	return lambdaidem.Stage(ctx, e)
}

// ConditionFailedError reports a staged Put or Check whose condition failed; nothing
// was written. It matches [lambdaidem.ErrConditionFailed] and
// [lambdaidem.ErrEffectRejected].
type ConditionFailedError struct {
	// Index is the Put's position among the staged effects.
	Index int
	Table string
	Key   string
}

// Error names the failing write.
func (e *ConditionFailedError) Error() string {
	return fmt.Sprintf("memstore: staged write %d (%s/%s): condition failed", e.Index, e.Table, e.Key)
}

// Unwrap makes the error match lambdaidem.ErrConditionFailed and
// lambdaidem.ErrEffectRejected.
func (e *ConditionFailedError) Unwrap() error { return lambdaidem.ErrConditionFailed }

// Options configure a Store.
type Options struct {
	// Fault, if set, is called before every operation with its name
	// ("claim", "commit", "renew", "release", "mark external",
	// "mark unknown", "get") and the record
	// key. A non-nil result fails the operation without touching the data;
	// wrap it with lambdaidem.ErrStoreUnavailable to simulate an outage.
	Fault func(op, key string) error
}

// Store is the in-memory store. The zero value is not usable; call New.
type Store struct {
	opts    Options
	mu      sync.Mutex
	records map[string]lambdaidem.Record
	items   map[string]map[string][]byte // table → key → value
	calls   map[string]int
	outbox  []*entry // committed outbox entries, in commit order
}

// New returns an empty store.
func New(optFns ...func(*Options)) *Store {
	s := &Store{records: map[string]lambdaidem.Record{}, items: map[string]map[string][]byte{}, calls: map[string]int{}}
	for _, fn := range optFns {
		fn(&s.opts)
	}
	return s
}

var _ lambdaidem.Store = (*Store)(nil)

// begin counts the call, runs the fault hook and takes the lock.
func (s *Store) begin(op, key string) error {
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
	if s.opts.Fault != nil {
		if err := s.opts.Fault(op, key); err != nil {
			return fmt.Errorf("memstore: %s: %w", op, err)
		}
	}
	s.mu.Lock()
	return nil
}

// claimable reports whether a claim (or a commit that claims) at now may
// take the record, as lambdaidem.Judge says with the claimant's window.
func claimable(r lambdaidem.Record, ok bool, now time.Time, window time.Duration) bool {
	return !ok || lambdaidem.Judge(r, now, window).Claimable()
}

// fenced reports whether r is still owned by token.
func fenced(r lambdaidem.Record, ok bool, token string) bool {
	return ok && r.Token == token && (r.Status == lambdaidem.StatusInProgress || r.Status == lambdaidem.StatusUnknown)
}

// Claim implements [lambdaidem.Store].
func (s *Store) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	if err := s.begin("claim", c.Key); err != nil {
		return lambdaidem.Record{}, false, err
	}
	defer s.mu.Unlock()
	old, ok := s.records[c.Key]
	if !claimable(old, ok, c.Now, c.Window) {
		return old, false, nil
	}
	r := lambdaidem.Record{
		Key: c.Key, Status: lambdaidem.StatusInProgress, Fingerprint: c.Fingerprint, Token: c.Token,
		Attempts: 1, LeaseUntil: c.LeaseUntil, ExpiresAt: c.ExpiresAt, CreatedAt: c.Now,
		Renews: c.Renews, HoldUntil: c.HoldUntil,
	}
	if r.HoldUntil.Before(r.LeaseUntil) {
		r.HoldUntil = r.LeaseUntil // as lambdaidem.HoldUntil reads it
	}
	if ok && lambdaidem.Judge(old, c.Now, c.Window) == lambdaidem.VerdictTakeOver {
		// Takeover of a lapsed lease: the same operation, one more attempt.
		r.Attempts = old.Attempts + 1
		r.CreatedAt = old.CreatedAt
	}
	s.records[c.Key] = r
	return r, true, nil
}

// Commit implements [lambdaidem.Store]. Effects must be [Put] or [Check]
// values or outbox messages (outbox.Stage): the messages of one commit
// become one outbox entry, which [Store.Relay] publishes. Like
// dynamostore, a commit whose record key still has an unpublished entry
// fails with an error matching lambdaidem.ErrInProgress (a retry after
// the relay caught up commits), rather than lose those messages.
func (s *Store) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	if err := s.begin("commit", c.Key); err != nil {
		return lambdaidem.Record{}, false, err
	}
	defer s.mu.Unlock()
	old, ok := s.records[c.Key]
	if c.Claim && !claimable(old, ok, c.Now, c.Window) || !c.Claim && !fenced(old, ok, c.Token) {
		return old, false, nil
	}
	var puts []Put
	var messages []outbox.Message
	for i, e := range c.Effects {
		switch e := e.(type) {
		case outbox.Message:
			if len(messages) == 0 && s.outboxPending(c.Key) {
				return lambdaidem.Record{}, false, fmt.Errorf("memstore: commit: %w: an earlier operation's outbox entry under %s is not published yet", lambdaidem.ErrInProgress, c.Key)
			}
			messages = append(messages, e)
		case Put:
			if _, exists := s.items[e.Table][e.Key]; exists && e.IfAbsent {
				return lambdaidem.Record{}, false, &ConditionFailedError{Index: i, Table: e.Table, Key: e.Key}
			}
			puts = append(puts, e)
		case Check:
			if _, exists := s.items[e.Table][e.Key]; !exists {
				return lambdaidem.Record{}, false, &ConditionFailedError{Index: i, Table: e.Table, Key: e.Key}
			}
		default:
			return lambdaidem.Record{}, false, fmt.Errorf("memstore: staged effect %d is a %T, not a memstore.Put or Check or an outbox message: %w; "+
				"a handler that stages DynamoDB writes is tested with dynamostore over an in-process endpoint (see the ddbtest module)", i, e, lambdaidem.ErrEffectRejected)
		}
	}
	for _, p := range puts {
		if s.items[p.Table] == nil {
			s.items[p.Table] = map[string][]byte{}
		}
		s.items[p.Table][p.Key] = append([]byte(nil), p.Value...)
	}
	if len(messages) > 0 {
		s.commitMessages(c.Key, messages, c.Now)
	}
	r := lambdaidem.Record{
		Key: c.Key, Status: lambdaidem.StatusCompleted, Fingerprint: c.Fingerprint, Token: c.Token,
		Outcome: append([]byte(nil), c.Outcome...), Attempts: c.Attempts, ExpiresAt: c.ExpiresAt,
		CreatedAt: c.CreatedAt, CompletedAt: c.Now,
	}
	s.records[c.Key] = r
	return r, true, nil
}

// Release implements [lambdaidem.Store].
func (s *Store) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if err := s.begin("release", f.Key); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if r, ok := s.records[f.Key]; !fenced(r, ok, f.Token) {
		return false, nil
	}
	delete(s.records, f.Key)
	return true, nil
}

// MarkExternal implements [lambdaidem.Store].
func (s *Store) MarkExternal(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if err := s.begin("mark external", f.Key); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[f.Key]
	if !ok || r.Token != f.Token || r.Status != lambdaidem.StatusInProgress {
		return false, nil
	}
	r.External = true
	r.ExpiresAt = time.Time{} // an external record never expires
	if r.DispatchedAt.IsZero() {
		r.DispatchedAt, r.DispatchWindow = f.Now, f.Window
	}
	s.records[f.Key] = r
	return true, nil
}

// Renew implements [lambdaidem.Store].
func (s *Store) Renew(ctx context.Context, r lambdaidem.Renewal) (bool, error) {
	if err := s.begin("renew", r.Key); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	rec, ok := s.records[r.Key]
	if !ok || rec.Token != r.Token || rec.Status != lambdaidem.StatusInProgress ||
		rec.LeaseUntil.Before(r.Now) || rec.External && !r.External || rec.RenewedAt.After(r.Now) {
		// A renewal that would set an expiration never lands on an
		// external record (dynamostore's renewUnmarkedCondition), and none
		// moves the last renewal back (renewCondition).
		return false, nil
	}
	rec.LeaseUntil = r.LeaseUntil
	rec.ExpiresAt = r.ExpiresAt
	if r.External {
		rec.ExpiresAt = time.Time{}
	}
	rec.HoldUntil = r.HoldUntil
	rec.RenewedAt = r.Now
	s.records[r.Key] = rec
	return true, nil
}

// MarkUnknown implements [lambdaidem.Store].
func (s *Store) MarkUnknown(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if err := s.begin("mark unknown", f.Key); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[f.Key]
	if !ok || r.Token != f.Token || r.Status != lambdaidem.StatusInProgress {
		return false, nil
	}
	r.Status = lambdaidem.StatusUnknown
	r.ExpiresAt = time.Time{} // kept until it is resolved
	s.records[f.Key] = r
	return true, nil
}

// Get implements [lambdaidem.Store].
func (s *Store) Get(ctx context.Context, key string, now time.Time) (lambdaidem.Record, error) {
	if err := s.begin("get", key); err != nil {
		return lambdaidem.Record{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[key]
	if !ok || !r.Live(now) {
		return lambdaidem.Record{}, nil
	}
	return r, nil
}

// Item returns a business item written by a committed Put.
func (s *Store) Item(table, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.items[table][key]
	return v, ok
}

// Items returns a copy of every business item in table.
func (s *Store) Items(table string) map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.items[table])
}

// Records returns a copy of every record, expired ones included.
func (s *Store) Records() map[string]lambdaidem.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.records)
}

// Calls returns how many times each operation was called.
func (s *Store) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}
