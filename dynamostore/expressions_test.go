package dynamostore

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

var update = flag.Bool("update", false, "rewrite testdata/expressions.golden")

// TestExpressionsGolden prints every expression the store and Records
// send, whole, with the attribute names the default Options bind, and
// compares them with testdata/expressions.golden (go test -update rewrites
// it): a change to a condition that correctness depends on shows in review
// as a diff of that file.
func TestExpressionsGolden(t *testing.T) {
	var o Options
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	o.SortKeyAttr, o.SortKeyValue = "sk", "IDEMPOTENCY"
	var b strings.Builder
	for _, r := range namedExpressions(newExpressions(&o)) {
		fmt.Fprintf(&b, "%s\n  condition: %s\n", r.name, r.x.cond)
		if r.x.update != "" {
			fmt.Fprintf(&b, "  update:    %s\n", r.x.update)
		}
		var names []string
		for p, attr := range r.x.names {
			names = append(names, p+"="+attr)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, "  names:     %s\n\n", strings.Join(names, " "))
	}
	got := b.String()
	t.Log("\n" + got)
	golden := filepath.Join("testdata", "expressions.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestExpressionsGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("expressions differ from %s (go test -update rewrites it after review):\n%s", golden, got)
	}
}

// namedExpressions lists every expression of x with its name.
func namedExpressions(x expressions) []struct {
	name string
	x    expression
} {
	return []struct {
		name string
		x    expression
	}{
		{"claim (UpdateItem)", x.claim},
		{"claim without a fingerprint (UpdateItem)", x.claimUnvalidated},
		{"claim of an expired record (PutItem)", x.replace},
		{"commit (PutItem, alone or first in TransactWriteItems)", x.commit},
		{"optimistic commit (PutItem, alone or first in TransactWriteItems)", x.optimisticCommit},
		{"release (DeleteItem)", x.release},
		{"mark external (UpdateItem)", x.markExternal},
		{"mark unknown (UpdateItem)", x.markUnknown},
		{"renew (UpdateItem)", x.renew},
		{"renew an external record (UpdateItem)", x.renewExternal},
		{"Records: resolve, forget (PutItem, DeleteItem)", x.unchanged},
		{"Records: scan filter", x.currentRecords},
		{"Records: scan filter, one status", x.statusRecords},
		{"Records: scan filter, one status, shared table", x.currentStatusRecords},
	}
}

// TestRequestPlaceholders builds every request the store sends and checks
// that each binds exactly the placeholders its expressions use, every name
// to a configured attribute: DynamoDB rejects an expression with an
// undefined placeholder, and a request with a name or value that no
// expression uses ("Value provided in ExpressionAttributeNames unused in
// expressions"; Amazon DynamoDB Developer Guide, "Expression attribute
// names" and "Expression attribute values").
func TestRequestPlaceholders(t *testing.T) {
	s, err := New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", func(o *Options) {
		o.SortKeyAttr, o.SortKeyValue = "sk", "IDEMPOTENCY"
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_800_000_000_123)
	claim := lambdaidem.Claim{Key: "ns#k", Token: "tok", Fingerprint: "fp", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)}
	unvalidated := claim
	unvalidated.Fingerprint = ""
	commit := lambdaidem.Commit{Key: "ns#k", Token: "tok", Fingerprint: "fp", Outcome: []byte(`"ok"`), Now: now, ExpiresAt: now.Add(time.Hour), Attempts: 1, CreatedAt: now}
	optimistic := commit
	optimistic.Claim = true
	fence := lambdaidem.Fence{Key: "ns#k", Token: "tok"}
	rec := lambdaidem.Record{Key: "ns#k", Status: lambdaidem.StatusInProgress, Token: "tok", ExpiresAt: now.Add(time.Hour)}
	type request struct {
		name, cond, update string
		names              map[string]string
		values             map[string]types.AttributeValue
	}
	update := func(name string, in *dynamodb.UpdateItemInput) request {
		return request{name, aws.ToString(in.ConditionExpression), aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues}
	}
	put := func(name string, in *dynamodb.PutItemInput) request {
		return request{name, aws.ToString(in.ConditionExpression), "", in.ExpressionAttributeNames, in.ExpressionAttributeValues}
	}
	release := s.releaseInput(fence)
	scan := func(name string, in *dynamodb.ScanInput) request {
		return request{name, aws.ToString(in.FilterExpression), "", in.ExpressionAttributeNames, in.ExpressionAttributeValues}
	}
	r, err := NewRecords(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", func(o *Options) {
		o.SortKeyAttr, o.SortKeyValue = "sk", "IDEMPOTENCY"
	})
	if err != nil {
		t.Fatal(err)
	}
	unshared, err := NewRecords(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []request{
		update("claim", s.claimInput(claim)),
		update("claim without a fingerprint", s.claimInput(unvalidated)),
		put("claim of an expired record", s.claimExpiredInput(claim)),
		put("commit", s.commitInput(commit)),
		put("optimistic commit", s.commitInput(optimistic)),
		{"release", aws.ToString(release.ConditionExpression), "", release.ExpressionAttributeNames, release.ExpressionAttributeValues},
		update("mark external", s.markExternalInput(fence)),
		update("mark unknown", s.markUnknownInput(fence)),
		update("renew", s.renewInput(lambdaidem.Renewal{Key: "ns#k", Token: "tok", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), HoldUntil: now.Add(time.Hour)})),
		update("renew external", s.renewInput(lambdaidem.Renewal{Key: "ns#k", Token: "tok", Now: now, LeaseUntil: now.Add(time.Minute), HoldUntil: now.Add(time.Hour), External: true})),
		{"Records: unchanged", UnchangedCondition, "", s.x.unchanged.names, unchangedValues(rec)},
		scan("Records: scan filter", r.scanInput(0, 1, ScanOptions{})),
		scan("Records: scan filter, one status, shared table", r.scanInput(0, 1, ScanOptions{Status: lambdaidem.StatusUnknown})),
		scan("Records: scan filter, one status", unshared.scanInput(0, 1, ScanOptions{Status: lambdaidem.StatusUnknown})),
	} {
		t.Run(r.name, func(t *testing.T) {
			checkPlaceholders(t, r.cond+" "+r.update, r.names, r.values)
		})
	}
}

// checkPlaceholders fails t unless names and values bind exactly the
// placeholders exprs uses, each name to a non-empty attribute.
func checkPlaceholders(t *testing.T, exprs string, names map[string]string, values map[string]types.AttributeValue) {
	t.Helper()
	used := func(re string) []string {
		m := regexp.MustCompile(re).FindAllString(exprs, -1)
		slices.Sort(m)
		return slices.Compact(m)
	}
	var boundNames, boundValues []string
	for p, attr := range names {
		boundNames = append(boundNames, p)
		if attr == "" {
			t.Errorf("%s is bound to no attribute", p)
		}
	}
	for p := range values {
		boundValues = append(boundValues, p)
	}
	slices.Sort(boundNames)
	slices.Sort(boundValues)
	if !slices.Equal(boundNames, used(`#\w+`)) || !slices.Equal(boundValues, used(`:\w+`)) {
		t.Fatalf("bound %v %v; the expressions use %v %v:\n%s", boundNames, boundValues, used(`#\w+`), used(`:\w+`), exprs)
	}
}
