// Package httpidem makes any net/http handler idempotent with the
// Idempotency-Key header, with the semantics of apigw (the same engine):
// Lambda Function URLs through aws-lambda-go's lambdaurl, API Gateway
// through aws-lambda-go-api-proxy, and the same service in a container,
// all sharing one table.
//
// The two-minute version:
//
//	store, _ := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, _ := lambdaidem.New(store)
//	idem, err := httpidem.New(guard, "CreatePayment")
//	if err != nil {
//		log.Fatal(err)
//	}
//	mux := http.NewServeMux()
//	mux.Handle("POST /payments", idem(http.HandlerFunc(createPayment)))
//	lambdaurl.Start(mux) // or http.ListenAndServe(":8080", mux) with Options.Scope
//
// A client sends "Idempotency-Key: <a fresh UUID>" with each POST and
// reuses it for every retry. The first request runs the handler; its
// response, if it is a decided outcome (2xx, 3xx, 402, 409, 410; see
// [DecidedStatus]), is stored, committed in one transaction with the
// DynamoDB writes the handler staged with dynamostore.Stage(r.Context(),
// …). Every retry gets the same status, headers and body, with
// "Idempotent-Replayed: true". Inside the handler,
// lambdaidem.AttemptFrom(r.Context()) gives the stable OperationKey for a
// downstream API and BeginExternal to declare an effect outside the
// transaction.
//
//	condition                                  response
//	key missing (POST, PATCH)                  400 problem+json
//	key malformed or too long                  400 problem+json
//	keyed body above Options.MaxBodySize       413 problem+json, not run
//	same key, different request                422 problem+json, nothing revealed
//	same key, still running                    409 problem+json + Retry-After
//	same key, outcome unknown                  409 problem+json
//	same key, completed                        stored response + Idempotent-Replayed: true
//	handler 2xx, or a decided 4xx              stored and replayed
//	handler 4xx "never executed" (400, 404, …) written once, not stored, key released
//	handler 5xx                                written once, not stored, key released
//	response body above the Guard's cap        500 problem+json, nothing committed, key released
//	store unavailable                          503 problem+json + Retry-After (fail closed)
//	business condition failed at commit        409 problem+json, key released
//	no caller identity to scope keys by        500 problem+json, one error log line
//
// Requests with a safe method (GET, HEAD, OPTIONS, TRACE), and requests
// of other methods not in Options.RequireKey that carry no key, go
// straight to the handler: their body is not read and their response not
// captured.
//
// # Scope
//
// Keys are scoped by the caller, the method and the route, and scope fails
// closed. Under lambdaurl the caller is the Function URL event's IAM
// caller (AuthType NONE: one anonymous scope, as in apigw); behind
// aws-lambda-go-api-proxy, the authorizer of the API Gateway request
// context that [Options.APIGatewayV2] (or V1) hands over. Anywhere else the
// middleware reads no identity, and [Options.Scope] is required: without
// it such a request is refused with 500, [ProblemUnidentifiedCaller], and
// one error log line naming the option. In a container that verifies JWTs,
// return [JWTPrincipal] of the token's issuer and subject: a Lambda
// function behind an HTTP API JWT authorizer (apigw, or this middleware
// behind api-proxy) and the container then dedupe each other's retries on
// one table.
//
// The route is the ServeMux pattern that matched (wrap the handler you
// register, not the mux), [Options.Route] (chi's RoutePattern, say), the
// API Gateway route key, or else the normalized path. The fingerprint
// covers the method, route, path parameters, query, media type and body,
// exactly as apigw's: JSON bodies canonicalized, a body naming a member
// twice (as encoding/json folds names) or above 64 KiB hashed as bytes.
//
// # Responses as net/http writes them
//
// A keyed request's handler writes to a ResponseWriter that captures the
// response: status, headers and body, up to the Guard's MaxOutcomeSize
// bytes of body. Once the handler returns, the response is stored (if
// decided) and only then written to the client, headers and all, cookies
// included; a replay carries only the allow-listed headers, as apigw's
// (Content-*, Location and Content-Location without credentials, caching
// validators, Vary, and Options.ReplayHeaders). Therefore:
//
//   - Flush (http.Flusher, http.ResponseController) does nothing: the
//     response is not streamed, it is written whole after the commit;
//   - Hijack fails with [ErrHijack] (http.ErrNotSupported): an upgraded
//     connection cannot be stored or replayed;
//   - a 1xx status (103 Early Hints) is dropped, neither sent nor stored;
//   - a body past the cap fails the Write with [ErrResponseTooLarge]; the
//     request is answered 500, [ProblemResponseTooLarge], nothing is
//     committed and the key is released;
//   - headers changed after WriteHeader are ignored, as net/http ignores
//     them; read and write deadlines and full duplex reach the server's
//     writer through Unwrap.
//
// The request body is read once, up to [Options.MaxBodySize] (default 6
// MiB; larger: 413), and the handler gets the same bytes.
//
// # Disconnects and panics
//
// net/http cancels a request's context when its client disconnects. A
// keyed request's handler runs on a context that keeps the request's
// values and deadline but not that cancellation: an attempt that may
// already have had its effect is neither released nor marked UNKNOWN
// because the client went away. It runs to its end, its outcome is stored,
// and the client's retry replays it.
//
// A panic in the handler releases the claim (a retry runs again). Then:
// under lambdaurl.Wrap, which runs the handler in a goroutine without a
// recover (aws-lambda-go v1.55.1), where a panic would end the process and
// every concurrent invocation of a Managed Instance in it, the middleware
// recovers it, logs it at level Error and answers 500, [ProblemInternal];
// anywhere else it panics on, so that net/http's server (which recovers
// and logs it, closing the connection) or your own recovery middleware
// sees it as it would without idempotency.
package httpidem
