package stacks_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

// make aws-verify's context: every stack under the run's suffix, the verify
// stack with a throwaway idempotency table (the construct's) and a business
// table per check, each table's name an output dev/awsverify reads.
func TestBuildAddsTheVerifyStackUnderTheRunsSuffix(t *testing.T) {
	zip := cdktest.DummyZip(t)
	app := cdktest.NewApp(t, map[string]any{"paymentsZip": zip, "ordersZip": zip, "publicApi": "true", "destroyTables": "true",
		"stackSuffix": "-v1a2b3c4d", "verifyStack": "true"})
	require.NoError(t, stacks.Build(app))
	var names []string
	for _, s := range *app.Synth(nil).Stacks() {
		names = append(names, *s.StackName())
	}
	assert.ElementsMatch(t, []string{"lambdaidem-payments-v1a2b3c4d", "lambdaidem-orders-v1a2b3c4d", "lambdaidem-verify-v1a2b3c4d"}, names)

	verify := cdktest.Synth(t, stackOf(t, app, "lambdaidem-verify-v1a2b3c4d"))
	var want []string
	for _, c := range stacks.VerifyChecks {
		want = append(want, c+"Table", c+"ItemsTable")
	}
	sort.Strings(want)
	assert.Equal(t, want, verify.Outputs())
	tables := verify.OfType("AWS::DynamoDB::Table")
	require.Len(t, tables, 2*len(stacks.VerifyChecks))
	withTTL := 0
	for _, table := range tables {
		assert.Equal(t, "Delete", table.DeletionPolicy, table.LogicalID)
		assert.Equal(t, false, table.Properties["DeletionProtectionEnabled"], table.LogicalID)
		assert.Equal(t, "PAY_PER_REQUEST", table.Properties["BillingMode"], table.LogicalID)
		assert.Equal(t, []any{map[string]any{"AttributeName": "id", "KeyType": "HASH"}}, table.Properties["KeySchema"], table.LogicalID)
		if ttl, ok := table.Properties["TimeToLiveSpecification"]; ok {
			assert.Equal(t, map[string]any{"AttributeName": "expiration", "Enabled": true}, ttl, table.LogicalID)
			withTTL++
		}
	}
	assert.Equal(t, len(stacks.VerifyChecks), withTTL, "one idempotency table (TTL on expiration) per check")
}

// The verify stack passes cdk-nag like the app's own stacks.
func TestTheVerifyStackPassesCdkNag(t *testing.T) {
	all := nagApp(t, map[string]any{"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments", "verifyStack": "true"})
	require.Contains(t, all, stacks.VerifyStackID)
	assert.Empty(t, cdktest.Nag(t, all[stacks.VerifyStackID]))
}
