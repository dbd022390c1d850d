// Package payments is the payments API of the api-gateway example: an HTTP
// API (payload format 2.0) handler a user would copy.
//
//	POST /payments       {"amount": 1250, "currency": "EUR", "reference": "inv-1001"}
//	                     with an Idempotency-Key header → 201 and the payment
//	GET  /payments/{id}  → 200 and the payment, or 404
//
// A POST is made idempotent by lambdaidem/apigw: the payment item is staged
// with dynamostore.Stage and written in the same DynamoDB transaction as the
// idempotency record, so there is never a payment without its record nor a
// record without its payment, and every retry with the same key gets the
// same 201. An invalid request gets 400 application/problem+json and is not
// stored: the client may fix it and reuse the key.
package payments
