package httpengine

import "net/http"

// DecidedStatus is the default [Options.Decided] predicate. It follows
// Stripe's rule: a response is saved once the operation has begun to
// execute, never for a request that was refused before it ran.
//
// Stored: every 2xx and 3xx, and the 4xx statuses that report a decided
// outcome of the operation: 402 Payment Required (declined), 409 Conflict
// (a business conflict, such as a duplicate order number), and 410 Gone.
//
// Not stored: every other 4xx, which says the request was never executed
// (400 malformed, 401 and 403 not authorized, 404 not found, 405, 406, 412,
// 413 too large, 415, 422 invalid, 429 rate limited, …), so the client may
// fix the request and retry with the same key; every 5xx, which says the
// attempt failed, so a retry runs the operation again; and anything outside
// 200–599.
func DecidedStatus(status int) bool {
	switch {
	case status >= 200 && status < 400:
		return true
	case status == http.StatusPaymentRequired, status == http.StatusConflict, status == http.StatusGone:
		return true
	}
	return false
}
