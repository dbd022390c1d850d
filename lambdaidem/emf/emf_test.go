package emf_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The CloudWatch units the EMF specification accepts in a MetricDefinition
// (CloudWatch API reference, MetricDatum.Unit).
var cloudWatchUnits = map[string]bool{
	"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true, "Kilobytes": true,
	"Megabytes": true, "Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true,
	"Megabits": true, "Gigabits": true, "Terabits": true, "Percent": true, "Count": true,
	"Bytes/Second": true, "Kilobytes/Second": true, "Megabytes/Second": true, "Gigabytes/Second": true,
	"Terabytes/Second": true, "Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true,
	"Gigabits/Second": true, "Terabits/Second": true, "Count/Second": true, "None": true,
}

// checkEMF checks one line against the CloudWatch embedded metric format
// specification ("Specification: Embedded metric format", Amazon
// CloudWatch User Guide) and returns the metric values it carries, by name.
//
//   - the log event is one JSON object, with nothing before or after it;
//   - the root has "_aws", an object with exactly "Timestamp" (a number of
//     milliseconds after the epoch) and "CloudWatchMetrics" (an array of
//     MetricDirective objects);
//   - a MetricDirective has a "Namespace" (1-255 characters), "Dimensions"
//     (an array of DimensionSets: arrays of at most 30 strings, each naming
//     a root member whose value is a string) and "Metrics" (at most 100
//     MetricDefinitions with a "Name" and an optional "Unit" that is a
//     CloudWatch unit; each names a root member that is a number, or an
//     array of at most 100 numbers);
//   - objects the specification defines have no other members.
func checkEMF(t *testing.T, text string) (values map[string]float64, dims map[string]string, ts int64) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, text)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("data after the JSON object: %s", text)
	}
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		t.Fatalf("no _aws object: %s", text)
	}
	for k := range aws {
		if k != "Timestamp" && k != "CloudWatchMetrics" {
			t.Errorf("_aws has a member %q the specification does not define", k)
		}
	}
	tsn, ok := aws["Timestamp"].(json.Number)
	if !ok {
		t.Fatalf("_aws.Timestamp is %T, want a number", aws["Timestamp"])
	}
	ts, err := tsn.Int64()
	if err != nil {
		t.Fatalf("_aws.Timestamp %v: %v", tsn, err)
	}
	directives, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(directives) == 0 {
		t.Fatalf("_aws.CloudWatchMetrics is %T (%v), want a non-empty array", aws["CloudWatchMetrics"], aws["CloudWatchMetrics"])
	}
	values, dims = map[string]float64{}, map[string]string{}
	for _, d := range directives {
		dir, ok := d.(map[string]any)
		if !ok {
			t.Fatalf("MetricDirective is %T", d)
		}
		for k := range dir {
			if k != "Namespace" && k != "Dimensions" && k != "Metrics" {
				t.Errorf("MetricDirective has a member %q the specification does not define", k)
			}
		}
		ns, _ := dir["Namespace"].(string)
		if len(ns) < 1 || len(ns) > 255 {
			t.Errorf("Namespace %q: want 1 to 255 characters", ns)
		}
		sets, ok := dir["Dimensions"].([]any)
		if !ok {
			t.Fatalf("Dimensions is %T, want an array of DimensionSets", dir["Dimensions"])
		}
		for _, s := range sets {
			set, ok := s.([]any)
			if !ok {
				t.Fatalf("DimensionSet is %T, want an array", s)
			}
			if len(set) > 30 {
				t.Errorf("DimensionSet has %d dimensions; at most 30", len(set))
			}
			for _, name := range set {
				n, ok := name.(string)
				if !ok {
					t.Fatalf("dimension reference is %T, want a string", name)
				}
				v, ok := root[n].(string)
				if !ok {
					t.Fatalf("dimension %q: root member is %T, want a string", n, root[n])
				}
				if v == "" || len(v) > 1024 {
					t.Errorf("dimension %q = %q: want 1 to 1024 characters", n, v)
				}
				dims[n] = v
			}
		}
		metrics, ok := dir["Metrics"].([]any)
		if !ok || len(metrics) == 0 {
			t.Fatalf("Metrics is %T (%v), want a non-empty array", dir["Metrics"], dir["Metrics"])
		}
		if len(metrics) > 100 {
			t.Errorf("%d MetricDefinitions; at most 100", len(metrics))
		}
		for _, m := range metrics {
			def, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("MetricDefinition is %T", m)
			}
			for k := range def {
				if k != "Name" && k != "Unit" && k != "StorageResolution" {
					t.Errorf("MetricDefinition has a member %q the specification does not define", k)
				}
			}
			name, _ := def["Name"].(string)
			if name == "" {
				t.Fatalf("MetricDefinition without a Name: %v", def)
			}
			if u, has := def["Unit"]; has && !cloudWatchUnits[fmt.Sprint(u)] {
				t.Errorf("metric %s: Unit %v is not a CloudWatch unit", name, u)
			}
			num, ok := root[name].(json.Number)
			if !ok {
				t.Fatalf("metric %q: root member is %T, want a number", name, root[name])
			}
			f, err := num.Float64()
			if err != nil {
				t.Fatalf("metric %q = %v: %v", name, num, err)
			}
			values[name] = f
		}
	}
	return values, dims, ts
}

