package dynamostore

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestRenewRequest checks the renewal's request: the named constants (the
// golden test prints them), every placeholder bound exactly once and used
// (DynamoDB rejects an unused one), names mapped to the configured
// attributes, and times in the attributes' units.
func TestRenewRequest(t *testing.T) {
	s, err := New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", func(o *Options) {
		o.AttemptAttr, o.InProgressExpirationAttr, o.RenewedAtAttr = "owner", "lease_ms", "renewed"
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_800_000_000_123).Add(456 * time.Microsecond)
	in := s.renewInput(lambdaidem.Renewal{Key: "ns#k", Token: "tok", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)})
	if aws.ToString(in.ConditionExpression) != renewUnmarkedCondition || aws.ToString(in.UpdateExpression) != renewUpdate {
		t.Fatalf("request expressions differ from the named constants: %q, %q", aws.ToString(in.ConditionExpression), aws.ToString(in.UpdateExpression))
	}
	checkPlaceholders(t, renewUnmarkedCondition+" "+renewUpdate, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	wantNames := map[string]string{"#attempt": "owner", "#status": "status", "#lease": "lease_ms", "#expiration": "expiration", "#renewedAt": "renewed"}
	for k, v := range wantNames {
		if in.ExpressionAttributeNames[k] != v {
			t.Errorf("%s = %q; want %q", k, in.ExpressionAttributeNames[k], v)
		}
	}
	wantValues := map[string]string{
		":token": "tok", ":inProgress": "INPROGRESS",
		":nowMs":      "1800000000124", // rounded up, as the claim's lapse test
		":renewedAt":  "1800000000123",
		":lease":      "1800000060123",
		":expiration": "1800003600",
	}
	for k, v := range wantValues {
		var got string
		switch av := in.ExpressionAttributeValues[k].(type) {
		case *types.AttributeValueMemberS:
			got = av.Value
		case *types.AttributeValueMemberN:
			got = av.Value
		}
		if got != v {
			t.Errorf("%s = %v; want %s", k, in.ExpressionAttributeValues[k], v)
		}
	}
}
