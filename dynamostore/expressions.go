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

	// leaseLapsed: a record in progress whose owner's lease ended before
	// now, with no external effect begun: the record a takeover may claim.
	leaseLapsed = "#status = :inProgress AND #lease < :nowMs AND attribute_not_exists(#external)"

	// claimCondition admits a claim's UpdateItem: an absent record, or a
	// live one whose lease lapsed (a takeover). An expired record is left
	// to replaceCondition: an update cannot restart its counters.
	claimCondition = absent + " OR (#expiration >= :nowSec AND " + leaseLapsed + ")"

	// replaceCondition admits the PutItem that writes a fresh claim over an
	// absent or expired record.
	replaceCondition = absent + " OR #expiration < :nowSec"

	// optimisticCommitCondition admits a commit that claims as it commits
	// (Claim set on the Commit): absent, expired, or its lease lapsed.
	optimisticCommitCondition = replaceCondition + " OR (" + leaseLapsed + ")"

	// fenceCondition: the attempt's own record, in progress or unknown. A
	// commit and a release are fenced on it.
	fenceCondition = "#attempt = :token AND #status IN (:inProgress, :unknown)"

	// runningCondition: the attempt's own record, still in progress. The
	// marks are fenced on it.
	runningCondition = "#attempt = :token AND #status = :inProgress"

	// renewCondition admits a renewal while the record runs and neither
	// its lease nor its TTL has ended, so that a lease the claim would take
	// over is never revived.
	renewCondition = runningCondition + " AND #lease >= :nowMs AND #expiration >= :nowSec"

	// claimSet is what a claim writes: the owner, its lease and TTL, the
	// creation time of the first claim and one more attempt.
	claimSet = "SET #status = :inProgress, #attempt = :token, #lease = :lease, #expiration = :expiration," +
		" #createdAt = if_not_exists(#createdAt, :createdAt), #attempts = if_not_exists(#attempts, :zero) + :one"

	// claimUpdate is a claim with a request fingerprint; a takeover drops
	// what an earlier attempt left.
	claimUpdate = claimSet + ", #validation = :fingerprint REMOVE #data, #completedAt"

	// claimUpdateUnvalidated is a claim without a fingerprint.
	claimUpdateUnvalidated = claimSet + " REMOVE #data, #completedAt, #validation"

	// markExternalUpdate marks an external effect begun.
	markExternalUpdate = "SET #external = :true"

	// markUnknownUpdate moves the record to unknown, remembered until
	// :expiration.
	markUnknownUpdate = "SET #status = :unknown, #expiration = :expiration"

	// renewUpdate sets the new lease, the TTL that outlasts it and the
	// renewal time; every other attribute (the external mark included) is
	// kept.
	renewUpdate = "SET #lease = :lease, #expiration = :expiration, #renewedAt = :renewedAt"
)

// attributeNames binds every #name placeholder of the expressions to the
// attribute o gives it.
func attributeNames(o *Options) map[string]string {
	return map[string]string{
		"#key":         o.KeyAttr,
		"#sk":          o.SortKeyAttr,
		"#status":      o.StatusAttr,
		"#expiration":  o.ExpirationAttr,
		"#lease":       o.InProgressExpirationAttr,
		"#validation":  o.ValidationAttr,
		"#data":        o.DataAttr,
		"#attempt":     o.AttemptAttr,
		"#attempts":    o.AttemptsAttr,
		"#createdAt":   o.CreatedAtAttr,
		"#completedAt": o.CompletedAtAttr,
		"#external":    o.ExternalAttr,
		"#renewedAt":   o.RenewedAtAttr,
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
	release, markExternal, markUnknown, renew                  expression
	unchanged, currentRecords                                  expression
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
		claim:            x(claimCondition, claimUpdate),
		claimUnvalidated: x(claimCondition, claimUpdateUnvalidated),
		replace:          x(replaceCondition, ""),
		commit:           x(fenceCondition, ""),
		optimisticCommit: x(optimisticCommitCondition, ""),
		release:          x(fenceCondition, ""),
		markExternal:     x(runningCondition, markExternalUpdate),
		markUnknown:      x(runningCondition, markUnknownUpdate),
		renew:            x(renewCondition, renewUpdate),
		unchanged:        x(UnchangedCondition, ""),
		currentRecords:   x(CurrentRecordsFilter, ""),
	}
}

// namePlaceholder matches the #name placeholders of an expression.
var namePlaceholder = regexp.MustCompile(`#[A-Za-z]+`)

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
