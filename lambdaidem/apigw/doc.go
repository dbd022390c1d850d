// Package apigw makes API Gateway handlers idempotent with the
// Idempotency-Key header: REST APIs (payload format 1.0), HTTP APIs (2.0)
// and Lambda Function URLs, each keeping its handler's signature.
//
// The two-minute version:
//
//	store, _ := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, _ := lambdaidem.New(store)
//	idem, err := apigw.New(guard, "CreatePayment")
//	if err != nil {
//		log.Fatal(err)
//	}
//	lambda.Start(idem.WrapV2(createPayment))
//
// A client sends "Idempotency-Key: <a fresh UUID>" with each POST and
// reuses it for every retry of that POST. The first request runs the
// handler; if its response is a decided outcome (2xx, 402, 409, …; see
// [DecidedStatus]) it is stored, committed in one transaction with any
// DynamoDB writes the handler staged with dynamostore.Stage. Every retry gets
// the same status, headers and body, with "Idempotent-Replayed: true".
//
//	condition                                  response
//	key missing (POST, PATCH)                  400 problem+json
//	key malformed or too long                  400 problem+json
//	same key, different request                422 problem+json, nothing revealed
//	same key, still running                    409 problem+json + Retry-After
//	same key, outcome unknown                  409 problem+json
//	same key, completed                        stored response + Idempotent-Replayed: true
//	handler 2xx, or a decided 4xx              stored and replayed
//	handler 4xx "never executed" (400, 404, …) returned once, not stored, key released
//	handler 5xx or error                       returned once, not stored, key released
//	store unavailable                          503 problem+json (fail closed)
//	business condition failed at commit        409 problem+json (see Options.ConditionFailed), key released
//	authorizer shown, no caller identified     500 problem+json, one error log line
//
// Tenants fail closed. An event that shows an authorizer (JWT, Lambda, IAM,
// Cognito, API key) but names no caller is refused with 500 and one error
// log line naming the fix, never run in a scope callers share: a hash of a
// Lambda authorizer's context is not an identity. [Options.IdentityClaims]
// and [Options.IdentityContextKeys] name the claims and context values that
// identify callers where "sub" or principalId is missing; [Options.Scope]
// remains the escape hatch. Events with no authorizer share one anonymous
// scope, unless [Options.RefuseAnonymous] refuses them too.
//
// Keys are scoped by the authenticated principal (see [Request.Principal])
// and by the method and route (the route key, or, for a Function URL or the
// $default route, the normalized path; see [Request.Route]), so two callers'
// keys never meet. The fingerprint that tells "the same request" from "a
// different one" covers the method, route, path parameters, query, media
// type and body: whatever the handler would read differently fingerprints
// differently. JSON bodies are compared after canonicalization, so key order
// and spacing do not matter, except a body that holds a name twice (exactly,
// or in another letter case, which encoding/json matches to one field) or
// one larger than [lambdaidem.MaxCanonicalJSON] (64 KiB): such a body is
// hashed as its bytes, streamed, never decoded. An unparseable query string
// is hashed as written.
//
// A replay carries the stored representation, not the first request's
// session. Only these response headers are stored and replayed:
//
//	Content-Type, Content-Encoding, Content-Language, Content-Disposition
//	Location, Content-Location     without user info or a query (a presigned URL's credential)
//	Cache-Control, Expires, ETag, Last-Modified, Vary
//	those named in Options.ReplayHeaders, minus those in Options.OmitHeaders
//
// CORS headers (a replay may answer another origin), Date, request and
// trace ids (X-Request-Id, X-Amzn-RequestId, Traceparent), authentication
// challenges (WWW-Authenticate, Authentication-Info) and anything unlisted
// are not stored; cookies, Authorization, hop-by-hop headers,
// Content-Length and names holding a credential word (token, secret,
// password, api-key, access-key, credential, session, signature, auth) are
// never stored, even when named. A header a replay needs fresh (CORS for
// the retrying origin, this request's id) is added by Options.OnReplay.
//
// Refusals are RFC 9457 problem details whose type URIs are the Problem
// constants; each URI is the page that documents its type (problems.md in
// this package's folder).
package apigw
