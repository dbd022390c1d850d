// Package conformance runs the store conformance suite
// (lambdaidem/storetest) against the DynamoDB store over tables named in
// the environment: the ones `make aws-verify` deploys (on AWS, or on its
// LOCAL endpoint), or, under a plain `go test`, fresh tables on an
// in-process ddbtest endpoint. The awsverify command runs it as
// `go test -json` and puts its verdicts in the report.
package conformance

// The environment the suite reads. With EnvTable unset it makes its own
// tables on an in-process endpoint.
const (
	// EnvTable names an existing, idempotency table (key "id").
	EnvTable = "AWSVERIFY_TABLE"
	// EnvItemsTable names the business table beside it (key "id").
	EnvItemsTable = "AWSVERIFY_ITEMS_TABLE"
)
