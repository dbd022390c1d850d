package httpidem

import (
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// mapRequest fills in the engine's view of r, a keyed request with the
// given body: route, path parameters, query, body and caller.
func (m *middleware) mapRequest(req *httpengine.Request, r *http.Request, body []byte) {
	path := r.URL.EscapedPath()
	req.Path = path
	req.Body = body
	req.Query, req.UnparsedQuery = httpengine.ParseQuery(r.URL.RawQuery, nil)
	req.Caller = m.caller(req, r)
	pattern := r.Pattern
	if m.opts.Route != nil {
		if p := m.opts.Route(r); p != "" {
			pattern = p
		}
	}
	switch {
	case pattern != "":
		req.PathParameters = pathValues(r, pattern)
		if !strings.Contains(pattern, " ") {
			pattern = req.Method + " " + pattern
		}
		req.Route = pattern
	case req.Route == "":
		req.Route = req.Method + " " + httpengine.NormalizePath(path)
	case strings.Contains(req.Route, "{"):
		// An API Gateway route with parameters whose values the request
		// context does not carry: the normalized path stands in for them.
		req.PathParameters = map[string]string{"$path": httpengine.NormalizePath(path)}
	}
}

// caller reads the identity r carries: the Function URL event lambdaurl
// put in its context, else the API Gateway request context the options
// hand over (whose route, if it has one, becomes req's), else none the
// middleware can read.
func (m *middleware) caller(req *httpengine.Request, r *http.Request) httpengine.Caller {
	ctx := r.Context()
	if e, ok := lambdaurl.RequestFromContext(ctx); ok {
		return m.engine.CallerURL(&e.RequestContext)
	}
	if m.opts.APIGatewayV2 != nil {
		if rc, ok := m.opts.APIGatewayV2(ctx); ok {
			if rc.RouteKey != "" && rc.RouteKey != "$default" {
				req.Route = rc.RouteKey
			}
			return m.engine.CallerV2(&rc)
		}
	}
	if m.opts.APIGatewayV1 != nil {
		if rc, ok := m.opts.APIGatewayV1(ctx); ok {
			if rc.ResourcePath != "" {
				req.Route = req.Method + " " + rc.ResourcePath
			}
			return m.engine.CallerV1(&rc)
		}
	}
	return httpengine.Caller{Authorizer: httpengine.AuthorizerNone, Fix: httpengine.FixNoIdentity}
}

// pathValues are the values of pattern's wildcards in r ({id}, {rest...}).
// Where r holds no value for one (a router that does not set
// http.Request's path values, a wildcard inside a segment, a regular
// expression), the normalized path stands in for them all, under the name
// "$path", so that two resources never share a fingerprint.
func pathValues(r *http.Request, pattern string) map[string]string {
	i := strings.IndexByte(pattern, '/')
	if i < 0 || !strings.Contains(pattern[i:], "{") {
		return nil
	}
	values := map[string]string{}
	for seg := range strings.SplitSeq(pattern[i:], "/") {
		if !strings.Contains(seg, "{") || seg == "{$}" {
			continue
		}
		var name, v string
		if len(seg) >= 3 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			name = strings.TrimSuffix(seg[1:len(seg)-1], "...")
			v = r.PathValue(name)
		}
		if v == "" { // not a whole-segment wildcard, or no value for it
			return map[string]string{"$path": httpengine.NormalizePath(r.URL.EscapedPath())}
		}
		values[name] = v
	}
	return values
}
