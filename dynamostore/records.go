package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// Conditions an operator's tool tests with [errors.Is].
var (
	// ErrTableNotFound: the table does not exist (in this account and
	// Region, at this endpoint).
	ErrTableNotFound = errors.New("dynamostore: table not found")
	// ErrRecordNotFound: no item has this record key.
	ErrRecordNotFound = errors.New("dynamostore: record not found")
	// ErrRecordChanged: the record is no longer what was read (an attempt
	// claimed, committed, renewed or marked it, or someone else settled
	// it); nothing was written. Read it again and decide again.
	ErrRecordChanged = errors.New("dynamostore: record changed since it was read")
	// ErrNotSettleable: the record is not in a state [Records.Resolve]
	// settles (lambdaidem.VerdictReconcile: UNKNOWN, or in progress with an
	// external effect, its lease lapsed and its owner's hold ended);
	// nothing was written.
	ErrNotSettleable = errors.New("dynamostore: record is not unknown")
	// ErrSealed: the record's outcome is sealed, or its fingerprint keyed,
	// by the functions' Sealer, and Records has none (Options.Sealer):
	// it cannot open the outcome, and an outcome it stored unsealed would
	// not open for the functions. Nothing was written.
	ErrSealed = errors.New("dynamostore: the record is sealed; give Records the functions' Sealer (the lambdaidem command: --kms-key)")
	// ErrHeld: the owner of the record may still be running, or its effect
	// still land (lambdaidem.VerdictHeld); nothing was written. See
	// [HeldError] for when that ends.
	ErrHeld = errors.New("dynamostore: record is held by a possibly running owner")
	// ErrMalformedKey: a string is not a record key
	// ("<namespace>#<43 base64url characters>", see lambdaidem.RecordKey).
	ErrMalformedKey = errors.New("dynamostore: malformed record key")
)

// RecordsClient is the part of the DynamoDB API [Records] calls, with the
// SDK's exact signatures; *dynamodb.Client satisfies it. On the table it
// needs dynamodb:DescribeTable, GetItem, Scan, PutItem and DeleteItem.
type RecordsClient interface {
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Records is an operator's view of an idempotency table: it reads records
// (expired ones included: DynamoDB deletes them late), lists them, and
// settles or deletes one, each write fenced on the record as it was read
// ([UnchangedCondition]). It uses the [Store]'s record format and
// attribute names, so give it the same [Options] as the functions' store.
//
//	Check    DescribeTable  the table exists and has the key schema the options say
//	Read     GetItem        strongly consistent
//	Scan     Scan           parallel segments, strongly consistent pages; one status filtered by DynamoDB
//	Resolve  PutItem        the completed record (done), fenced on the read
//	         DeleteItem     the record (not done: released, a retry runs again), fenced on the read
//	Forget   DeleteItem     any record not held, fenced on the read
type Records struct {
	conflicts
	client RecordsClient
	table  string
	opts   Options
	codec  codec
	x      expressions
}

// NewRecords returns Records over the table named table with the options
// applied to the defaults. It returns an error if client is nil, table is
// empty or an option is invalid; it makes no call (see [Records.Check]).
func NewRecords(client RecordsClient, table string, optFns ...func(*Options)) (*Records, error) {
	if client == nil {
		return nil, errors.New("dynamostore: nil client")
	}
	if table == "" {
		return nil, errors.New("dynamostore: empty table name")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	r := &Records{client: client, table: table, opts: o}
	r.conflicts = conflicts{opts: &r.opts}
	r.codec = codec{opts: &r.opts}
	r.x = newExpressions(&r.opts)
	return r, nil
}

// Check makes sure the table exists (else [ErrTableNotFound]) and that its
// key schema is the one the options describe: a partition key KeyAttr
// and, if set, a sort key SortKeyAttr.
func (r *Records) Check(ctx context.Context) error {
	out, err := r.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(r.table)})
	if err != nil {
		return r.wrap("describe table", err)
	}
	if out.Table == nil {
		return fmt.Errorf("dynamostore: describe table %s: no table description", r.table)
	}
	want := map[types.KeyType]string{types.KeyTypeHash: r.opts.KeyAttr}
	if r.opts.SortKeyAttr != "" {
		want[types.KeyTypeRange] = r.opts.SortKeyAttr
	}
	got := map[types.KeyType]string{}
	for _, k := range out.Table.KeySchema {
		got[k.KeyType] = aws.ToString(k.AttributeName)
	}
	for kt, name := range map[types.KeyType]string{types.KeyTypeHash: "partition", types.KeyTypeRange: "sort"} {
		if got[kt] != want[kt] {
			return fmt.Errorf("dynamostore: table %s has %s key %q, the options say %q (give the options the functions' store has)",
				r.table, name, got[kt], want[kt])
		}
	}
	return nil
}

