// Package frontdoor sends requests and records through a Lambda function's
// front doors in a test, as the Lambda service would deliver them, and
// reads the answer back: an HTTP request as an API Gateway REST API (v1)
// event, an HTTP API (v2) event or a Function URL event, with a chosen
// caller (a JWT authorizer's claims, a Lambda authorizer's context, an IAM
// caller, a REST API key, or nobody); an SQS batch; Kinesis and DynamoDB
// Streams records.
//
// An HTTP request goes to the handler lambda.Start would get: an
// apigw.Adapter's WrapV1, WrapV2 or WrapURL ([REST], [HTTPAPI],
// [FunctionURL]), or an http.Handler behind lambdaurl, as
// lambdaurl.Start(handler) runs it ([LambdaURL]). Through lambdaurl the
// handler sees the Function URL event in its context, so httpidem reads the
// caller from it as in Lambda: a test needs no Options.Scope that the real
// function must not set.
//
//	resp, err := frontdoor.LambdaURL(ctx, mux, frontdoor.NewRequest("POST", "/payments", `{"amount":1250}`).
//		WithKey("9b2e6f1c").As(frontdoor.IAM("arn:aws:iam::123456789012:user/alice")))
//	// resp.Status, resp.Header, resp.Body, resp.Replayed()
//
// The events are built by [Request.REST], [Request.HTTPAPI],
// [Request.FunctionURL], [SQSEvent], [KinesisEvent] and [DynamoDBEvent] for
// a test that calls the handler itself. Everything here is deterministic:
// the same request or message gives the same event, so sending it twice is
// a redelivery.
package frontdoor
