// Package httpengine holds the HTTP idempotency semantics that every front
// door of the library shares: the request model, the Idempotency-Key
// grammar, the fingerprint, the caller scope, the problem types, the
// header allow-list and the replay. apigw (API Gateway and Function URL
// events) and httpidem (any net/http handler) only map their inputs onto a
// [Request] and a [Response] and call [Engine.Admit] and [Engine.Serve], so
// that one request answers the same status, headers and body through
// either.
//
// The stored outcome is a [Response] encoded as JSON; its shape is the
// record format of apigw's outcomes, so records written by either front
// door replay through the other.
package httpengine
