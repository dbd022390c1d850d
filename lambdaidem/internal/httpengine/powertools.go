package httpengine

import "net/http"

// StoredHeaders returns the headers of h a stored response keeps with the
// default lists (see storable): for a response that was not stored by the
// engine, such as the API Gateway response a Powertools handler returned
// (apigw's Powertools window converters).
func StoredHeaders(h http.Header) http.Header { return storable(h, nil, nil) }
