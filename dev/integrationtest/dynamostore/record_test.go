package dynamostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

type item = map[string]types.AttributeValue

func S(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func N(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// TestDecodeMalformedRecords: an item the store cannot read is a clear
// error matching ErrMalformedRecord that names the attribute, never a
// panic. Every item here is one DynamoDB stores.
func TestDecodeMalformedRecords(t *testing.T) {
	e := newEnv(t)
	valid := func() item {
		return item{"status": S("COMPLETED"), "expiration": N("1900000000"), "attempt": S("A"), "attempts": N("1"), "data": S(`"x"`)}
	}
	for _, c := range []struct {
		name string
		edit func(item)
		want string
	}{
		{"NoStatus", func(it item) { delete(it, "status") }, `"status" is missing`},
		{"StatusNumber", func(it item) { it["status"] = N("1") }, `"status" is a`},
		{"UnknownStatus", func(it item) { it["status"] = S("DONE") }, `unknown status "DONE"`},
		{"NoExpiration", func(it item) { delete(it, "expiration") }, `"expiration" is missing`},
		{"ExpirationString", func(it item) { it["expiration"] = S("tomorrow") }, `"expiration" is a`},
		// A Number that is not a number (N("many")) is refused by DynamoDB
		// itself; the decoder's answer to it is a unit test in dynamostore.
		{"AttemptsOutOfRange", func(it item) { it["attempts"] = N("1E+30") }, `"attempts" is out of range`},
		{"AttemptNumber", func(it item) { it["attempt"] = N("7") }, `"attempt" is a`},
		{"DataBool", func(it item) { it["data"] = &types.AttributeValueMemberBOOL{Value: true} }, `"data" is a`},
		{"LeaseList", func(it item) { it["in_progress_expiration"] = &types.AttributeValueMemberL{} }, `"in_progress_expiration" is a`},
	} {
		t.Run(c.name, func(t *testing.T) {
			it := valid()
			c.edit(it)
			it["id"] = S(c.name)
			if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: it}); err != nil {
				t.Fatal(err)
			}
			_, err := e.store.Get(context.Background(), c.name, t0)
			if !errors.Is(err, dynamostore.ErrMalformedRecord) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Get = %v; want ErrMalformedRecord saying %s", err, c.want)
			}
			// DynamoDB fails the claim's condition on such an item and the
			// store cannot decode the old one; minidyn refuses some of the
			// comparisons with a ValidationException instead. Either way the
			// claim is an error, not a takeover.
			if _, ok, err := e.store.Claim(context.Background(), claimOf(c.name, "B")); ok || err == nil {
				t.Fatalf("Claim = %v, %v; want an error", ok, err)
			}
		})
	}
}

// TestDecodePowertoolsRecord: a record written by Powertools' DynamoDB
// persistence layer (no attempt token or counters; decimal numbers are
// tolerated too) reads as a completed record.
func TestDecodePowertoolsRecord(t *testing.T) {
	e := newEnv(t)
	_, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: item{
		"id": S("pt"), "status": S("COMPLETED"), "expiration": N("1900000000.0"), "data": S(`{"ok":true}`), "validation": S("abc"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := e.store.Get(context.Background(), "pt", t0)
	if err != nil || rec.Status != lambdaidem.StatusCompleted || string(rec.Outcome) != `{"ok":true}` ||
		rec.Fingerprint != "abc" || !rec.ExpiresAt.Equal(time.Unix(1900000000, 0)) || rec.Token != "" {
		t.Fatalf("Get = %+v, %v", rec, err)
	}
}

// TestRecordAttributes: the item a claim and a commit leave, attribute by
// attribute, with the names and types of the package doc's record item.
func TestRecordAttributes(t *testing.T) {
	e := newEnv(t)
	e.claim(t, "k", "A")
	got := e.record(t, "k")
	want := item{
		"id": S("k"), "status": S("INPROGRESS"), "attempt": S("A"), "attempts": N("1"), "validation": S("fp"),
		"expiration":             N("1800003600"),
		"in_progress_expiration": N("1800000060000"),
		"hold_until":             N("1800000060000"),
		"renews":                 &types.AttributeValueMemberBOOL{Value: false},
		"created_at":             N("1800000000000"),
	}
	compareItems(t, "claimed", got, want)
	c := commitOf("k", "A")
	c.Now = t0.Add(1500 * time.Millisecond)
	c.ExpiresAt = c.Now.Add(horizon)
	if _, ok, err := e.store.Commit(context.Background(), c); !ok || err != nil {
		t.Fatalf("Commit = %v, %v", ok, err)
	}
	want = item{
		"id": S("k"), "status": S("COMPLETED"), "attempt": S("A"), "attempts": N("1"), "validation": S("fp"),
		"expiration":   N("1800003601"), // Unix seconds, truncated
		"created_at":   N("1800000000000"),
		"completed_at": N("1800000001500"),
		"data":         S(`"ok"`),
	}
	compareItems(t, "completed", e.record(t, "k"), want)
}

func compareItems(t *testing.T, what string, got, want item) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s item has %d attributes %v; want %d", what, len(got), sortedKeys(got), len(want))
	}
	for name, w := range want {
		if render(got[name]) != render(w) {
			t.Errorf("%s %s = %s; want %s", what, name, render(got[name]), render(w))
		}
	}
}

func render(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case nil:
		return "absent"
	}
	return "other"
}
