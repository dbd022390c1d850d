package stacks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

// The stream example deployed: one ledger consumer per source, each through
// NewStreamSource (a mapping with partial batch responses, bisection,
// bounded retries and a failure queue), bound with its stream's horizon.
func TestLedgerStack(t *testing.T) {
	stack, err := stacks.NewLedgerStack(cdktest.NewApp(t, nil), "ledger", stacks.LedgerProps{CodeZip: cdktest.DummyZip(t)})
	require.NoError(t, err)
	tmpl := cdktest.Synth(t, stack)

	ledger := tmpl.One(t, "AWS::DynamoDB::Table", "LedgerTable")
	idem := tmpl.One(t, "AWS::DynamoDB::Table", "IdempotencyTable")
	transfers := tmpl.One(t, "AWS::DynamoDB::Table", "TransfersTable")
	assertTable(t, ledger, "")
	assertTable(t, idem, "expiration")
	assert.Equal(t, []any{map[string]any{"AttributeName": "transfer_id", "KeyType": "HASH"}}, transfers.Properties["KeySchema"])
	assert.Equal(t, map[string]any{"StreamViewType": "NEW_IMAGE"}, transfers.Properties["StreamSpecification"])
	stream := tmpl.One(t, "AWS::Kinesis::Stream", "Transfers")
	assert.Equal(t, float64(24), stream.Properties["RetentionPeriodHours"])
	assert.Equal(t, map[string]any{"EncryptionType": "KMS", "KeyId": "alias/aws/kinesis"}, stream.Properties["StreamEncryption"])

	for fnID, want := range map[string]struct{ source, ttl string }{
		"KinesisLedgerFunction": {"kinesis", "24h0m0s"},  // the stream's retention
		"OutboxLedgerFunction":  {"dynamodb", "24h0m0s"}, // DynamoDB Streams keep 24 h
	} {
		fn := tmpl.One(t, "AWS::Lambda::Function", fnID)
		assertGoFunction(t, fn, 30)
		vars := fn.Properties["Environment"].(map[string]any)["Variables"]
		assert.Equal(t, with(with(storeEnv(idem.LogicalID, want.ttl), "LEDGER_TABLE", cdktest.Ref(ledger.LogicalID)),
			"LEDGER_SOURCE", want.source), vars, fnID)
	}

	mappings := map[string]cdktest.Resource{}
	for _, m := range tmpl.OfType("AWS::Lambda::EventSourceMapping") {
		mappings[m.Properties["FunctionName"].(map[string]any)["Ref"].(string)] = m
	}
	require.Len(t, mappings, 2)
	kinesisFn := tmpl.One(t, "AWS::Lambda::Function", "KinesisLedgerFunction").LogicalID
	outboxFn := tmpl.One(t, "AWS::Lambda::Function", "OutboxLedgerFunction").LogicalID
	for fnID, src := range map[string]struct {
		arn   any
		queue string
	}{
		kinesisFn: {cdktest.GetAtt(stream.LogicalID, "Arn"), "KinesisFailureQueue"},
		outboxFn:  {cdktest.GetAtt(transfers.LogicalID, "StreamArn"), "OutboxFailureQueue"},
	} {
		m := mappings[fnID].Properties
		assert.Equal(t, src.arn, m["EventSourceArn"], fnID)
		assert.Equal(t, []any{"ReportBatchItemFailures"}, m["FunctionResponseTypes"], fnID)
		assert.Equal(t, true, m["BisectBatchOnFunctionError"], fnID)
		assert.Equal(t, float64(10), m["MaximumRetryAttempts"], fnID)
		assert.Equal(t, "TRIM_HORIZON", m["StartingPosition"], fnID)
		queue := tmpl.One(t, "AWS::SQS::Queue", src.queue)
		assert.Equal(t, map[string]any{"OnFailure": map[string]any{"Destination": cdktest.GetAtt(queue.LogicalID, "Arn")}},
			m["DestinationConfig"], fnID)
	}
	assert.ElementsMatch(t, []string{"KinesisFailureQueueUrl", "KinesisLedgerFunctionName", "OutboxFailureQueueUrl",
		"OutboxLedgerFunctionName", "StreamName", "TransfersTableName"}, tmpl.Outputs())
	// Every statement of both roles, exactly.
	att := func(prefix, attr string) []any {
		for _, typ := range []string{"AWS::Kinesis::Stream", "AWS::DynamoDB::Table", "AWS::SQS::Queue"} {
			for _, r := range tmpl.OfType(typ) {
				if len(r.LogicalID) >= len(prefix) && r.LogicalID[:len(prefix)] == prefix {
					return []any{cdktest.GetAtt(r.LogicalID, attr)}
				}
			}
		}
		t.Fatalf("no resource %s*", prefix)
		return nil
	}
	ledgerPut := cdktest.Statement{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: att("LedgerTable", "Arn")}
	store := cdktest.Statement{Effect: "Allow", Actions: storeActions, Resources: att("IdempotencyTable", "Arn")}
	failures := func(queue string) cdktest.Statement {
		return cdktest.Statement{Effect: "Allow", Actions: []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"},
			Resources: att(queue, "Arn")}
	}
	assert.ElementsMatch(t, []cdktest.Statement{
		logsStatement(t, tmpl, "KinesisLedgerFunction"), ledgerPut, failures("KinesisFailureQueue"), store, xrayStatement,
		{Effect: "Allow", Actions: []string{"kinesis:DescribeStreamSummary", "kinesis:GetRecords", "kinesis:GetShardIterator",
			"kinesis:ListShards", "kinesis:SubscribeToShard", "kinesis:DescribeStream", "kinesis:ListStreams",
			"kinesis:DescribeStreamConsumer"}, Resources: att("Transfers", "Arn")},
		logsStatement(t, tmpl, "OutboxLedgerFunction"), ledgerPut, failures("OutboxFailureQueue"), store, xrayStatement,
		{Effect: "Allow", Actions: []string{"dynamodb:ListStreams"}, Resources: []any{"*"}}, // CDK's DynamoEventSource; no resource-level permission
		{Effect: "Allow", Actions: []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"},
			Resources: att("TransfersTable", "StreamArn")},
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl, "dynamodb:ListStreams")
}

// The net/http example deployed: a Function URL with AWS_IAM auth in
// response streaming mode, the payments table and the idempotency table.
func TestFunctionURLStack(t *testing.T) {
	stack, err := stacks.NewFunctionURLStack(cdktest.NewApp(t, nil), "url", stacks.FunctionURLProps{CodeZip: cdktest.DummyZip(t)})
	require.NoError(t, err)
	tmpl := cdktest.Synth(t, stack)

	payments := tmpl.One(t, "AWS::DynamoDB::Table", "PaymentsTable")
	idem := tmpl.One(t, "AWS::DynamoDB::Table", "IdempotencyTable")
	assertTable(t, payments, "")
	assertTable(t, idem, "expiration")
	fn := tmpl.One(t, "AWS::Lambda::Function", "FunctionUrlFunction")
	assertGoFunction(t, fn, 10)
	assert.Equal(t, with(storeEnv(idem.LogicalID, "24h0m0s"), "PAYMENTS_TABLE", cdktest.Ref(payments.LogicalID)),
		fn.Properties["Environment"].(map[string]any)["Variables"])
	url := tmpl.One(t, "AWS::Lambda::Url", "FunctionUrlFunction").Properties
	assert.Equal(t, "AWS_IAM", url["AuthType"])
	assert.Equal(t, "RESPONSE_STREAM", url["InvokeMode"])
	assert.Equal(t, cdktest.GetAtt(fn.LogicalID, "Arn"), url["TargetFunctionArn"])
	assert.Empty(t, tmpl.OfType("AWS::Lambda::Permission"), "no public invoke permission: callers need lambda:InvokeFunctionUrl")

	assert.ElementsMatch(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(idem.LogicalID, "Arn")}},
		logsStatement(t, tmpl, "FunctionUrlFunction"), xrayStatement,
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)
	assert.Equal(t, []string{"FunctionUrl", "FunctionUrlFunctionName"}, tmpl.Outputs())
}

