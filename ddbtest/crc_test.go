package ddbtest_test

import (
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// TestResponsesCarryTheirCRC32: like DynamoDB, every response carries
// X-Amz-Crc32 of its body, edited bodies included, so that an SDK client
// that validates it (any built by config.LoadDefaultConfig) logs nothing.
func TestResponsesCarryTheirCRC32(t *testing.T) {
	ep := ddbtest.Start(t)
	ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	for _, body := range []string{`{"TableName":"` + table + `"}`, `{"TableName":"no-such-table"}`} {
		req, _ := http.NewRequest(http.MethodPost, ep.URL, strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.DescribeTable")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := resp.Header.Get("X-Amz-Crc32"), strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10); got != want {
			t.Errorf("%d response: X-Amz-Crc32 = %q; the body's CRC32 is %s", resp.StatusCode, got, want)
		}
	}
}