// CheckRecordKey returns an error matching [ErrMalformedKey] unless k has
// the form of a record key: "<namespace>#<hash>", with a namespace of no
// '#' and the 43-character base64url SHA-256 that lambdaidem.RecordKey
// writes, or "<namespace>#<tenant>#<hash>" for a record of a Lambda tenant
// (lambdaidem.TenantRecordKey, lambdaidem.SplitRecordKey).
func CheckRecordKey(k string) error {
	ns, hash, ok := strings.Cut(k, "#")
	tenant, tail, withTenant := strings.Cut(hash, "#")
	if withTenant {
		hash = tail
	}
	switch {
	case !ok:
		return fmt.Errorf("%w: %q has no '#' between namespace and hash", ErrMalformedKey, k)
	case ns == "":
		return fmt.Errorf("%w: %q has an empty namespace", ErrMalformedKey, k)
	case len(hash) != 43 || strings.Trim(hash, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "":
		return fmt.Errorf("%w: %q: the part after '#' is not a 43-character base64url SHA-256", ErrMalformedKey, k)
	}
	if _, _, _, ok := lambdaidem.SplitRecordKey(k); !ok {
		return fmt.Errorf("%w: %q: the tenant part %q is not unpadded base64url", ErrMalformedKey, k, tenant)
	}
	return nil
}

// Read returns the record key with a strongly consistent GetItem, expired
// or not (see lambdaidem.Record.Live). A missing record is an error
// matching [ErrRecordNotFound]; an item that is not a record, one matching
// [ErrMalformedRecord].
func (r *Records) Read(ctx context.Context, key string) (lambdaidem.Record, error) {
	if err := CheckRecordKey(key); err != nil {
		return lambdaidem.Record{}, err
	}
	out, err := r.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.table),
		Key:            r.codec.key(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return lambdaidem.Record{}, r.wrap("get", err)
	}
	if len(out.Item) == 0 {
		return lambdaidem.Record{}, fmt.Errorf("%w: %s in table %s", ErrRecordNotFound, key, r.table)
	}
	rec, err := r.codec.decode(out.Item)
	if err != nil {
		return lambdaidem.Record{}, fmt.Errorf("dynamostore: record %s: %w", key, err)
	}
	return rec, nil
}

// ScanOptions configure [Records.Scan]. The zero value is valid.
type ScanOptions struct {
	// Segments is how many parallel scan segments (and goroutines) read
	// the table. Default 1; at most 1,000,000 (DynamoDB's limit).
	Segments int
	// PageSize caps the items one Scan call reads (its Limit). Default 0:
	// DynamoDB's own page of up to 1 MB.
	PageSize int32
	// Progress, if set, is called after every page with the running totals.
	// Calls are serialized.
	Progress func(ScanProgress)
	// Malformed, if set, is called for every item that is not a record the
	// options can read, with its key attribute and the decoding error.
	// Default: such items are skipped. Calls are serialized with fn's.
	Malformed func(key string, err error)
	// Status, if set, keeps only the records of that status (for instance
	// lambdaidem.StatusUnknown: the records that need a person), with a
	// filter expression DynamoDB applies to each page: fewer items come
	// back, but the scan still reads, and is charged for, every item of
	// the table. Default "": every status.
	Status lambdaidem.Status
}

