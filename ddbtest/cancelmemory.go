package ddbtest

import (
	"net/http"
	"time"
)

// AWS documents what a TransactWriteItems repeated with the
// ClientRequestToken of one that succeeded returns (success, nothing
// written, within 10 minutes), not what it returns after one that was
// cancelled (API Reference, TransactWriteItems, ClientRequestToken). A
// DynamoDB that remembered cancellations too would answer every resend
// under the token with the first cancellation. RememberCancellations makes
// the proxy that hostile DynamoDB, so that tests show that nothing depends
// on which it is: a commit must resend a cancelled transaction under a new
// token.

// cancelUse is a cancelled TransactWriteItems, remembered under its token.
type cancelUse struct {
	request string    // its canonical form (tokenRequest)
	at      time.Time // when it was cancelled
	resp    response  // the cancellation
}

// SetRememberCancellations makes the proxy remember, when on, every
// cancelled TransactWriteItems (TransactionCanceledException: a condition,
// a transaction conflict, throttling) under its ClientRequestToken for 10
// minutes, and answer a TransactWriteItems with that token in that time
// without running it: the same cancellation for the same request,
// IdempotentParameterMismatchException for another. Off by default, and
// when turned off the remembered cancellations are forgotten.
func (p *Proxy) SetRememberCancellations(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.cancels = map[string]cancelUse{}
	} else {
		p.cancels = nil
	}
}

// rememberedCancellation answers a TransactWriteItems under a token whose
// cancellation the proxy remembers.
func (p *Proxy) rememberedCancellation(token, canon string) (response, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	use, ok := p.cancels[token]
	switch {
	case !ok:
		return response{}, false
	case p.now().Sub(use.at) >= tokenWindow:
		delete(p.cancels, token)
		return response{}, false
	case use.request != canon:
		return errorResponse(http.StatusBadRequest, "IdempotentParameterMismatchException",
			"The request uses the same client token as a previous, but non-identical request."), true
	}
	return use.resp, true
}

// rememberCancellation keeps resp, the answer to a TransactWriteItems
// under token, if it is a cancellation and the proxy remembers them.
func (p *Proxy) rememberCancellation(token, canon string, resp response) {
	if token == "" || resp.status != http.StatusBadRequest || errorType(resp.body) != "TransactionCanceledException" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancels != nil {
		p.cancels[token] = cancelUse{request: canon, at: p.now(), resp: resp}
	}
}

// transactToken is the ClientRequestToken of a TransactWriteItems body and
// its canonical form (tokenRequest); "" for none.
func transactToken(body []byte) (token, canon string) {
	in, err := object(body)
	if err != nil {
		return "", ""
	}
	if token = text(in["ClientRequestToken"]); token == "" {
		return "", ""
	}
	return token, tokenRequest(body)
}
