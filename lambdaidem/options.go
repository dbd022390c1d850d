package lambdaidem

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Mode chooses how an attempt claims its record.
type Mode int

const (
	// ClaimFirst (the default) claims the record with one conditional write
	// before the handler runs, and commits the outcome with a second, fenced
	// write. Concurrent duplicates never run the handler twice. It is the only
	// mode that allows external side effects.
	ClaimFirst Mode = iota
	// Optimistic runs the handler first and claims in the commit itself: one
	// write for a first request. Concurrent duplicates may each run the handler
	// body, but exactly one commits and the others replay its outcome. Use it
	// only for handlers whose effects are all staged store writes;
	// [Attempt.BeginExternal] fails in this mode.
	Optimistic
)

// String names the mode: "claim-first" or "optimistic".
func (m Mode) String() string {
	switch m {
	case ClaimFirst:
		return "claim-first"
	case Optimistic:
		return "optimistic"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// InFlight chooses what a duplicate does while another attempt holds the
// record.
type InFlight int

const (
	// Reject (the default) returns an error matching [ErrInProgress] at once.
	Reject InFlight = iota
	// Wait polls the record until it completes, then replays the outcome; it
	// gives up with [ErrInProgress] after Options.WaitTimeout. If the lease
	// lapses while it waits, it claims the record and runs the handler.
	Wait
)

// Event describes what happened to one operation, for [Hooks].
type Event struct {
	// Operation is the operation name.
	Operation string
	// Key is the record key (a hash).
	Key string
	// Status is the record's state when the event happened.
	Status Status
	// Attempt is the claim count.
	Attempt int
	// From says where a replayed outcome came from, for OnReplay: "cache"
	// (the local cache) or "store".
	From string
	// Duration is how long the commit call took, for OnCommit.
	Duration time.Duration
	// Since is when the operation was first claimed (the record's
	// creation time), for an event about a stored record; zero when
	// unknown. For a duplicate refused by an UNKNOWN record (OnConflict,
	// ErrOutcomeUnknown), now minus Since is the age of an unresolved
	// recovery obligation (UNKNOWN records never expire).
	Since time.Time
}

// Hooks are called synchronously on the invoking goroutine; they must be
// fast and safe for concurrent use. A nil hook is skipped.
type Hooks struct {
	// OnClaim is called when an attempt claims a record and is about to run
	// the handler.
	OnClaim func(context.Context, Event)
	// OnReplay is called when a duplicate is answered with a stored outcome.
	OnReplay func(context.Context, Event)
	// OnConflict is called when a duplicate is refused: in progress, outcome
	// unknown, key reused with another payload, or lease lost.
	OnConflict func(context.Context, Event, error)
	// OnCommit is called when an outcome is committed: by the attempt that
	// ran the handler, or by a reconcile function resolving an UNKNOWN
	// record. Event.Duration is how long the commit call took.
	OnCommit func(context.Context, Event)
	// OnUnknown is called when a failed attempt that had begun an external
	// effect leaves its record UNKNOWN, for a reconcile function or an
	// operator to resolve.
	OnUnknown func(context.Context, Event)
	// OnFailOpen is called when an invocation is answered without
	// idempotency because the store was unavailable (Options.FailOpen);
	// the error is the store's.
	OnFailOpen func(context.Context, Event, error)
	// OnStoreError is called when a store call fails; the error is a
	// [*StoreError] whose Op names the call. A failed lease renewal ("renew")
	// is reported from the attempt's renewal goroutine.
	OnStoreError func(context.Context, Event, error)
}

// Options configure a [Guard]. The zero value of every field means its
// documented default.
type Options struct {
	// Namespace prefixes every record key, so that several services can share
	// one table. Default "lambdaidem".
	Namespace string

	// RetryHorizon is how long a completed operation is remembered: the
	// record's TTL is its completion time plus RetryHorizon. Choose it longer
	// than any retry can arrive. Default 24h.
	RetryHorizon time.Duration

	// LeaseMargin is added to the deadline in the invocation's context to
	// form the lease of an in-progress record: the lease outlives the
	// invocation, so a record is never taken over while its attempt may still
	// run. It must exceed twice the clock skew between any two processes
	// sharing the table. An owner that renews adds it to its hold too
	// (MaxRunTime after its last sign of life, plus LeaseMargin: see
	// [OwnerHold]). Default 5s.
	LeaseMargin time.Duration

	// Lease is used instead when the context has no deadline. Default 15m,
	// the longest a Lambda invocation can run.
	Lease time.Duration

	// Renew chooses whether a claim-first attempt keeps its lease alive
	// while its handler runs, for platforms that do not stop a handler at
	// its deadline. RenewAuto (default) renews everywhere but standard
	// Lambda (Lambda Managed Instances, containers, local servers);
	// RenewAlways and RenewNever decide for every platform. See
	// [RenewMode].
	Renew RenewMode

	// RenewFraction is the fraction of its lease a handler runs before its
	// lease is first renewed, and the part of each renewed lease after which
	// it is renewed again; each renewal extends the lease by its original
	// length, and a renewal refused by an unavailable store is retried for
	// the rest of the lease. A handler that ends sooner makes no extra
	// store call. Between 0 and 1 exclusive; default 2/3.
	RenewFraction float64

	// MaxRunTime bounds how long renewal keeps an attempt's claim, counted
	// from the handler's start; past it the attempt counts as hung: its
	// lease is not renewed, its context is cancelled (cause matching
	// [ErrLeaseLost]) when the lease ends, and the record can be taken over.
	// It is also how long the owner may run after its last sign of life:
	// an owner that renews records, at claim and at every renewal, that it
	// may run until MaxRunTime after its last renewal (before any, its
	// lease end), plus LeaseMargin for clock skew ([OwnerHold]), and until
	// then its record (INPROGRESS, or UNKNOWN with a renewal on record) is
	// neither taken over, reconciled, settled, forgotten nor expired (see
	// [Judge]); a duplicate gets [ErrInProgress] or [ErrOutcomeUnknown]. An
	// UNKNOWN record whose owner never renewed (standard Lambda, or an
	// attempt that failed before its first renewal) is reconciled at once:
	// MaxRunTime does not delay it ([OwnerMayRun]). Records written by
	// versions that recorded no such time are judged with this Guard's
	// MaxRunTime, as if their owner renewed. Use one MaxRunTime for every
	// function that shares a table. Default 30m.
	MaxRunTime time.Duration

	// Mode is ClaimFirst (default) or Optimistic.
	Mode Mode

	// InFlight is Reject (default) or Wait.
	InFlight InFlight

	// WaitTimeout bounds, in real time, how long a Wait duplicate polls.
	// Default 10s, and never later than one second before the context's
	// deadline, so that the duplicate still answers in time.
	WaitTimeout time.Duration

	// PollInterval is the first wait between polls; it doubles up to 1s.
	// Default 50ms.
	PollInterval time.Duration

	// MaxWaiters bounds how many Wait duplicates of one in-flight key poll
	// at once in this process (this Guard); past it, a duplicate gets
	// [ErrInProgress] at once, as in Reject mode. Default 8.
	//
	// The count is per process. On standard Lambda each execution
	// environment runs one invocation at a time, so concurrent duplicates
	// run in different environments and each sees at most itself waiting:
	// there MaxWaiters bounds nothing, and what bounds a burst of copies of
	// one request is WaitTimeout (each waiter's time and store reads) and the
	// function's reserved concurrency (how many wait at once). It is
	// meaningful where one process serves several invocations at once:
	// Lambda Managed Instances (AWS_LAMBDA_MAX_CONCURRENCY), and servers
	// that share one Guard.
	MaxWaiters int

	// MaxKeySize caps the idempotency key's length in bytes. Default 255.
	MaxKeySize int

	// MaxOutcomeSize caps the stored outcome in bytes, as stored: after
	// compression (see CompressAbove) and the Sealer. It stays below
	// DynamoDB's 400 KB item limit. A larger outcome fails with
	// [ErrOutcomeTooLarge] and nothing is committed. Default 300,000.
	MaxOutcomeSize int

	// CompressAbove: an outcome whose encoded form is longer than this many
	// bytes is stored gzip-compressed (compress/gzip: Huffman coding only up
	// to 2 KB, the fastest level up to 8 KB, the default level above) when
	// that makes it shorter.
	// DynamoDB charges a write per started KB of the record (twice that in a
	// transaction) and a read per started 4 KB, so a JSON outcome of some KB
	// costs a fraction of its raw size. Replays, the cache and the
	// fingerprint see the same outcome either way; outcomes stored
	// uncompressed (by older versions too) read as before, whatever this
	// option says. Default 512.
	CompressAbove int

	// NoCompression stores every outcome as encoded, uncompressed (the
	// behaviour before CompressAbove). Default false.
	NoCompression bool

	// CacheSize bounds a local, in-process cache of completed outcomes, which
	// answers a warm duplicate with no store call. The cache honours each
	// record's expiration and fingerprint. Default 0: no cache.
	CacheSize int

	// FailOpen runs the handler without idempotency when the store is
	// unavailable at claim time (in Optimistic mode: answers with the
	// handler's result when the commit that claims finds the store
	// unavailable). Staged writes cannot be committed without the store, so
	// a handler that staged any still fails. Default false: fail closed with
	// an error matching [ErrStoreUnavailable].
	FailOpen bool

	// FinishTimeout bounds the writes that end an attempt (commit, release,
	// mark unknown). They run on a context that ignores the invocation's
	// cancellation, so a cancelled invocation cannot strand a record.
	// Default 5s.
	FinishTimeout time.Duration

	// Logger receives one line for each replay and conflict (levels Info
	// and Warn) and each failure (level Error: a store call that failed, a
	// commit the store refused, an unreadable stored outcome, a handler
	// error under [Wrapper.Wrap]). Raw keys and payloads are never logged.
	// Default: the Error lines only, to slog.Default() (read when a line is
	// written), so that no failure is silent. To silence the Guard, set
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	// Codec encodes a handler's result for storage and decodes it for a
	// replay. Default: encoding/json, under which a replay gets what a JSON
	// round trip keeps: unexported fields are dropped, a number held in an
	// interface (any) comes back as a float64, a time.Time loses its
	// monotonic reading and its location name, a nil slice may come back
	// empty. Choose a Codec whose round trip keeps what your result needs.
	// Terminal errors are stored as their type name and message whatever
	// the Codec. Changing the Codec makes outcomes stored by another
	// non-default Codec unreadable (replays of them fail), so change it with
	// a new Namespace.
	Codec Codec

	// Sealer, if set, protects every stored outcome (values and terminal
	// errors alike): Seal runs before it is stored and Open before it is
	// replayed, each given the record key. See the seal package for
	// envelope encryption under a KMS key. Default: outcomes are stored as
	// encoded.
	Sealer Sealer

	// Hooks observe claims, replays and conflicts.
	Hooks Hooks

	// Now is the clock. Default time.Now.
	Now func() time.Time

	// NewToken returns a fresh, unguessable attempt token. Default: 128
	// random bits, base64url.
	NewToken func() string

	// Disabled turns idempotency off, for unit tests of handlers and local
	// runs: every call runs its handler directly, with no store call, no
	// replay and no conflict; a write staged in it fails the call, since
	// nothing can commit it. It is also set by the environment variable
	// [DisableEnv] ("true" or "1"). [New] logs a disabled Guard at level
	// Error, and refuses to build one inside a Lambda execution environment
	// (where AWS_LAMBDA_FUNCTION_NAME is set, the Runtime Interface Emulator
	// included): a deployed function always runs with idempotency, whatever
	// its configuration says. Default false.
	Disabled bool

	// Getenv reads the environment, for [DisableEnv], the Lambda marker,
	// RenewAuto (AWS_LAMBDA_INITIALIZATION_TYPE) and [TenantsEnv].
	// Default os.Getenv.
	Getenv func(string) string

	// After is the timer lease renewal waits on, on the clock of Now.
	// Default time.After.
	After func(time.Duration) <-chan time.Time
}

// Guard makes operations idempotent with a [Store]. It is safe for
// concurrent use; build one at start-up and share it.
type Guard struct {
	store   Store
	opts    Options
	cache   *cache
	waiters waiters
	zip     compressor
	// tenants: the deployment declares tenants (TenantsEnv).
	tenants bool
}

// New returns a Guard over store with the options applied to the defaults.
// It returns an error if an option is invalid.
func New(store Store, optFns ...func(*Options)) (*Guard, error) {
	if store == nil {
		return nil, errors.New("lambdaidem: nil store")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if err := o.applyDisable(); err != nil {
		return nil, err
	}
	o.Renew = o.Renew.resolve(o.Getenv)
	tenants, err := TenantsDeclared(o.Getenv)
	if err != nil {
		return nil, err
	}
	return &Guard{store: store, opts: o, cache: newCache(o.CacheSize), waiters: waiters{n: map[string]int{}}, tenants: tenants}, nil
}

// Options returns a copy of the Guard's options, defaults filled in;
// RenewAuto is resolved to RenewAlways or RenewNever for this process.
func (g *Guard) Options() Options { return g.opts }

func (o *Options) setDefaults() error {
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"RetryHorizon", &o.RetryHorizon, 24 * time.Hour},
		{"LeaseMargin", &o.LeaseMargin, 5 * time.Second},
		{"Lease", &o.Lease, 15 * time.Minute},
		{"WaitTimeout", &o.WaitTimeout, 10 * time.Second},
		{"PollInterval", &o.PollInterval, 50 * time.Millisecond},
		{"FinishTimeout", &o.FinishTimeout, 5 * time.Second},
		{"MaxRunTime", &o.MaxRunTime, 30 * time.Minute},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return fmt.Errorf("lambdaidem: %s must not be negative, got %v", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxKeySize", &o.MaxKeySize, 255},
		{"MaxOutcomeSize", &o.MaxOutcomeSize, 300_000},
		{"CompressAbove", &o.CompressAbove, 512},
		{"CacheSize", &o.CacheSize, 0},
		{"MaxWaiters", &o.MaxWaiters, 8},
	}
	for _, n := range ints {
		if *n.v < 0 {
			return fmt.Errorf("lambdaidem: %s must not be negative, got %d", n.name, *n.v)
		}
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	if o.Namespace == "" {
		o.Namespace = "lambdaidem"
	}
	if strings.Contains(o.Namespace, "#") {
		return fmt.Errorf("lambdaidem: Namespace %q must not contain '#'", o.Namespace)
	}
	if o.Mode != ClaimFirst && o.Mode != Optimistic {
		return fmt.Errorf("lambdaidem: unknown %v", o.Mode)
	}
	if o.InFlight != Reject && o.InFlight != Wait {
		return fmt.Errorf("lambdaidem: unknown InFlight(%d)", int(o.InFlight))
	}
	if o.RenewFraction == 0 {
		o.RenewFraction = 2.0 / 3
	}
	if !(o.RenewFraction > 0 && o.RenewFraction < 1) {
		return fmt.Errorf("lambdaidem: RenewFraction must be between 0 and 1, got %v", o.RenewFraction)
	}
	if o.Renew < RenewAuto || o.Renew > RenewNever {
		return fmt.Errorf("lambdaidem: unknown %v", o.Renew)
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Logger == nil {
		o.Logger = slog.New(defaultLogHandler{})
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewToken == nil {
		o.NewToken = randomToken
	}
	return nil
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