// ScanProgress is the running total of a scan.
type ScanProgress struct {
	// Pages and Items are the pages and items read so far, all segments
	// together.
	Pages, Items int64
	// SegmentsDone counts the segments that reached the end of the table.
	SegmentsDone, Segments int
}

// Scan reads the whole table with strongly consistent Scan calls, in
// o.Segments parallel segments, and calls fn with every record, expired
// ones included. Calls to fn are serialized (never concurrent), in no
// particular order. The first error, from DynamoDB or from fn, stops the
// scan and is returned.
func (r *Records) Scan(ctx context.Context, o ScanOptions, fn func(lambdaidem.Record) error) error {
	segments := max(o.Segments, 1)
	if segments > 1_000_000 {
		return fmt.Errorf("dynamostore: %d scan segments; DynamoDB allows at most 1000000", segments)
	}
	if o.PageSize < 0 {
		return fmt.Errorf("dynamostore: negative scan page size %d", o.PageSize)
	}
	switch o.Status {
	case "", lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown:
	default:
		return fmt.Errorf("dynamostore: scan for status %q: want %s, %s or %s", o.Status, lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu    sync.Mutex // serializes fn, Malformed and Progress
		pages atomic.Int64
		items atomic.Int64
		done  atomic.Int64
		wg    sync.WaitGroup
	)
	deliver := func(page []map[string]types.AttributeValue, last bool) error {
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err // another segment failed, or fn did
		}
		for _, item := range page {
			if !r.isRecordItem(item) {
				continue
			}
			rec, err := r.codec.decode(item)
			if err != nil {
				if o.Malformed != nil {
					k, _ := item[r.opts.KeyAttr].(*types.AttributeValueMemberS)
					var key string
					if k != nil {
						key = k.Value
					}
					o.Malformed(key, err)
				}
				continue
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		p, n := pages.Add(1), items.Add(int64(len(page)))
		d := done.Load()
		if last {
			d = done.Add(1)
		}
		if o.Progress != nil {
			o.Progress(ScanProgress{Pages: p, Items: n, SegmentsDone: int(d), Segments: segments})
		}
		return nil
	}
	for seg := range segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.scanSegment(ctx, r.scanInput(seg, segments, o), deliver); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// scanInput is the first Scan request of segment seg of segments: a
// strongly consistent read, filtered to the records' items of a shared
// table (CurrentRecordsFilter) and to o.Status (statusFilter).
func (r *Records) scanInput(seg, segments int, o ScanOptions) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{TableName: aws.String(r.table), ConsistentRead: aws.Bool(true)}
	if segments > 1 {
		in.Segment, in.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(segments))
	}
	if o.PageSize > 0 {
		in.Limit = aws.Int32(o.PageSize)
	}
	shared := r.opts.SortKeyAttr != ""
	var filter expression
	switch {
	case shared && o.Status != "":
		filter = r.x.currentStatusRecords
	case shared:
		filter = r.x.currentRecords
	case o.Status != "":
		filter = r.x.statusRecords
	default:
		return in
	}
	values := map[string]types.AttributeValue{}
	if shared {
		values[":sk"] = str(r.opts.SortKeyValue)
	}
	if o.Status != "" {
		values[":status"] = str(string(o.Status))
	}
	in.FilterExpression = aws.String(filter.cond)
	in.ExpressionAttributeNames = filter.names
	in.ExpressionAttributeValues = values
	return in
}

func (r *Records) scanSegment(ctx context.Context, in *dynamodb.ScanInput,
	deliver func([]map[string]types.AttributeValue, bool) error) error {
	for {
		out, err := r.client.Scan(ctx, in)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return r.wrap("scan", err)
		}
		last := len(out.LastEvaluatedKey) == 0
		if err := deliver(out.Items, last); err != nil {
			return err
		}
		if last {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// isRecordItem reports whether a scanned item is a record and not another
// item of a shared table: with a sort key, it has the records' value.
func (r *Records) isRecordItem(item map[string]types.AttributeValue) bool {
	if r.opts.SortKeyAttr == "" {
		return true
	}
	sk, ok := item[r.opts.SortKeyAttr].(*types.AttributeValueMemberS)
	return ok && sk.Value == r.opts.SortKeyValue
}

// Judge is what an operator may do with rec at now: lambdaidem.Judge, with
// Options.MaxRunTime for records written without a hold. Resolve settles
// only a [lambdaidem.Verdict.Settleable] record, Forget deletes only a
// [lambdaidem.Verdict.Forgettable] one, unless forced.
func (r *Records) Judge(rec lambdaidem.Record, now time.Time) lambdaidem.Verdict {
	return lambdaidem.Judge(rec, now, r.opts.MaxRunTime)
}

// HoldUntil is until when the owner of rec may still be running
// (lambdaidem.HoldUntil, with Options.MaxRunTime for records written
// without a hold).
func (r *Records) HoldUntil(rec lambdaidem.Record) time.Time {
	return lambdaidem.HoldUntil(rec, r.opts.MaxRunTime)
}

// HeldError is what Resolve and Forget return, unforced, for a record whose
// owner may still be running or whose effect may still land
// (lambdaidem.VerdictHeld): nothing was written. It matches [ErrHeld].
type HeldError struct {
	// Key is the record key.
	Key string
	// Status is the record's status.
	Status lambdaidem.Status
	// Until is when the owner's hold ends: the record may be settled or
	// forgotten after it.
	Until time.Time
}

// Error says when the record may be settled.
func (e *HeldError) Error() string {
	return fmt.Sprintf("dynamostore: record %s (%s) is held: its owner may still be running or its effect still land until %s; settle or forget it after that",
		e.Key, e.Status, e.Until.UTC().Format(time.RFC3339))
}

// Unwrap makes the error match ErrHeld.
func (e *HeldError) Unwrap() error { return ErrHeld }

// Resolution is how [Records.Resolve] settles a record.
type Resolution struct {
	// Done says the operation's effect happened: the record becomes
	// COMPLETED with Outcome, and duplicates replay it. When false, the
	// effect did not happen: the record is deleted (released) and the next
	// retry runs the operation again.
	Done bool
	// Outcome is the stored outcome for Done, as
	// lambdaidem.EncodeStoredOutcome returns it. Resolve seals it with
	// Options.Sealer.
	Outcome []byte
	// Now is the operator's clock: the completion time and the time
	// against which the lease is judged lapsed. Required.
	Now time.Time
	// ExpiresAt is when the completed record is forgotten (its TTL); never
	// earlier than the expiration the record had. Zero keeps it, or, on a
	// record that has none (UNKNOWN, external), is Now plus 24 hours
	// (lambdaidem's default retry horizon).
	ExpiresAt time.Time
	// Force settles a record that is held (its owner may still be
	// running, or its effect still land), with the risks that brings: a
	// not-done lets a retry run the effect again while the earlier one may
	// still land; a done may be overwritten by nothing, but the owner's own
	// commit is then fenced out and it replays this outcome.
	Force bool
}

// Resolve settles rec, a record as [Records.Read] or [Records.Scan]
// returned it, fenced on it: if the record changed since it was read the
// result is an error matching [ErrRecordChanged] and nothing is written. A
// record whose owner may still run at res.Now ([Records.Judge] says held)
// is refused with a [*HeldError] unless res.Force is set; any other record
// that is not settleable, with [ErrNotSettleable]. Done writes the completed record (one PutItem, with
// the owner's token, as a reconcile function's commit does, so that a
// stalled owner still running is fenced out and replays it); not done
// deletes it (one DeleteItem).
func (r *Records) Resolve(ctx context.Context, rec lambdaidem.Record, res Resolution) error {
	if res.Now.IsZero() {
		return errors.New("dynamostore: Resolution.Now is required")
	}
	v := r.Judge(rec, res.Now)
	uncertain := rec.Status == lambdaidem.StatusUnknown || rec.Status == lambdaidem.StatusInProgress && rec.External
	switch {
	case v == lambdaidem.VerdictHeld && uncertain:
		if !res.Force {
			return &HeldError{Key: rec.Key, Status: rec.Status, Until: r.HoldUntil(rec)}
		}
	case !v.Settleable():
		return fmt.Errorf("%w: %s is %s%s", ErrNotSettleable, rec.Key, rec.Status, whyNotSettleable(v, rec, r.HoldUntil(rec)))
	}
	if !res.Done {
		return r.deleteUnchanged(ctx, "resolve", rec)
	}
	if len(res.Outcome) == 0 {
		return errors.New("dynamostore: resolving as done needs an outcome")
	}
	outcome := res.Outcome
	switch s := r.opts.Sealer; {
	case s != nil:
		if err := r.sealsAsTheFunctions(ctx, rec); err != nil {
			return err
		}
		var err error
		if outcome, err = s.Seal(ctx, rec.Key, outcome); err != nil {
			return fmt.Errorf("dynamostore: resolve %s: seal the outcome: %w", rec.Key, err)
		}
	case seal.IsKeyedFingerprint(rec.Fingerprint):
		return fmt.Errorf("%w: %s has a keyed fingerprint; an unsealed outcome would not open for the functions", ErrSealed, rec.Key)
	}
	if max := maxOutcome; len(outcome) > max {
		return fmt.Errorf("%w: %d bytes, at most %d fit in a record", lambdaidem.ErrOutcomeTooLarge, len(outcome), max)
	}
	expires := rec.ExpiresAt
	if res.ExpiresAt.After(expires) {
		expires = res.ExpiresAt
	}
	if expires.IsZero() {
		expires = res.Now.Add(defaultRetention)
	}
	item := r.codec.completed(lambdaidem.Commit{
		Key: rec.Key, Token: rec.Token, Fingerprint: rec.Fingerprint, Outcome: outcome,
		Now: res.Now, ExpiresAt: expires, Attempts: rec.Attempts, CreatedAt: rec.CreatedAt,
	})
	return r.unchanged(ctx, "resolve", rec.Key, func() error {
		_, err := r.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(r.table),
			Item:                      item,
			ConditionExpression:       aws.String(r.x.unchanged.cond),
			ExpressionAttributeNames:  r.x.unchanged.names,
			ExpressionAttributeValues: unchangedValues(rec),
		})
		return err
	})
}

// sealsAsTheFunctions makes sure, before Resolve seals an outcome for rec,
// that Options.Sealer is the functions' one: it opens the data key rec's
// keyed fingerprint names (one key service call), which fails under
// another master key or another encryption context, as opening the
// outcome would fail for the functions. A record without a keyed
// fingerprint cannot tell, and passes.
func (r *Records) sealsAsTheFunctions(ctx context.Context, rec lambdaidem.Record) error {
	k, ok := r.opts.Sealer.(lambdaidem.FingerprintKeyer)
	if !ok || !seal.IsKeyedFingerprint(rec.Fingerprint) {
		return nil
	}
	// Only the error matters: the fingerprint compared with nothing is
	// never the same.
	if _, err := k.SameFingerprint(ctx, rec.Key, rec.Fingerprint, ""); err != nil {
		return lambdaidem.OpenFailure(fmt.Sprintf("resolve %s: the Sealer cannot open the data key of the record's fingerprint, "+
			"so the functions could not open an outcome it sealed (another KMS key or encryption context?); nothing was written", rec.Key), err)
	}
	return nil
}

// Outcome returns rec's stored outcome, opened with Options.Sealer and
// decoded (lambdaidem.DecodeStoredOutcome). A sealed outcome without a
// Sealer is an error matching [ErrSealed]; one the key service cannot open
// matches lambdaidem.ErrKeyUnavailable or ErrKeyRefused.
func (r *Records) Outcome(ctx context.Context, rec lambdaidem.Record) (lambdaidem.StoredOutcome, error) {
	if len(rec.Outcome) == 0 {
		return lambdaidem.StoredOutcome{}, fmt.Errorf("dynamostore: record %s holds no outcome (%s)", rec.Key, rec.Status)
	}
	data := rec.Outcome
	switch s := r.opts.Sealer; {
	case s != nil:
		var err error
		if data, err = s.Open(ctx, rec.Key, data); err != nil {
			return lambdaidem.StoredOutcome{}, lambdaidem.OpenFailure(fmt.Sprintf("open the outcome of %s", rec.Key), err)
		}
	case seal.IsSealed(data):
		return lambdaidem.StoredOutcome{}, fmt.Errorf("%w: the outcome of %s is sealed", ErrSealed, rec.Key)
	}
	return lambdaidem.DecodeStoredOutcome(data)
}

// defaultRetention is how long a record resolved as done is kept when
// neither it nor the Resolution says: lambdaidem's default RetryHorizon.
const defaultRetention = 24 * time.Hour

// maxOutcome keeps a resolved record under DynamoDB's 400 KB item limit,
// with room for the other attributes; the Guard's default cap.
const maxOutcome = 300_000

// Forgetting is how [Records.Forget] judges the record.
type Forgetting struct {
	// Now is the operator's clock. Required.
	Now time.Time
	// Force deletes a record that is held (its owner may still be running,
	// or its effect still land): a retry then runs the operation again
	// while the owner may still be running it.
	Force bool
}

// Forget deletes rec, a record as Read or Scan returned it, with one
// DeleteItem fenced on it ([ErrRecordChanged] if it changed). The next
// request with its key runs the operation again: forget a record only when
// that is safe. A held record (lambdaidem.VerdictHeld) is refused with a
// [*HeldError] unless f.Force is set.
func (r *Records) Forget(ctx context.Context, rec lambdaidem.Record, f Forgetting) error {
	if f.Now.IsZero() {
		return errors.New("dynamostore: Forgetting.Now is required")
	}
	if v := r.Judge(rec, f.Now); !v.Forgettable() && !f.Force {
		return &HeldError{Key: rec.Key, Status: rec.Status, Until: r.HoldUntil(rec)}
	}
	return r.deleteUnchanged(ctx, "forget", rec)
}

func (r *Records) deleteUnchanged(ctx context.Context, op string, rec lambdaidem.Record) error {
	return r.unchanged(ctx, op, rec.Key, func() error {
		_, err := r.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 aws.String(r.table),
			Key:                       r.codec.key(rec.Key),
			ConditionExpression:       aws.String(r.x.unchanged.cond),
			ExpressionAttributeNames:  r.x.unchanged.names,
			ExpressionAttributeValues: unchangedValues(rec),
		})
		return err
	})
}

