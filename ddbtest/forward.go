package ddbtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Forward returns an http.Handler that sends every DynamoDB request it
// serves to the endpoint at url (a process such as Dynoxide, DynamoDB Local
// or LocalStack) and writes that endpoint's answer back, so that a [Proxy]
// can front it: NewProxy(Forward(url), func(o *ProxyOptions) { o.Backend =
// Dynoxide() }). The request's headers go through as they are, its
// signature included (emulators do not check it); the proxy's own reads,
// which have none, are signed with the credentials "test"/"test" in
// us-east-1, since an emulator may refuse a request without a signature.
// An endpoint that cannot be reached is answered 500 InternalServerError,
// which the SDK retries.
func Forward(url string) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 128
	tr.MaxIdleConnsPerHost = 128
	return &forwarder{url: strings.TrimRight(url, "/") + "/", client: &http.Client{Transport: tr}}
}

type forwarder struct {
	url    string
	client *http.Client
}

// dropHopHeaders deletes from h the headers that describe one connection,
// not the request (the transport sets its own).
func dropHopHeaders(h http.Header) {
	for _, name := range [...]string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding",
		"Upgrade", "Content-Length", "Accept-Encoding"} {
		h.Del(name)
	}
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", "cannot read the request body")
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "ddbtest: forward: "+err.Error())
		return
	}
	req.Header = r.Header.Clone()
	dropHopHeaders(req.Header)
	if req.Header.Get("Authorization") == "" {
		if err := sign(r.Context(), req, body); err != nil {
			writeError(w, http.StatusInternalServerError, "InternalServerError", "ddbtest: forward: signing: "+err.Error())
			return
		}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "ddbtest: forward: "+err.Error())
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "ddbtest: forward: reading the answer: "+err.Error())
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	dropHopHeaders(w.Header())
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// sign signs req, whose body is body, for DynamoDB with test credentials.
func sign(ctx context.Context, req *http.Request, body []byte) error {
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", "us-east-1", time.Now())
}
