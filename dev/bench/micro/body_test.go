package micro

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// largeBody is a JSON array of small objects, n bytes long: the shape whose
// decoded tree costs the most per byte.
func largeBody(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < n-40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"a-%06d","qty":1}`, i%1000000)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// peakBytes runs op once with the garbage collector off and returns the
// bytes it allocated: the most its live heap can have grown by.
func peakBytes(op func()) uint64 {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	op()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxPeakOverBody is the target: a request allocates at most this many
// times its body (the adapter's copy of the body, and little else).
const maxPeakOverBody = 3

// BenchmarkLargeBody is the work done on a 6 MiB JSON body (API Gateway's
// payload limit is 10 MB) before and around the claim: the adapter hashes a
// body above lambdaidem.MaxCanonicalJSON as a stream of bytes. It reports
// "peak/body", the bytes a request allocates with the collector off (an
// upper bound of its peak live heap) over the body's size, beside
// "decode-tree", the tree the adapter decoded every body into before (the
// cost of canonicalizing a body this large). The event itself, decoded by
// the Lambda runtime before the handler is called, is not counted.
func BenchmarkLargeBody(b *testing.B) {
	const size = 6 << 20
	body := largeBody(size)
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		b.Fatal(err)
	}
	a, err := apigw.New(g, "CreateOrder")
	if err != nil {
		b.Fatal(err)
	}
	h := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: `{"id":"ord-1"}`}, nil
	})
	event := func(i int, base64Body bool) events.APIGatewayV2HTTPRequest {
		e := events.APIGatewayV2HTTPRequest{
			RouteKey: "POST /orders", RawPath: "/orders",
			Headers: map[string]string{"content-type": "application/json", "idempotency-key": "k-" + strconv.Itoa(i)},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/orders"},
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
					JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"iss": "https://idp", "sub": "u-1"}},
				},
			},
			Body: string(body),
		}
		if base64Body {
			e.Body, e.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
		return e
	}
	for _, c := range []struct {
		name   string
		base64 bool
	}{{"apigw/6MiB", false}, {"apigw-base64/6MiB", true}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			send := func(e events.APIGatewayV2HTTPRequest) {
				if r, err := h(ctx, e); err != nil || r.StatusCode != 201 {
					b.Fatalf("%d %v", r.StatusCode, err)
				}
			}
			first := event(-1, c.base64)
			peak := peakBytes(func() { send(first) })
			if peak > maxPeakOverBody*size {
				b.Errorf("a 6 MiB body allocated %d bytes, over %d× the body", peak, maxPeakOverBody)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				b.StopTimer()
				e := event(i, c.base64)
				i++
				b.StartTimer()
				send(e)
			}
			b.ReportMetric(float64(peak)/size, "peak/body") // after the loop, which resets metrics
		})
	}
	b.Run("decode-tree/6MiB", func(b *testing.B) {
		decode := func() {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
			runtime.KeepAlive(v)
		}
		peak := peakBytes(decode)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			decode()
		}
		b.ReportMetric(float64(peak)/size, "peak/body")
	})
}