// With sealing on, the Function URL's function gets its own outcome key
// (alias per stack) and exactly the KMS grant kmsseal needs.
func TestFunctionURLStackWithSealing(t *testing.T) {
	stack, err := stacks.NewFunctionURLStack(cdktest.NewApp(t, nil), "url", stacks.FunctionURLProps{CodeZip: cdktest.DummyZip(t), Sealing: true})
	require.NoError(t, err)
	tmpl := cdktest.Synth(t, stack)
	key := tmpl.One(t, "AWS::KMS::Key", "OutcomeKey")
	assert.Equal(t, true, key.Properties["EnableKeyRotation"])
	assert.Equal(t, "alias/url-outcomes", tmpl.One(t, "AWS::KMS::Alias", "OutcomeKey").Properties["AliasName"])
	keyArn := cdktest.GetAtt(key.LogicalID, "Arn")
	purpose := map[string]any{"StringEquals": map[string]any{"kms:EncryptionContext:purpose": "lambdaidem-outcome"}}
	stmts := tmpl.Statements()
	for _, want := range []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"kms:GenerateDataKey"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:Decrypt"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:DescribeKey"}, Resources: []any{keyArn}},
	} {
		assert.Contains(t, stmts, want)
	}
	assert.Len(t, stmts, 8, "the five of TestFunctionURLStack and the three of the key")
	vars := tmpl.One(t, "AWS::Lambda::Function", "FunctionUrlFunction").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	assert.Equal(t, "alias/url-outcomes", vars["IDEMPOTENCY_SEAL_KEY"])
	assert.Equal(t, `{"purpose":"lambdaidem-outcome"}`, vars["IDEMPOTENCY_SEAL_CONTEXT"])
}
