package dynamostore

import (
	"regexp"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The condition and update expressions of every request the store and
// [Records] send, each said once, with fixed placeholders: #name stands for
// an attribute (bound from the Options by [attributeNames]) and :name for a
// value (set by the request's builder). A larger expression is composed of
// the named parts it shares with others; the golden test prints each one
// whole (testdata/expressions.golden).
const (
	// absent: no record under the key.
	absent = "attribute_not_exists(#key)"

	// held says lambdaidem.OwnerMayRun of an INPROGRESS or UNKNOWN record:
	// its lease or its recorded hold has not ended, or, on a record
	// written without a hold (before the hold was recorded), its last
	// sign of life (its last renewal, else its lease end) is within the
	// claimant's window: :sinceMs is now minus Claim.Window, rounded up.
	held = "(#lease >= :nowMs OR #holdUntil >= :nowMs OR (attribute_not_exists(#holdUntil) AND" +
		" (#renewedAt >= :sinceMs OR (attribute_not_exists(#renewedAt) AND #lease >= :sinceMs))))"

	// takeable: an in-progress record without an external effect whose
	// owner cannot be running any more (lambdaidem.VerdictTakeOver, or
	// VerdictExpired once past its expiration). Its lease has lapsed: a
	// lease that runs is held.
	takeable = "#status = :inProgress AND attribute_not_exists(#external) AND NOT " + held

	// expired: past the record's expiration. UNKNOWN and external records
	// never expire (they have no expiration, or one written before that
	// rule, which the conditions that use expired exclude by status).
	expired = "#expiration < :nowSec"

	// claimCondition admits a claim's UpdateItem: an absent record, or a
	// live takeable one (lambdaidem.VerdictTakeOver). An expired record is
	// left to replaceCondition: an update cannot restart its counters.
	claimCondition = absent + " OR (#expiration >= :nowSec AND " + takeable + ")"

	// replaceCondition admits the PutItem that writes a fresh claim over an
	// absent or expired record (lambdaidem.VerdictExpired): a COMPLETED
	// record past its expiration, or a takeable one.
	replaceCondition = absent + " OR (" + expired + " AND (#status = :completed OR (" + takeable + ")))"

	// optimisticCommitCondition admits a commit that claims as it commits
	// (Claim set on the Commit): any claimable verdict, absent, expired or
	// takeable.
	optimisticCommitCondition = absent + " OR (" + expired + " AND #status = :completed) OR (" + takeable + ")"

	// fenceCondition: the attempt's own record, in progress or unknown. A
	// commit and a release are fenced on it.
	fenceCondition = "#attempt = :token AND #status IN (:inProgress, :unknown)"

	// runningCondition: the attempt's own record, still in progress. The
	// marks are fenced on it.
	runningCondition = "#attempt = :token AND #status = :inProgress"

	// renewCondition admits a renewal while the record runs and its lease
	// has not ended, so that a lease a claim could take over is never
	// revived (a running lease is held), and only if it does not move the
	// owner's last renewal back: a renewal whose client gave up, applied by
	// DynamoDB after a later one of the same attempt got through, would set
	// the earlier lease, hold and renewal time again, and a reader would end
	// the hold before the owner has been silent for MaxRunTime (the spin
	// model's finding F4). The renewal time, not the lease, tells them
	// apart: two renewals capped at MaxRunTime ask for the same lease.
	renewCondition = runningCondition + " AND #lease >= :nowMs AND (attribute_not_exists(#renewedAt) OR #renewedAt <= :renewedAt)"

	// renewUnmarkedCondition admits a renewal that sets an expiration
	// (renewUpdate) only on a record without the external mark: a renewal
	// sent before BeginExternal's mark and applied after it (DynamoDB
	// applies a request whose client gave up when it arrives) would
	// otherwise put a TTL back on the external record, and TTL deletion
	// would forget an unresolved external effect (model/record.pml).
	renewUnmarkedCondition = renewCondition + " AND attribute_not_exists(#external)"

	// claimSet is what a claim writes: the owner, its lease, hold and TTL,
	// whether it renews, the creation time of the first claim and one more
	// attempt.
	claimSet = "SET #status = :inProgress, #attempt = :token, #lease = :lease, #expiration = :expiration," +
		" #renews = :renews, #holdUntil = :holdUntil," +
		" #createdAt = if_not_exists(#createdAt, :createdAt), #attempts = if_not_exists(#attempts, :zero) + :one"

	// claimUpdate is a claim with a request fingerprint; a takeover drops
	// what an earlier attempt left, the former owner's last renewal among
	// it: the new owner has not renewed, and an UNKNOWN record is held
	// only with a renewal of its own owner on record (lambdaidem.OwnerMayRun).
	claimUpdate = claimSet + ", #validation = :fingerprint REMOVE #data, #completedAt, #renewedAt"

	// claimUpdateUnvalidated is a claim without a fingerprint.
	claimUpdateUnvalidated = claimSet + " REMOVE #data, #completedAt, #renewedAt, #validation"

	// markExternalUpdate marks an external effect begun, with the time of
	// its first dispatch and the downstream's deduplication window (the
	// first mark's, kept); the record no longer expires.
	markExternalUpdate = "SET #external = :true, #dispatchedAt = if_not_exists(#dispatchedAt, :dispatchedAt)," +
		" #dispatchWindow = if_not_exists(#dispatchWindow, :dispatchWindow) REMOVE #expiration"

	// markUnknownUpdate moves the record to unknown, kept until resolved.
	markUnknownUpdate = "SET #status = :unknown REMOVE #expiration"

	// renewUpdate sets the new lease, the hold and TTL that outlast it and
	// the renewal time; every other attribute (the external mark included)
	// is kept.
	renewUpdate = "SET #lease = :lease, #expiration = :expiration, #renewedAt = :renewedAt, #holdUntil = :holdUntil"

	// renewExternalUpdate is the renewal of a record its owner marked
	// external: no expiration.
	renewExternalUpdate = "SET #lease = :lease, #renewedAt = :renewedAt, #holdUntil = :holdUntil REMOVE #expiration"
)

// attributeNames binds every #name placeholder of the expressions to the
// attribute o gives it.
func attributeNames(o *Options) map[string]string {
	return map[string]string{
		"#key":            o.KeyAttr,
		"#sk":             o.SortKeyAttr,
		"#status":         o.StatusAttr,
		"#expiration":     o.ExpirationAttr,
		"#lease":          o.InProgressExpirationAttr,
		"#validation":     o.ValidationAttr,
		"#data":           o.DataAttr,
		"#attempt":        o.AttemptAttr,
		"#attempts":       o.AttemptsAttr,
		"#createdAt":      o.CreatedAtAttr,
		"#completedAt":    o.CompletedAtAttr,
		"#external":       o.ExternalAttr,
		"#renewedAt":      o.RenewedAtAttr,
		"#renews":         o.RenewsAttr,
		"#holdUntil":      o.HoldUntilAttr,
		"#dispatchedAt":   o.DispatchedAtAttr,
		"#dispatchWindow": o.DispatchWindowAttr,
	}
}

// expression is the condition and update of one kind of request, with the
// names map of exactly the placeholders they use: DynamoDB refuses a
// request whose ExpressionAttributeNames has an entry no expression uses.
type expression struct {
	cond, update string
	names        map[string]string
}

// expressions are the store's requests, their names maps built once from
// the Options.
type expressions struct {
	claim, claimUnvalidated, replace, commit, optimisticCommit expression
	release, markExternal, markUnknown, renew, renewExternal   expression
	unchanged, currentRecords                                  expression
	statusRecords, currentStatusRecords                        expression
}

// newExpressions binds the expressions to the attribute names of o.
func newExpressions(o *Options) expressions {
	all := attributeNames(o)
	x := func(cond, update string) expression {
		names := map[string]string{}
		for _, p := range namePlaceholder.FindAllString(cond+" "+update, -1) {
			names[p] = all[p]
		}
		return expression{cond: cond, update: update, names: names}
	}
	return expressions{
		claim:                x(claimCondition, claimUpdate),
		claimUnvalidated:     x(claimCondition, claimUpdateUnvalidated),
		replace:              x(replaceCondition, ""),
		commit:               x(fenceCondition, ""),
		optimisticCommit:     x(optimisticCommitCondition, ""),
		release:              x(fenceCondition, ""),
		markExternal:         x(runningCondition, markExternalUpdate),
		markUnknown:          x(runningCondition, markUnknownUpdate),
		renew:                x(renewUnmarkedCondition, renewUpdate),
		renewExternal:        x(renewCondition, renewExternalUpdate),
		unchanged:            x(UnchangedCondition, ""),
		currentRecords:       x(CurrentRecordsFilter, ""),
		statusRecords:        x(statusFilter, ""),
		currentStatusRecords: x(currentStatusFilter, ""),
	}
}

// namePlaceholder matches the #name placeholders of an expression.
var namePlaceholder = regexp.MustCompile(`#[A-Za-z]+`)

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