// lines splits the output into lines, each checked by checkEMF.
func lines(t *testing.T, out string) []string {
	t.Helper()
	var ls []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	return ls
}

var start = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// payments is Metrics of the service "payments" at start, writing to out.
func payments(t *testing.T) (*emf.Metrics, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	m, err := emf.New(&out, func(o *emf.Options) {
		o.Service = "payments"
		o.Now = func() time.Time { return start }
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, &out
}

// TestUnknownAge: a duplicate refused by an UNKNOWN record writes, with
// RefusedUnknown, the record's age in seconds (UnknownAge): UNKNOWN records
// never expire, so their age is what an alarm watches.
func TestUnknownAge(t *testing.T) {
	m, out := payments(t)
	e := lambdaidem.Event{Operation: "CreatePayment", Status: lambdaidem.StatusUnknown, Since: start.Add(-90 * time.Minute)}
	m.Hooks().OnConflict(context.Background(), e, &lambdaidem.RecordError{Err: lambdaidem.ErrOutcomeUnknown})
	ls := lines(t, out.String())
	if len(ls) != 1 {
		t.Fatalf("%d lines; want 1", len(ls))
	}
	values, _, _ := checkEMF(t, ls[0])
	if values[emf.RefusedUnknown] != 1 || values[emf.UnknownAge] != 5400 || !strings.Contains(ls[0], `{"Name":"UnknownAge","Unit":"Seconds"}`) {
		t.Fatalf("metrics %v in %s; want RefusedUnknown 1 and UnknownAge 5400 s", values, ls[0])
	}
}

// TestWriteUnknownAge: a scan's line carries UnknownAge alone (no
// RefusedUnknown: no duplicate was refused), under the Service the alarm
// watches; no record found writes 0, so the alarm has data.
func TestWriteUnknownAge(t *testing.T) {
	for _, c := range []struct {
		name string
		age  time.Duration
		want float64
	}{
		{"the oldest record", 90 * time.Minute, 5400},
		{"none found", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, out := payments(t)
			m.WriteUnknownAge("scan", c.age)
			ls := lines(t, out.String())
			if len(ls) != 1 {
				t.Fatalf("%d lines; want 1", len(ls))
			}
			values, _, _ := checkEMF(t, ls[0])
			if len(values) != 1 || values[emf.UnknownAge] != c.want || !strings.Contains(ls[0], `"Service":"payments","Operation":"scan"`) {
				t.Fatalf("metrics %v in %s; want UnknownAge %v alone, Service payments, Operation scan", values, ls[0], c.want)
			}
		})
	}
}

func TestEveryHookWritesOneValidLine(t *testing.T) {
	var out bytes.Buffer
	m, err := emf.New(&out, func(o *emf.Options) {
		o.Namespace = "Shop/Idempotency"
		o.Service = "payments"
		o.Now = func() time.Time { return start }
	})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Hooks()
	ctx := context.Background()
	e := lambdaidem.Event{Operation: "CreatePayment", Key: "lambdaidem#SECRETHASH", Status: lambdaidem.StatusCompleted, Attempt: 1}
	conflict := func(err error) func() {
		return func() { h.OnConflict(ctx, e, &lambdaidem.RecordError{Err: err, Key: e.Key}) }
	}
	tests := []struct {
		name   string
		call   func()
		metric string
		unit   string
		value  float64
	}{
		{"claim", func() { h.OnClaim(ctx, e) }, emf.Claims, "Count", 1},
		{"replay from the cache", func() { e := e; e.From = "cache"; h.OnReplay(ctx, e) }, emf.CacheReplays, "Count", 1},
		{"replay from the store", func() { e := e; e.From = "store"; h.OnReplay(ctx, e) }, emf.StoreReplays, "Count", 1},
		{"refused in progress", conflict(lambdaidem.ErrInProgress), emf.RefusedInProgress, "Count", 1},
		{"refused key reused", conflict(lambdaidem.ErrKeyReused), emf.RefusedKeyReused, "Count", 1},
		{"refused unknown", conflict(lambdaidem.ErrOutcomeUnknown), emf.RefusedUnknown, "Count", 1},
		{"lease lost", conflict(lambdaidem.ErrLeaseLost), emf.LeaseLost, "Count", 1},
		{"marked unknown", func() { h.OnUnknown(ctx, e) }, emf.MarkedUnknown, "Count", 1},
		{"fail open", func() { h.OnFailOpen(ctx, e, lambdaidem.ErrStoreUnavailable) }, emf.FailOpen, "Count", 1},
		{"store error", func() {
			h.OnStoreError(ctx, e, &lambdaidem.StoreError{Op: "claim", Key: e.Key, Err: lambdaidem.ErrStoreUnavailable})
		}, emf.StoreErrors, "Count", 1},
		{"commit latency", func() { e := e; e.Duration = 12500 * time.Microsecond; h.OnCommit(ctx, e) }, emf.CommitLatency, "Milliseconds", 12.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			tc.call()
			ls := lines(t, out.String())
			if len(ls) != 1 {
				t.Fatalf("%d lines; want 1:\n%s", len(ls), out.String())
			}
			values, dims, ts := checkEMF(t, ls[0])
			if len(values) != 1 || values[tc.metric] != tc.value {
				t.Errorf("metrics %v; want only %s = %v", values, tc.metric, tc.value)
			}
			if !strings.Contains(ls[0], `{"Name":"`+tc.metric+`","Unit":"`+tc.unit+`"}`) {
				t.Errorf("no definition of %s in %s", tc.metric, tc.unit)
			}
			if dims[emf.DimService] != "payments" || dims[emf.DimOperation] != "CreatePayment" {
				t.Errorf("dimensions %v; want Service=payments, Operation=CreatePayment", dims)
			}
			if ts != start.UnixMilli() {
				t.Errorf("Timestamp %d; want %d", ts, start.UnixMilli())
			}
			if !strings.Contains(ls[0], `"Namespace":"Shop/Idempotency"`) {
				t.Errorf("namespace missing: %s", ls[0])
			}
			if strings.Contains(ls[0], "SECRETHASH") {
				t.Errorf("the record key leaked into the metrics: %s", ls[0])
			}
		})
	}
}

