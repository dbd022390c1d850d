package dynamostore

import (
	"errors"
	"fmt"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Options configure a [Store]. The zero value is valid: every field left
// zero takes the default documented on it. The attribute name defaults
// match the table schema of Powertools for AWS Lambda's DynamoDB
// persistence layer, so a table created for Powertools can be reused.
type Options struct {
	// KeyAttr is the partition key attribute (type S); it holds the record
	// key "<namespace>#<hash>". Default "id".
	KeyAttr string

	// SortKeyAttr is the sort key attribute (type S) for a table that has
	// one, as in a single-table design. Default "": the table has no sort
	// key.
	SortKeyAttr string

	// SortKeyValue is the static value every record carries in SortKeyAttr.
	// Required when SortKeyAttr is set; ignored otherwise.
	SortKeyValue string

	// StatusAttr holds the record's state: INPROGRESS, COMPLETED or UNKNOWN.
	// Default "status".
	StatusAttr string

	// ExpirationAttr holds when the record is forgotten, as a Number of Unix
	// seconds. Make it the table's TTL attribute. Default "expiration".
	ExpirationAttr string

	// InProgressExpirationAttr holds the end of the current owner's lease,
	// as a Number of Unix milliseconds. Default "in_progress_expiration".
	InProgressExpirationAttr string

	// ValidationAttr holds the request fingerprint. Default "validation".
	ValidationAttr string

	// DataAttr holds the stored outcome: a String when it is UTF-8 text
	// (an outcome stored as encoded, JSON), a Binary otherwise (compressed,
	// see lambdaidem.Options.CompressAbove, or sealed). Both read back.
	// Default "data".
	DataAttr string

	// AttemptAttr holds the current owner's attempt token, on which every
	// later write is fenced. Default "attempt".
	AttemptAttr string

	// AttemptsAttr holds how many claims the operation has seen, a Number.
	// Default "attempts".
	AttemptsAttr string

	// CreatedAtAttr holds when the record was first claimed, a Number of
	// Unix milliseconds. Default "created_at".
	CreatedAtAttr string

	// CompletedAtAttr holds when the outcome was committed, a Number of Unix
	// milliseconds. Default "completed_at".
	CompletedAtAttr string

	// ExternalAttr marks an in-progress record whose owner began an
	// external effect (lambdaidem.Attempt.BeginExternal), a Boolean; such a
	// record is never taken over. Default "external".
	ExternalAttr string

	// RenewedAtAttr holds when the current owner last renewed its lease
	// (lambdaidem.Options.Renew), a Number of Unix milliseconds. Default
	// "renewed_at".
	RenewedAtAttr string

	// OutboxTable is the table that outbox messages (outbox.Stage) are
	// written to, with the record, in the commit's transaction: one item per
	// commit under the record key, which dynamostore/relay publishes from
	// the table's stream. Its partition key is "id" (type S), its TTL
	// attribute "expiration"; it must not be the record table. Default "":
	// a commit with staged messages fails with an error matching
	// lambdaidem.ErrEffectRejected.
	OutboxTable string

	// RenewsAttr records, at claim, whether the owner renews its lease
	// (lambdaidem.Record.Renews), a Boolean. Default "renews".
	RenewsAttr string

	// HoldUntilAttr holds until when the owner may still be running
	// (lambdaidem.HoldUntil), a Number of Unix milliseconds, written at
	// claim and at every renewal; the claim conditions compare it with the
	// clock (DynamoDB expressions cannot add a duration to an attribute).
	// Default "hold_until".
	HoldUntilAttr string

	// DispatchedAtAttr holds when the owner first began its external
	// effect (lambdaidem.Record.DispatchedAt), a Number of Unix
	// milliseconds, and DispatchWindowAttr the downstream's deduplication
	// window in milliseconds (Attempt.BeginExternalWithin), both written
	// by the external mark. Defaults "dispatched_at" and "dispatch_window".
	DispatchedAtAttr   string
	DispatchWindowAttr string

	// MaxRunTime is what [Records] judges records written without a hold
	// with (by versions before HoldUntilAttr): their owner is assumed to
	// renew and to run for MaxRunTime after its last renewal or lease end
	// (see lambdaidem.HoldUntil). Give it the functions' MaxRunTime. The
	// Store takes each claimant's instead (lambdaidem.Claim.Window).
	// Default 30m, lambdaidem's default.
	MaxRunTime time.Duration

	// ConflictRetries is how many times a claim, a read or a fenced write
	// (release, mark, renew) is sent again after meeting a transaction conflict
	// (TransactionConflictException: a transaction in flight was writing
	// the record), never past the context's deadline; then the call fails
	// with an error matching lambdaidem.ErrInProgress. A commit retries a
	// conflict for as long as its context's deadline allows (the core gives
	// it Options.FinishTimeout), and this many times only when the context
	// has no deadline. Default 8; a negative value disables the retries.
	ConflictRetries int

	// ConflictBackoff is the wait before the first conflict retry; it
	// doubles for each further retry, with full jitter. Default 25ms.
	ConflictBackoff time.Duration

	// ConflictMaxBackoff caps the wait between conflict retries. Default
	// 400ms.
	ConflictMaxBackoff time.Duration

	// Sealer is the functions' lambdaidem.Options.Sealer, for [Records]:
	// Resolve seals the outcome it stores and Outcome opens a stored one,
	// as the Guard does; before sealing, Resolve opens the data key of the
	// record's keyed fingerprint, so that a Sealer under another master key
	// or encryption context is refused rather than store an outcome the
	// functions cannot open. A Store ignores it (the Guard seals before an
	// outcome reaches the store). Default none: Records refuses with
	// [ErrSealed] to resolve or open a record it finds sealed.
	Sealer lambdaidem.Sealer

	// Powertools is a cutover window from Powertools for AWS Lambda on
	// this table (see [PowertoolsWindow]). Default: none.
	Powertools PowertoolsWindow
}

func (o *Options) setDefaults() error {
	names := o.attrNames()
	defaults := []string{"id", "", "status", "expiration", "in_progress_expiration", "validation", "data", "attempt", "attempts", "created_at", "completed_at", "external", "renewed_at", "renews", "hold_until", "dispatched_at", "dispatch_window"}
	for i, p := range names {
		if *p.v == "" {
			*p.v = defaults[i]
		}
	}
	seen := make(map[string]string, len(names))
	for _, p := range names {
		if *p.v == "" {
			continue // only the optional sort key may stay empty
		}
		if other, dup := seen[*p.v]; dup {
			return fmt.Errorf("dynamostore: %s and %s are both %q", other, p.name, *p.v)
		}
		seen[*p.v] = p.name
	}
	if err := o.Powertools.validate(o); err != nil {
		return err
	}
	if o.SortKeyAttr != "" && o.SortKeyValue == "" {
		return errors.New("dynamostore: SortKeyValue is required when SortKeyAttr is set")
	}
	if o.SortKeyAttr == "" {
		o.SortKeyValue = ""
	}
	if o.MaxRunTime < 0 {
		return fmt.Errorf("dynamostore: MaxRunTime must not be negative, got %v", o.MaxRunTime)
	}
	if o.MaxRunTime == 0 {
		o.MaxRunTime = 30 * time.Minute
	}
	if o.ConflictRetries == 0 {
		o.ConflictRetries = 8
	}
	if o.ConflictRetries < 0 {
		o.ConflictRetries = 0
	}
	if o.ConflictBackoff < 0 || o.ConflictMaxBackoff < 0 {
		return errors.New("dynamostore: ConflictBackoff and ConflictMaxBackoff must not be negative")
	}
	if o.ConflictBackoff == 0 {
		o.ConflictBackoff = 25 * time.Millisecond
	}
	if o.ConflictMaxBackoff == 0 {
		o.ConflictMaxBackoff = 400 * time.Millisecond
	}
	if o.ConflictMaxBackoff < o.ConflictBackoff {
		return fmt.Errorf("dynamostore: ConflictMaxBackoff %v is shorter than ConflictBackoff %v", o.ConflictMaxBackoff, o.ConflictBackoff)
	}
	return nil
}

type namedAttr struct {
	name string
	v    *string
}

// attrNames lists the attribute name fields in the order of their defaults.
func (o *Options) attrNames() []namedAttr {
	return []namedAttr{
		{"KeyAttr", &o.KeyAttr},
		{"SortKeyAttr", &o.SortKeyAttr},
		{"StatusAttr", &o.StatusAttr},
		{"ExpirationAttr", &o.ExpirationAttr},
		{"InProgressExpirationAttr", &o.InProgressExpirationAttr},
		{"ValidationAttr", &o.ValidationAttr},
		{"DataAttr", &o.DataAttr},
		{"AttemptAttr", &o.AttemptAttr},
		{"AttemptsAttr", &o.AttemptsAttr},
		{"CreatedAtAttr", &o.CreatedAtAttr},
		{"CompletedAtAttr", &o.CompletedAtAttr},
		{"ExternalAttr", &o.ExternalAttr},
		{"RenewedAtAttr", &o.RenewedAtAttr},
		{"RenewsAttr", &o.RenewsAttr},
		{"HoldUntilAttr", &o.HoldUntilAttr},
		{"DispatchedAtAttr", &o.DispatchedAtAttr},
		{"DispatchWindowAttr", &o.DispatchWindowAttr},
	}
}
