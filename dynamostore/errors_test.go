package dynamostore_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

func TestConditionFailedErrorMessage(t *testing.T) {
	cases := []struct {
		name          string
		err           dynamostore.ConditionFailedError
		want, notWant []string
	}{
		{
			name: "an update names its key",
			err: dynamostore.ConditionFailedError{Index: 1, Action: "Update", Table: "accounts",
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "customer-7"}}},
			want: []string{"Update 1", "accounts", `pk="customer-7"`},
		},
		{
			name: "a put names its attributes, never their values",
			err: dynamostore.ConditionFailedError{Index: 0, Action: "Put", Table: "orders",
				Key: map[string]types.AttributeValue{
					"id":       &types.AttributeValueMemberS{Value: "ord-1"},
					"customer": &types.AttributeValueMemberS{Value: "alice@example.com"},
					"total":    &types.AttributeValueMemberN{Value: "4200"},
				}},
			want:    []string{"Put 0", "orders", "customer, id, total"},
			notWant: []string{"alice@example.com", "4200"},
		},
	}
	for _, tc := range cases {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(msg, w) {
				t.Errorf("%s: %q reveals %q", tc.name, msg, w)
			}
		}
	}
}
