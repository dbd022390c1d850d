package httpevent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Translator makes HTTP API events of requests. Its zero value matches no
// route: set Routes. It is safe for concurrent use.
type Translator struct {
	// Routes is the API's route table.
	Routes *Routes
	// Stage is the stage name. Default "$default".
	Stage string
	// Claims, if set, returns the JWT claims an authorizer would have
	// verified for a request; a non-nil result fills the event's
	// requestContext.authorizer.jwt. For tests and local development only:
	// nothing is verified.
	Claims func(*http.Request) map[string]string
	// MaxBody caps the body read, in bytes. Default 10 MiB, API Gateway's
	// payload limit.
	MaxBody int64
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// ErrNoRoute is returned for a request that matches no route.
var ErrNoRoute = errors.New("httpevent: no route matches the request")

// Event returns the event API Gateway would send for r: the matched route
// key and path parameters, the raw path and query, headers with lower-case
// names and repeated values joined by commas, cookies in their own field,
// a request context with the method, path, source IP, a request id and the
// time, and the body, base64-encoded unless its Content-Type is text.
func (t *Translator) Event(r *http.Request) (events.APIGatewayV2HTTPRequest, error) {
	var e events.APIGatewayV2HTTPRequest
	routeKey, params, ok := t.Routes.Match(r.Method, r.URL.Path)
	if !ok {
		return e, ErrNoRoute
	}
	max := t.MaxBody
	if max <= 0 {
		max = 10 << 20
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		if err != nil {
			return e, fmt.Errorf("httpevent: read body: %w", err)
		}
		if int64(len(b)) > max {
			return e, fmt.Errorf("httpevent: body larger than %d bytes", max)
		}
		body = b
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	at := now()
	stage := t.Stage
	if stage == "" {
		stage = "$default"
	}
	headers, cookies := eventHeaders(r)
	e = events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       routeKey,
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Cookies:        cookies,
		Headers:        headers,
		PathParameters: params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    "000000000000",
			Stage:        stage,
			RequestID:    requestID(),
			APIID:        "local",
			DomainName:   r.Host,
			DomainPrefix: strings.Split(r.Host, ".")[0],
			Time:         at.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    at.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP(r.RemoteAddr),
				UserAgent: r.UserAgent(),
			},
		},
	}
	if q := r.URL.Query(); len(q) > 0 {
		e.QueryStringParameters = make(map[string]string, len(q))
		for k, vs := range q {
			e.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	if t.Claims != nil {
		if claims := t.Claims(r); claims != nil {
			e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims},
			}
		}
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			e.Body = string(body)
		} else {
			e.Body = base64.StdEncoding.EncodeToString(body)
			e.IsBase64Encoded = true
		}
	}
	return e, nil
}

// eventHeaders lower-cases header names and joins repeated values with
// commas; the Cookie header becomes the cookies list, in the order sent.
func eventHeaders(r *http.Request) (map[string]string, []string) {
	h := make(map[string]string, len(r.Header)+1)
	var cookies []string
	for name, values := range r.Header {
		if strings.EqualFold(name, "Cookie") {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		h[strings.ToLower(name)] = strings.Join(values, ",")
	}
	if r.Host != "" {
		h["host"] = r.Host
	}
	if r.ContentLength > 0 {
		h["content-length"] = fmt.Sprint(r.ContentLength)
	}
	return h, cookies
}

// isText reports whether a body of this Content-Type is sent as text.
func isText(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded", "application/graphql":
		return true
	}
	return false
}

func sourceIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
