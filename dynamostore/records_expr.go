package dynamostore

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The expressions of [Records], with fixed placeholders; the names map
// binds each #name to the attribute the Options give it (see
// expressions.go, where the store's own expressions are).
const (
	// UnchangedCondition fences an operator's write on the record as it was
	// read: the same owner token, status and expiration, and the same lease,
	// hold, last renewal, external mark and attempt count where the read had
	// them. Every write the library makes to a record changes at least one
	// of these: a claim or takeover the token, a commit or a mark-unknown
	// the status, a renewal its renewal time (and its hold; two renewals
	// capped at MaxRunTime write the same lease, so the lease alone does not
	// tell them apart), BeginExternal the external mark. (UNKNOWN and
	// external records have no expiration, and none appears on them.) An
	// attribute the read did not have is compared with a value no record of
	// the library holds (see unchangedValues), so its appearance is refused.
	UnchangedCondition = "#status = :status AND #attempt = :attempt" +
		" AND (attribute_not_exists(#expiration) OR #expiration = :expiration)" +
		" AND (attribute_not_exists(#lease) OR #lease = :lease)" +
		" AND (attribute_not_exists(#holdUntil) OR #holdUntil = :holdUntil)" +
		" AND (attribute_not_exists(#renewedAt) OR #renewedAt = :renewedAt)" +
		" AND (attribute_not_exists(#external) OR #external = :external)" +
		" AND (attribute_not_exists(#attempts) OR #attempts = :attempts)"

	// CurrentRecordsFilter keeps, in a scan of a table shared with other
	// items (a single-table design with a sort key), the items that carry
	// the records' static sort key value.
	CurrentRecordsFilter = "#sk = :sk"

	// statusFilter keeps, in a scan ([ScanOptions].Status), the records of
	// one status; with a sort key, currentStatusFilter also keeps only
	// the records' items. DynamoDB applies a filter after it reads each
	// page: it sends fewer items, but reads (and charges for) every one.
	statusFilter        = "#status = :status"
	currentStatusFilter = CurrentRecordsFilter + " AND " + statusFilter
)

// unchangedValues are the values UnchangedCondition compares with: those
// of the record r as read. An attribute r did not have gets a value no
// record of the library holds with it (lease, hold and renewal time 0,
// external false, attempts 0), so that its appearance is refused too.
func unchangedValues(r lambdaidem.Record) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		":status":     str(string(r.Status)),
		":attempt":    str(r.Token),
		":expiration": num(r.ExpiresAt.Unix()),
		":lease":      num(unixMilliOrZero(r.LeaseUntil)),
		":holdUntil":  num(unixMilliOrZero(r.HoldUntil)),
		":renewedAt":  num(unixMilliOrZero(r.RenewedAt)),
		":external":   &types.AttributeValueMemberBOOL{Value: r.External},
		":attempts":   num(int64(r.Attempts)),
	}
}

// unixMilliOrZero is t in Unix milliseconds, 0 for the zero time (an
// attribute the record does not have).
func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
