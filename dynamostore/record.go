package dynamostore

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// codec maps records to DynamoDB items and back, with the configured
// attribute names.
//
// Times are stored truncated to the attribute's unit: expiration in Unix
// seconds, the others in Unix milliseconds. A condition that asks whether a
// stored time has passed compares it with now rounded up to the same unit,
// which gives exactly the answer of time.Time.Before on the decoded value,
// so a record the store refuses to replace is never one the core treats as
// expired, nor the other way round.
type codec struct{ opts *Options }

// key is the primary key of the record with record key k.
func (c codec) key(k string) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{c.opts.KeyAttr: str(k)}
	if c.opts.SortKeyAttr != "" {
		m[c.opts.SortKeyAttr] = str(c.opts.SortKeyValue)
	}
	return m
}

// isRecordKey reports whether key is the primary key of the record k.
func (c codec) isRecordKey(key map[string]types.AttributeValue, k string) bool {
	for attr, want := range c.key(k) {
		got, ok := key[attr].(*types.AttributeValueMemberS)
		if !ok || got.Value != want.(*types.AttributeValueMemberS).Value {
			return false
		}
	}
	return true
}

// completed is the whole item of a completed record written by commit cm.
func (c codec) completed(cm lambdaidem.Commit) map[string]types.AttributeValue {
	o := c.opts
	item := c.key(cm.Key)
	item[o.StatusAttr] = str(string(lambdaidem.StatusCompleted))
	item[o.AttemptAttr] = str(cm.Token)
	item[o.AttemptsAttr] = num(int64(cm.Attempts))
	item[o.ExpirationAttr] = num(cm.ExpiresAt.Unix())
	item[o.CompletedAtAttr] = num(cm.Now.UnixMilli())
	if cm.Fingerprint != "" {
		item[o.ValidationAttr] = str(cm.Fingerprint)
	}
	if len(cm.Outcome) > 0 {
		item[o.DataAttr] = outcomeValue(cm.Outcome)
	}
	if !cm.CreatedAt.IsZero() {
		item[o.CreatedAtAttr] = num(cm.CreatedAt.UnixMilli())
	}
	return item
}

// outcomeValue is the attribute value of a stored outcome: a String when
// it is UTF-8 text (JSON, readable as it is by tools), else a Binary (a
// gzip stream or sealed bytes: a String must be valid UTF-8, and the SDK
// would replace the invalid bytes).
func outcomeValue(outcome []byte) types.AttributeValue {
	if utf8.Valid(outcome) {
		return str(string(outcome))
	}
	return &types.AttributeValueMemberB{Value: outcome}
}

// decode reads a record from an item. Missing required attributes (key,
// status, expiration) and attributes of the wrong type are errors matching
// [ErrMalformedRecord]; it never panics.
func (c codec) decode(item map[string]types.AttributeValue) (lambdaidem.Record, error) {
	o := c.opts
	d := decoder{item: item}
	var r lambdaidem.Record
	r.Key = d.str(o.KeyAttr, true)
	r.Status = lambdaidem.Status(d.str(o.StatusAttr, true))
	r.ExpiresAt = d.time(o.ExpirationAttr, time.Second, false)
	r.Token = d.str(o.AttemptAttr, false)
	r.Fingerprint = d.str(o.ValidationAttr, false)
	r.Outcome = d.bytes(o.DataAttr)
	r.Attempts = int(d.int(o.AttemptsAttr, false))
	r.LeaseUntil = d.time(o.InProgressExpirationAttr, time.Millisecond, false)
	r.CreatedAt = d.time(o.CreatedAtAttr, time.Millisecond, false)
	r.CompletedAt = d.time(o.CompletedAtAttr, time.Millisecond, false)
	r.External = d.boolean(o.ExternalAttr)
	r.RenewedAt = d.time(o.RenewedAtAttr, time.Millisecond, false)
	r.Renews = d.boolean(o.RenewsAttr)
	r.HoldUntil = d.time(o.HoldUntilAttr, time.Millisecond, false)
	r.DispatchedAt = d.time(o.DispatchedAtAttr, time.Millisecond, false)
	r.DispatchWindow = time.Duration(d.int(o.DispatchWindowAttr, false)) * time.Millisecond
	if d.err == nil {
		switch r.Status {
		case lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown:
		default:
			d.fail(o.StatusAttr, fmt.Sprintf("unknown status %q", r.Status))
		}
	}
	if _, ok := item[o.ExpirationAttr]; !ok && d.err == nil && r.Status != lambdaidem.StatusUnknown && !r.External {
		// Only UNKNOWN and external records go without an expiration.
		d.fail(o.ExpirationAttr, "is missing")
	}
	if d.err != nil {
		return lambdaidem.Record{}, d.err
	}
	return r, nil
}

// decoder reads typed attributes and keeps the first error.
type decoder struct {
	item map[string]types.AttributeValue
	err  error
}

func (d *decoder) fail(attr, reason string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: attribute %q %s", ErrMalformedRecord, attr, reason)
	}
}

func (d *decoder) str(attr string, required bool) string {
	switch v := d.item[attr].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case nil:
		if required {
			d.fail(attr, "is missing")
		}
	default:
		d.fail(attr, fmt.Sprintf("is a %T, want a String", v))
	}
	return ""
}

// boolean reads an optional Boolean attribute; absent is false.
func (d *decoder) boolean(attr string) bool {
	switch v := d.item[attr].(type) {
	case *types.AttributeValueMemberBOOL:
		return v.Value
	case nil:
	default:
		d.fail(attr, fmt.Sprintf("is a %T, want a Boolean", v))
	}
	return false
}

func (d *decoder) bytes(attr string) []byte {
	switch v := d.item[attr].(type) {
	case *types.AttributeValueMemberS:
		return []byte(v.Value)
	case *types.AttributeValueMemberB:
		return v.Value
	case nil:
	default:
		d.fail(attr, fmt.Sprintf("is a %T, want a String or Binary", v))
	}
	return nil
}

func (d *decoder) int(attr string, required bool) int64 {
	switch v := d.item[attr].(type) {
	case *types.AttributeValueMemberN:
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			return n
		}
		// Other writers may store a decimal ("1700000000.0"): read it exactly,
		// in DynamoDB's decimal syntax only (no hex, underscores or infinities),
		// and truncate it toward zero.
		f, _, err := big.ParseFloat(v.Value, 10, 256, big.ToZero)
		if err != nil || f.IsInf() {
			d.fail(attr, fmt.Sprintf("is not an integer: %q", v.Value))
			return 0
		}
		n, acc := f.Int64()
		if acc != big.Exact && (n == math.MaxInt64 || n == math.MinInt64) {
			d.fail(attr, fmt.Sprintf("is out of range: %q", v.Value))
			return 0
		}
		return n
	case nil:
		if required {
			d.fail(attr, "is missing")
		}
	default:
		d.fail(attr, fmt.Sprintf("is a %T, want a Number", v))
	}
	return 0
}

// time reads a Number of units since the Unix epoch; absent is zero.
func (d *decoder) time(attr string, unit time.Duration, required bool) time.Time {
	if _, ok := d.item[attr]; !ok {
		d.int(attr, required)
		return time.Time{}
	}
	n := d.int(attr, required)
	if unit == time.Second {
		return time.Unix(n, 0)
	}
	return time.UnixMilli(n)
}

// ceilSec is t in Unix seconds, rounded up.
func ceilSec(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() != 0 {
		s++
	}
	return s
}

// ceilMilli is t in Unix milliseconds, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}
