package dynamostore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The operator's commands take the record keys of Lambda tenants, and
// refuse keys of neither form.
func TestCheckRecordKeyTakesTenantKeys(t *testing.T) {
	for _, k := range []string{
		lambdaidem.RecordKey("ns", "s", "Pay", "k1"),
		lambdaidem.TenantRecordKey("ns", "blue", "s", "Pay", "k1"),
		lambdaidem.TenantRecordKey("ns", "a tenant/with=odd+chars@x", "", "Pay", "k1"),
	} {
		if err := dynamostore.CheckRecordKey(k); err != nil {
			t.Errorf("CheckRecordKey(%q): %v", k, err)
		}
	}
	hash := strings.Repeat("a", 43)
	for _, k := range []string{"k1", "#" + hash, "ns#abc", "ns##" + hash, "ns#!#" + hash, "ns#a#b#" + hash} {
		if err := dynamostore.CheckRecordKey(k); !errors.Is(err, dynamostore.ErrMalformedKey) {
			t.Errorf("CheckRecordKey(%q) = %v; want ErrMalformedKey", k, err)
		}
	}
}
