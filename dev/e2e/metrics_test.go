//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// emfLine is what the test reads of one Embedded Metric Format line.
type emfLine struct {
	AWS struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
	Service, Operation string
}

// metricTotals sums, from the functions' output, the values of every EMF
// line of service, by metric name, and counts the lines of each ("<name>
// lines"); lines that are not EMF are skipped.
func metricTotals(t *testing.T, path, service string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	totals := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if !strings.HasPrefix(text, `{"_aws":`) {
			continue
		}
		var l emfLine
		var root map[string]any
		if err := json.Unmarshal([]byte(text), &l); err != nil || json.Unmarshal([]byte(text), &root) != nil {
			t.Fatalf("an EMF line that is not one JSON object: %s", text)
		}
		if l.Service != service {
			continue
		}
		if l.AWS.Timestamp == 0 || len(l.AWS.CloudWatchMetrics) != 1 || l.AWS.CloudWatchMetrics[0].Namespace != "lambdaidem" || l.Operation == "" {
			t.Fatalf("EMF line without a timestamp, a directive, the namespace or the operation: %s", text)
		}
		for _, m := range l.AWS.CloudWatchMetrics[0].Metrics {
			v, ok := root[m.Name].(float64)
			if !ok {
				t.Fatalf("metric %s has no numeric root member: %s", m.Name, text)
			}
			totals[m.Name] += v
			totals[m.Name+" lines"]++
		}
	}
	return totals
}

// TestFunctionsWriteIdempotencyMetrics: both example functions write the
// library's CloudWatch metrics (package emf) to stdout, which is where
// Lambda hands a function's output to CloudWatch Logs.
func TestFunctionsWriteIdempotencyMetrics(t *testing.T) {
	s := startStack(t)
	if s.logPath == "" {
		t.Skip("the functions' output is read from the embedded stack's log")
	}
	key, body := unique("key"), paymentBody(unique("metrics"), 500)
	if r := s.postPayment(t, s.apiURL, key, body); r.Status != http.StatusCreated {
		t.Fatalf("first POST: %s", r)
	}
	if r := s.postPayment(t, s.apiURL, key, body); !r.replayed() {
		t.Fatalf("retry: want a replay, got %s", r)
	}
	id := unique("ord")
	sendOrder(t, s, orderBody(id))
	eventually(t, 20*time.Second, 100*time.Millisecond, "the order is written", func() bool {
		_, ok := order(t, s, id)
		return ok
	})
	eventually(t, 10*time.Second, 100*time.Millisecond, "the functions' metrics reach their output", func() bool {
		p, o := metricTotals(t, s.logPath, "payments"), metricTotals(t, s.logPath, "orders")
		return p["Claims"] >= 1 && p["CacheReplays"]+p["StoreReplays"] >= 1 && p["CommitLatency lines"] >= 1 && o["Claims"] >= 1
	})
}