// unchanged sends a write fenced on the record as read, retrying it after
// a transaction conflict as the Store does (Options.ConflictRetries, with
// backoff): a transaction in flight that is cancelled leaves the record as
// read, and the retry then writes. A failed condition, or a conflict that
// outlasts the retries, is ErrRecordChanged.
func (r *Records) unchanged(ctx context.Context, op, key string, write func() error) error {
	err := r.single(ctx, op, r.opts.ConflictRetries, write)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ccf):
		return fmt.Errorf("%w: %s %s: read it again", ErrRecordChanged, op, key)
	case errors.Is(err, lambdaidem.ErrInProgress):
		// A transaction (an attempt's commit) kept writing the record: it
		// is about to change. Nothing was written.
		return fmt.Errorf("%w: %s %s: a transaction kept writing it; read it again: %w", ErrRecordChanged, op, key, err)
	}
	return r.wrap(op, err)
}

// wrap classifies err as the Store does, and a missing table as
// ErrTableNotFound.
func (r *Records) wrap(op string, err error) error {
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return fmt.Errorf("%w: %s (%s: %v)", ErrTableNotFound, r.table, op, err)
	}
	return wrapErr(op, err)
}

// whyNotSettleable says why a record of verdict v is not settleable.
func whyNotSettleable(v lambdaidem.Verdict, rec lambdaidem.Record, hold time.Time) string {
	switch {
	case rec.Status != lambdaidem.StatusInProgress:
		return ""
	case v == lambdaidem.VerdictHeld:
		return fmt.Sprintf(" without an external effect, its owner may run until %s (then a retry takes it over)", hold.UTC().Format(time.RFC3339))
	case !rec.External:
		return " without an external effect (a retry takes it over)"
	}
	return ""
}
