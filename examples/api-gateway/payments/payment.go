package payments

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Payment is a payment as the API shows it and the table stores it.
type Payment struct {
	ID        string `json:"id"`
	Amount    int64  `json:"amount"` // minor units: 1250 is 12.50 EUR
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
	CreatedAt string `json:"created_at"` // RFC 3339, UTC
}

// maxReference caps the reference's length in characters.
const maxReference = 128

// newPaymentRequest is the body of POST /payments.
type newPaymentRequest struct {
	Amount    json.RawMessage `json:"amount"`
	Currency  string          `json:"currency"`
	Reference string          `json:"reference"`
}

// parseNewPayment validates a POST /payments body. Its error is meant for
// the client.
func parseNewPayment(body []byte) (Payment, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var in newPaymentRequest
	if err := dec.Decode(&in); err != nil {
		return Payment{}, fmt.Errorf("the body is not a JSON payment: %v", err)
	}
	if dec.More() {
		return Payment{}, errors.New("the body holds more than one JSON value")
	}
	var problems []string
	amount, err := strconv.ParseInt(string(in.Amount), 10, 64)
	switch {
	case len(in.Amount) == 0:
		problems = append(problems, "amount is required")
	case err != nil:
		problems = append(problems, "amount must be an integer number of minor units")
	case amount <= 0:
		problems = append(problems, "amount must be positive")
	}
	if !isCurrencyCode(in.Currency) {
		problems = append(problems, "currency must be an ISO 4217 code: three upper-case letters")
	}
	switch n := utf8.RuneCountInString(in.Reference); {
	case n == 0:
		problems = append(problems, "reference is required")
	case n > maxReference || !utf8.ValidString(in.Reference):
		problems = append(problems, fmt.Sprintf("reference must be valid text of at most %d characters", maxReference))
	}
	if len(problems) > 0 {
		return Payment{}, errors.New(strings.Join(problems, "; "))
	}
	return Payment{Amount: amount, Currency: in.Currency, Reference: in.Reference}, nil
}

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := range 3 {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// newID returns a random payment id, "pay_" and 26 base32 characters (130
// bits).
//
// Why random and not derived from the idempotency key: the payment item
// commits in one transaction with the idempotency record, fenced on the
// attempt, so only the attempt that commits ever leaves a payment, and its
// response (with its id) is what every retry replays. A derived id would add
// nothing to that, and would collide when a client reuses a key after the
// retry horizon, when the key is forgotten and the request is new. An id
// derived from lambdaidem.Attempt.OperationKey is right when the id must be
// known to an outside system before the commit (a card processor's own
// idempotency key): then pass OperationKey to that system.
func newID() string {
	var b [17]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "pay_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])[:26])
}
