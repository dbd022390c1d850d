package apigw

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// PowertoolsProxy converts, for a Powertools cutover window
// (dynamostore.PowertoolsWindow.Response), between the
// response the adapter stores and the API Gateway (or Function URL) proxy
// response a Powertools-decorated handler returned and stored: so that an
// old version still serving replays the new version's answer, and the new
// version replays the old one's.
//
// ToOld writes statusCode, headers (repeated values joined with
// ", "), body and isBase64Encoded: a response REST APIs, HTTP APIs and
// Function URLs all read. FromOld keeps the old response's
// status and body and, of its headers, what the adapter stores by default
// (Content-Type, Location, Cache-Control, ...; never cookies or
// credentials), as it would have stored them had it served the request.
type PowertoolsProxy struct{}

// ToOld: see [PowertoolsProxy].
func (PowertoolsProxy) ToOld(stored json.RawMessage) (json.RawMessage, error) {
	var r httpengine.Response
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, fmt.Errorf("apigw: stored response: %w", err)
	}
	out := events.APIGatewayProxyResponse{StatusCode: r.Status, Body: r.Body, IsBase64Encoded: r.Base64, Headers: single(r.Header)}
	return json.Marshal(out)
}

// FromOld: see [PowertoolsProxy].
func (PowertoolsProxy) FromOld(old json.RawMessage) (json.RawMessage, error) {
	var p events.APIGatewayProxyResponse
	if err := json.Unmarshal(old, &p); err != nil {
		return nil, fmt.Errorf("apigw: Powertools response: %w", err)
	}
	if p.StatusCode == 0 {
		return nil, fmt.Errorf("apigw: Powertools response has no statusCode: not an API Gateway proxy response")
	}
	r := flavorV1.toResponse(p)
	r.Header = httpengine.StoredHeaders(r.Header)
	return json.Marshal(r)
}