// TestAGuardsTrafficBecomesMetrics runs a Guard with the hooks over real
// traffic and reads the counts back from the lines, as CloudWatch would.
func TestAGuardsTrafficBecomesMetrics(t *testing.T) {
	var out bytes.Buffer
	m, err := emf.New(&out, func(o *emf.Options) { o.Service = "orders" })
	if err != nil {
		t.Fatal(err)
	}
	down := false
	store := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if down {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.Hooks = m.Hooks()
		o.CacheSize = 16
		o.FailOpen = true
	})
	if err != nil {
		t.Fatal(err)
	}
	const rawKey = "customer-visible-key-8f2c"
	do := func(key, payload string, fn func(context.Context) (string, error)) {
		fp, _ := lambdaidem.Fingerprint(payload)
		lambdaidem.Do(context.Background(), g, lambdaidem.Call[string]{Operation: "CreateOrder", Key: key, Fingerprint: fp}, fn)
	}
	ok := func(context.Context) (string, error) { return "ok", nil }
	charge := func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", errors.New("provider timed out")
	}
	do(rawKey, "a", ok)   // claim, commit
	do(rawKey, "a", ok)   // cache replay
	do(rawKey, "b", ok)   // key reused
	do("k2", "a", charge) // claim, marked unknown
	do("k2", "a", ok)     // refused unknown
	down = true
	do("k3", "a", ok) // store error, fail open

	totals := map[string]float64{}
	for _, l := range lines(t, out.String()) {
		values, dims, _ := checkEMF(t, l)
		if dims[emf.DimOperation] != "CreateOrder" || dims[emf.DimService] != "orders" {
			t.Errorf("dimensions %v", dims)
		}
		for k, v := range values {
			if k == emf.CommitLatency {
				totals["commits"]++
				continue
			}
			if k == emf.UnknownAge {
				totals["unknown ages"]++ // its value is the record's age on the test's clock
				continue
			}
			totals[k] += v
		}
	}
	want := map[string]float64{
		emf.Claims: 2, "commits": 1, emf.CacheReplays: 1, emf.RefusedKeyReused: 1,
		emf.MarkedUnknown: 1, emf.RefusedUnknown: 1, "unknown ages": 1, emf.StoreErrors: 1, emf.FailOpen: 1,
	}
	if fmt.Sprint(totals) != fmt.Sprint(want) {
		t.Fatalf("totals %v\nwant   %v", totals, want)
	}
	if strings.Contains(out.String(), rawKey) || strings.Contains(out.String(), lambdaidem.RecordKey("lambdaidem", "", "CreateOrder", rawKey)) {
		t.Fatalf("a key leaked into the metrics:\n%s", out.String())
	}
}

