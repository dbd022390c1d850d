package dynamostore

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// fuzzItem builds an attribute map from lines "name:T:value", where T is
// S, N, B, BOOL, NULL, L, M, SS or NS. A line that does not parse is skipped.
func fuzzItem(spec string) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{}
	for line := range strings.SplitSeq(spec, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		name, typ, v := parts[0], parts[1], parts[2]
		switch typ {
		case "S":
			item[name] = &types.AttributeValueMemberS{Value: v}
		case "N":
			item[name] = &types.AttributeValueMemberN{Value: v}
		case "B":
			item[name] = &types.AttributeValueMemberB{Value: []byte(v)}
		case "BOOL":
			item[name] = &types.AttributeValueMemberBOOL{Value: v == "true"}
		case "NULL":
			item[name] = &types.AttributeValueMemberNULL{Value: true}
		case "L":
			item[name] = &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: v}}}
		case "M":
			item[name] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"v": &types.AttributeValueMemberS{Value: v}}}
		case "SS":
			item[name] = &types.AttributeValueMemberSS{Value: []string{v}}
		case "NS":
			item[name] = &types.AttributeValueMemberNS{Value: []string{v}}
		}
	}
	return item
}

// numberInt64 is the reference reading of a Number attribute: its value
// truncated toward zero, if that fits in an int64.
func numberInt64(s string) (int64, bool) {
	f, _, err := big.ParseFloat(s, 10, 256, big.ToZero)
	if err != nil || f.IsInf() {
		return 0, false
	}
	i, acc := f.Int64()
	if acc != big.Exact && (i == math.MaxInt64 || i == math.MinInt64) {
		return 0, false // out of range
	}
	return i, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzDecodeRecord decodes arbitrary attribute maps as records. Whatever
// the table holds, decode never panics; it either fails with an error
// matching ErrMalformedRecord and a zero Record, or returns a record that
// says exactly what the item says: a known status, the stored outcome and
// fingerprint byte for byte (so a replay can only replay what was stored,
// and only to a request with the stored fingerprint), and every number
// read exactly (a number out of int64 range is an error, not a wrapped
// time that would make a completed record look expired).
func FuzzDecodeRecord(f *testing.F) {
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:1900000000\nvalidation:S:fp\ndata:S:{\"value\":1}\nattempt:S:tok\nattempts:N:1\ncreated_at:N:1700000000000\ncompleted_at:N:1700000000001")
	f.Add("id:S:ns#abc\nstatus:S:INPROGRESS\nexpiration:N:1900000000\nin_progress_expiration:N:1700000005000\nattempt:S:tok\nattempts:N:2")
	f.Add("id:S:ns#abc\nstatus:S:UNKNOWN\nexpiration:N:1900000000.0\nattempt:S:tok")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:S:1900000000")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED")
	f.Add("status:S:COMPLETED\nexpiration:N:1")
	f.Add("id:S:ns#abc\nstatus:S:DONE\nexpiration:N:1")
	f.Add("id:S:ns#abc\nstatus:N:1\nexpiration:N:1")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:1e400")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:9223372036854775808")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:-9223372036854775809")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:NaN\ndata:B:\x00\xff")
	f.Add("id:S:ns#abc\nstatus:S:COMPLETED\nexpiration:N:1\ndata:M:x\nvalidation:BOOL:true")
	f.Add("id:L:x\nstatus:SS:COMPLETED\nexpiration:NS:1\nattempts:NULL:")

	var o Options
	if err := o.setDefaults(); err != nil {
		f.Fatal(err)
	}
	c := codec{opts: &o}
	numbers := []string{o.ExpirationAttr, o.InProgressExpirationAttr, o.AttemptsAttr, o.CreatedAtAttr, o.CompletedAtAttr}
	strs := []string{o.KeyAttr, o.StatusAttr, o.ValidationAttr, o.AttemptAttr}

	f.Fuzz(func(t *testing.T, spec string) {
		item := fuzzItem(spec)
		rec, err := c.decode(item)
		if err != nil {
			if !errors.Is(err, ErrMalformedRecord) {
				t.Fatalf("error %v does not match ErrMalformedRecord", err)
			}
			if rec.Exists() || rec.Key != "" || rec.Outcome != nil {
				t.Fatalf("a failed decode returned a record: %+v", rec)
			}
			return
		}
		switch rec.Status {
		case lambdaidem.StatusInProgress, lambdaidem.StatusCompleted, lambdaidem.StatusUnknown:
		default:
			t.Fatalf("decoded unknown status %q", rec.Status)
		}
		for _, name := range strs {
			v, present := item[name]
			s, isS := v.(*types.AttributeValueMemberS)
			if present && !isS {
				t.Fatalf("%s is a %T and decoded without error", name, v)
			}
			if (name == o.KeyAttr || name == o.StatusAttr) && !present {
				t.Fatalf("required %s is missing and decoded without error", name)
			}
			var want string
			if isS {
				want = s.Value
			}
			got := map[string]string{o.KeyAttr: rec.Key, o.StatusAttr: string(rec.Status), o.ValidationAttr: rec.Fingerprint, o.AttemptAttr: rec.Token}[name]
			if got != want {
				t.Fatalf("%s: decoded %q, the item holds %q", name, got, want)
			}
		}
		switch v := item[o.DataAttr].(type) {
		case nil:
			if rec.Outcome != nil {
				t.Fatalf("no data attribute, outcome %q", rec.Outcome)
			}
		case *types.AttributeValueMemberS:
			if string(rec.Outcome) != v.Value {
				t.Fatalf("outcome %q, stored %q", rec.Outcome, v.Value)
			}
		case *types.AttributeValueMemberB:
			if string(rec.Outcome) != string(v.Value) {
				t.Fatalf("outcome %q, stored %q", rec.Outcome, v.Value)
			}
		default:
			t.Fatalf("data is a %T and decoded without error", v)
		}
		// UNKNOWN and external records carry no expiration (they never
		// expire unresolved, DESIGN §2.6); every other record must.
		if _, ok := item[o.ExpirationAttr]; !ok && rec.Status != lambdaidem.StatusUnknown && !rec.External {
			t.Fatalf("required %s is missing and decoded without error", o.ExpirationAttr)
		}
		for _, name := range numbers {
			v, present := item[name]
			if !present {
				continue
			}
			n, isN := v.(*types.AttributeValueMemberN)
			if !isN {
				t.Fatalf("%s is a %T and decoded without error", name, v)
			}
			want, ok := numberInt64(n.Value)
			if !ok {
				t.Fatalf("%s = %q is not an int64 and decoded without error", name, n.Value)
			}
			var got int64
			switch name {
			case o.ExpirationAttr:
				got = rec.ExpiresAt.Unix()
			case o.InProgressExpirationAttr:
				got = rec.LeaseUntil.UnixMilli()
			case o.AttemptsAttr:
				got = int64(rec.Attempts)
			case o.CreatedAtAttr:
				got = rec.CreatedAt.UnixMilli()
			case o.CompletedAtAttr:
				got = rec.CompletedAt.UnixMilli()
			}
			// A decimal or exponent form is read through a float64: exact up
			// to 2^53, within a relative 2^-52 beyond (far past any timestamp).
			var slack int64
			if _, err := strconv.ParseInt(n.Value, 10, 64); err != nil {
				slack = abs(want)>>52 + 1
			}
			if d := got - want; d > slack || d < -slack {
				t.Fatalf("%s = %q decoded as %d, want %d", name, n.Value, got, want)
			}
		}
	})
}
