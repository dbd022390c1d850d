package e2estack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// The example package served behind a Function URL (lambdaurl).
const FunctionURLPackage = "./examples/function-url"

// FunctionURLRequest is a Function URL event as Lambda sends it for a
// request (payload format 2.0, headers lower-cased), from the IAM caller
// userARN (AuthType AWS_IAM), or from nobody when userARN is empty
// (AuthType NONE).
func FunctionURLRequest(method, path, rawQuery string, header map[string]string, body, userARN string) events.LambdaFunctionURLRequest {
	e := events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        path,
		RawQueryString: rawQuery,
		Headers:        map[string]string{},
		Body:           body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "e2e.lambda-url.us-east-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
	for k, v := range header {
		e.Headers[strings.ToLower(k)] = v
	}
	if userARN != "" {
		e.RequestContext.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: userARN},
		}
	}
	return e
}

// StreamedResponse is a function's answer in Function URL response
// streaming mode (InvokeMode RESPONSE_STREAM), as lambdaurl writes it.
type StreamedResponse struct {
	Status  int
	Header  http.Header
	Cookies []string
	Body    string
}

// ReadStreamedResponse decodes a response in the
// application/vnd.awslambda.http-integration-response format: a JSON
// prelude (statusCode, headers, cookies), eight NUL bytes, then the body.
func ReadStreamedResponse(payload []byte) (StreamedResponse, error) {
	prelude, body, ok := bytes.Cut(payload, make([]byte, 8))
	if !ok {
		return StreamedResponse{}, errors.New("e2estack: no http-integration-response prelude in the function's response")
	}
	var p struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Cookies    []string          `json:"cookies"`
	}
	if err := json.Unmarshal(prelude, &p); err != nil {
		return StreamedResponse{}, fmt.Errorf("e2estack: the response prelude %q: %w", prelude, err)
	}
	r := StreamedResponse{Status: p.StatusCode, Header: http.Header{}, Cookies: p.Cookies, Body: string(body)}
	for k, v := range p.Headers {
		r.Header.Set(k, v)
	}
	return r, nil
}