func TestOperationNamesBecomeValidDimensionValues(t *testing.T) {
	tests := []struct{ op, want string }{
		{"CreatePayment", "CreatePayment"},
		{"", "unnamed"},
		{"   ", "unnamed"},
		{"Zahlung-anlegen-ü", "Zahlung-anlegen-_"},
		{"a\nb", "a_b"},
		{strings.Repeat("x", 2000), strings.Repeat("x", 1024)},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		m, _ := emf.New(&out)
		m.Hooks().OnClaim(context.Background(), lambdaidem.Event{Operation: tc.op})
		_, dims, _ := checkEMF(t, strings.TrimSuffix(out.String(), "\n"))
		if dims[emf.DimOperation] != tc.want {
			t.Errorf("operation %q → dimension %q; want %q", tc.op, dims[emf.DimOperation], tc.want)
		}
	}
}

func TestNewRefusesWhatCloudWatchWouldRefuse(t *testing.T) {
	tests := []struct {
		name string
		opts func(*emf.Options)
	}{
		{"namespace too long", func(o *emf.Options) { o.Namespace = strings.Repeat("n", 256) }},
		{"namespace starting with a colon", func(o *emf.Options) { o.Namespace = ":ns" }},
		{"namespace not ASCII", func(o *emf.Options) { o.Namespace = "Größe" }},
		{"service of blanks", func(o *emf.Options) { o.Service = "  " }},
		{"service too long", func(o *emf.Options) { o.Service = strings.Repeat("s", 1025) }},
	}
	for _, tc := range tests {
		if _, err := emf.New(io.Discard, tc.opts); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
	if _, err := emf.New(nil); err == nil {
		t.Error("New accepted a nil writer")
	}
}

// TestConcurrentHooksWriteWholeLines: hooks run on many invocations at
// once (Lambda Managed Instances); every line stays one valid document.
func TestConcurrentHooksWriteWholeLines(t *testing.T) {
	var out bytes.Buffer
	m, _ := emf.New(&out)
	h := m.Hooks()
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			for range 50 {
				h.OnClaim(context.Background(), lambdaidem.Event{Operation: fmt.Sprintf("Op%d", i)})
			}
		}()
	}
	close(ready)
	wg.Wait()
	ls := lines(t, out.String())
	if len(ls) != 16*50 {
		t.Fatalf("%d lines; want %d", len(ls), 16*50)
	}
	for _, l := range ls {
		checkEMF(t, l)
	}
}
