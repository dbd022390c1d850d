package apigw_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// BenchmarkKeyFromBodyField reads the key of a 6 MiB body (many small
// members, the worst case for a token stream): allocated bytes per byte
// of body are reported as alloc/body.
func BenchmarkKeyFromBodyField(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for sb.Len() < 6<<20 {
		sb.WriteString(`{"sku":"SKU-1","qty":1},`)
	}
	sb.WriteString(`{}],"idempotency_key":"k-1"}`)
	r := &apigw.Request{Body: []byte(sb.String())}
	key := apigw.KeyFromBodyField("idempotency_key")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if k, ok, err := key(context.Background(), r); err != nil || !ok || k != "k-1" {
			b.Fatal(k, ok, err)
		}
	}
}
