package micro

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The HTTP front doors on one request: a keyed POST /payments with a
// 1 KB JSON body from a JWT caller, answered 201 with a 1 KB JSON body and
// one staged business write, as a first request (a new key) and as a
// replay. Four ways to serve it:
//
//   - bare-event: the API Gateway HTTP API handler called with the event;
//   - apigw: that handler wrapped by apigw.WrapV2;
//   - bare-http: the same handler as an http.Handler, served to an
//     httptest recorder;
//   - httpidem: that http.Handler wrapped by the httpidem middleware.
//
// The wrapper cost of a front door is its time minus its bare handler's.
// BenchmarkHTTPRatio runs the four interleaved, request by request, so
// that a noisy machine slows them alike, and reports the middleware's
// wrapper cost divided by apigw's (target: at most 1.2).

const httpIssuer = "https://idp.example.com/"

// httpBody is the request body: the payment event's JSON, about 1 KB.
var httpBody = func() string {
	b, _ := json.Marshal(payment("", 1<<10))
	return string(b)
}()

// reply is the handler's 1 KB answer.
func reply(p Payment) []byte {
	b, _ := json.Marshal(Receipt{ID: p.ID, Status: "captured", Amount: p.Amount, Note: p.Note})
	return b
}

func eventHandler(stage bool) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var p Payment
		if err := json.Unmarshal([]byte(e.Body), &p); err != nil {
			return events.APIGatewayV2HTTPResponse{StatusCode: 400}, nil
		}
		if stage {
			if err := memstore.Stage(ctx, memstore.Put{Table: "payments", Key: e.Headers["idempotency-key"], Value: []byte(businessValue)}); err != nil {
				return events.APIGatewayV2HTTPResponse{}, err
			}
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(reply(p))}, nil
	}
}

func httpHandler(stage bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var p Payment
		if err := json.Unmarshal(b, &p); err != nil {
			w.WriteHeader(400)
			return
		}
		if stage {
			if err := memstore.Stage(r.Context(), memstore.Put{Table: "payments", Key: r.Header.Get("Idempotency-Key"), Value: []byte(businessValue)}); err != nil {
				w.WriteHeader(500)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = w.Write(reply(p))
	})
}

func httpEvent(key string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /payments", RawPath: "/payments",
		Headers: map[string]string{"idempotency-key": key, "content-type": "application/json"},
		Body:    httpBody,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   "POST /payments",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"iss": httpIssuer, "sub": "alice"}}},
		},
	}
}

type subjectKey struct{}

// httpRequest is the same request for net/http, the caller verified by an
// authentication middleware before it (its subject in the context).
func httpRequest(key string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(httpBody))
	r.Header.Set("Idempotency-Key", key)
	r.Header.Set("Content-Type", "application/json")
	r.Pattern = "POST /payments"
	return r.WithContext(context.WithValue(r.Context(), subjectKey{}, "alice"))
}

// fronts is the four ways to serve a request, over one fresh store.
type fronts struct {
	bareEvent func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	apigw     func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	bareHTTP  http.Handler
	httpidem  http.Handler
}

func newFronts(b *testing.B) fronts {
	b.Helper()
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		b.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		b.Fatal(err)
	}
	mw, err := httpidem.New(g, "CreatePayment", func(o *httpidem.Options) {
		o.Scope = func(r *http.Request) (string, error) {
			return httpidem.JWTPrincipal(httpIssuer, r.Context().Value(subjectKey{}).(string)), nil
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	return fronts{bareEvent: eventHandler(false), apigw: a.WrapV2(eventHandler(true)), bareHTTP: httpHandler(false), httpidem: mw(httpHandler(true))}
}

// serveEvent and serveHTTP serve one request and check its answer.
func serveEvent(b *testing.B, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), e events.APIGatewayV2HTTPRequest) {
	if out, err := h(context.Background(), e); err != nil || out.StatusCode != 201 {
		b.Fatalf("%d %s %v", out.StatusCode, out.Body, err)
	}
}

func serveHTTP(b *testing.B, h http.Handler, r *http.Request) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 201 {
		b.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

// BenchmarkHTTP measures each front door alone, first request and replay.
func BenchmarkHTTP(b *testing.B) {
	for _, replay := range []bool{false, true} {
		phase := map[bool]string{false: "first", true: "replay"}[replay]
		for _, front := range []string{"bare-event", "apigw", "bare-http", "httpidem"} {
			b.Run(front+"/"+phase+"/1KB", func(b *testing.B) {
				f := newFronts(b)
				keys := ids(resetEvery)
				if replay {
					for _, k := range keys {
						serveEvent(b, f.apigw, httpEvent(k)) // stored once; both doors replay it
					}
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i == len(keys) {
						b.StopTimer()
						if !replay {
							f = newFronts(b)
						}
						i = 0
						b.StartTimer()
					}
					switch front {
					case "bare-event":
						serveEvent(b, f.bareEvent, httpEvent(keys[i]))
					case "apigw":
						serveEvent(b, f.apigw, httpEvent(keys[i]))
					case "bare-http":
						serveHTTP(b, f.bareHTTP, httpRequest(keys[i]))
					case "httpidem":
						serveHTTP(b, f.httpidem, httpRequest(keys[i]))
					}
					i++
				}
			})
		}
	}
}

// BenchmarkHTTPRatio serves the four interleaved and reports the
// middleware's wrapper cost over apigw's as "ratio", and each wrapper
// cost in µs (from the medians of each front door's request times). ns/op
// is the time of one round of four.
func BenchmarkHTTPRatio(b *testing.B) {
	for _, replay := range []bool{false, true} {
		phase := map[bool]string{false: "first", true: "replay"}[replay]
		b.Run(phase+"/1KB", func(b *testing.B) {
			f := newFronts(b)
			keys := ids(resetEvery)
			if replay {
				for _, k := range keys {
					serveEvent(b, f.apigw, httpEvent(k))
				}
			}
			var spent [4][]time.Duration
			i := 0
			for b.Loop() {
				if i == len(keys) {
					b.StopTimer()
					if !replay {
						f = newFronts(b)
					}
					i = 0
					b.StartTimer()
				}
				e, r1, r2 := httpEvent(keys[i]), httpRequest(keys[i]), httpRequest(keys[i])
				t0 := time.Now()
				serveEvent(b, f.bareEvent, e)
				t1 := time.Now()
				serveEvent(b, f.apigw, e)
				t2 := time.Now()
				serveHTTP(b, f.bareHTTP, r1)
				t3 := time.Now()
				serveHTTP(b, f.httpidem, r2)
				t4 := time.Now()
				for j, d := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3)} {
					spent[j] = append(spent[j], d)
				}
				i++
			}
			// Medians: a request preempted by another process does not
			// count for more than one.
			apigwCost := float64(median(spent[1]) - median(spent[0]))
			mwCost := float64(median(spent[3]) - median(spent[2]))
			b.ReportMetric(apigwCost/1e3, "apigw-µs")
			b.ReportMetric(mwCost/1e3, "httpidem-µs")
			b.ReportMetric(mwCost/apigwCost, "ratio")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
