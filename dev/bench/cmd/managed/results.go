package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/dev/bench/chart"
)

// results is what one run measured.
type results struct {
	started  time.Time
	config   config
	rows     []scenarioResult // against the emulator
	standIn  []scenarioResult // against the constant-latency stand-in
	renewals []renewalResult
	soak     *soakResult

	loadStart, loadEnd string
}

func find(rows []scenarioResult, name string) (scenarioResult, bool) {
	for _, s := range rows {
		if s.name == name {
			return s, true
		}
	}
	return scenarioResult{}, false
}

// The section of bench/RESULTS.md this command owns; bench/cmd/bench keeps it.
const (
	sectionBegin = "<!-- managed-instances:begin -->"
	sectionEnd   = "<!-- managed-instances:end -->"
	soakBegin    = "<!-- managed-soak:begin -->"
	soakEnd      = "<!-- managed-soak:end -->"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func byOp(m map[string]int, per int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(m[k])/float64(per)))
	}
	return strings.Join(parts, ", ")
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (r *results) markdown(chartFile string) string {
	c := r.config
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("%s\n## Lambda Managed Instances: one process, %d concurrent invocations\n\n", sectionBegin, c.concurrency)
	p("`make bench-managed` (`cd dev/bench && go run ./cmd/managed`), %s, Go %s, %d CPUs (shared). DynamoDB: minidyn behind the ddbtest fidelity proxy, in a child process, %v added to every call; ",
		r.started.UTC().Format("2006-01-02 15:04 MST"), strings.TrimPrefix(runtime.Version(), "go"), runtime.NumCPU(), c.latency)
	p("load average %s at start, %s at end (other engineers' builds shared the machine); ", r.loadStart, r.loadEnd)
	p("one Guard serves every invocation; the tables are sharded %d ways, one emulator and proxy per shard (the proxy serves one request at a time and the emulator copies a whole table per transaction; DynamoDB does neither for writes to different items). CPU is the Lambda process's own (getrusage), the endpoint's excluded. All figures from one run.\n\n", shards)
	table := func(rows []scenarioResult) {
		bare, _ := find(rows, "bare")
		p("| scenario | requests | p50 | p99 | p50 ÷ bare | p99 ÷ bare | DynamoDB calls per request | CPU per invocation | errors |\n| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n")
		for _, s := range rows {
			p("| %s | %d | %s | %s | %.2f× | %.2f× | %.2f (%s) | %d µs | %d |\n", s.name, s.requests, ms(s.p50), ms(s.p99),
				float64(s.p50)/float64(bare.p50), float64(s.p99)/float64(bare.p99), s.callsPerRequest(), byOp(s.calls, s.requests), s.cpu.Microseconds(), s.errors)
		}
		p("\n")
	}
	if len(r.standIn) > 0 {
		p("**Latency: the wrapper's own cost.** Against a DynamoDB stand-in in the child process that accepts every write after %v and spends next to no CPU (it stores nothing, so it serves the scenarios whose writes need no answer):\n\n", c.latency)
		table(r.standIn)
		bare, _ := find(r.standIn, "bare")
		if o, ok := find(r.standIn, "optimistic"); ok {
			ratio := float64(o.p99) / float64(bare.p99)
			p("- Target: optimistic p99 ≤ 1.2× bare at %d concurrent invocations: %.2f×, %s", c.concurrency, ratio, met(ratio <= 1.2))
			if tx, ok := find(r.standIn, "bare, transactional"); ok {
				p(" (%.2f× a bare handler that sends the same single TransactWriteItems itself)", float64(o.p99)/float64(tx.p99))
			}
			p(".\n\n")
		}
	}
	if len(r.rows) > 0 {
		p("**Against the emulator** (64 endpoints, each serving one request at a time; their CPU shares the machine's 2 cores with the function's, so at 64 invocations at once the latencies measure the emulator's CPU as much as anything):\n\n")
		table(r.rows)
		p("The bare handler writes its item with one PutItem (\"bare, transactional\": with a one-item TransactWriteItems); optimistic stages it (one TransactWriteItems that also claims); claim-first claims (UpdateItem) and commits (TransactWriteItems). Renewal is on (`RenewAlways`, what `RenewAuto` resolves to on Managed Instances); these handlers are quick, so they make no renewal. Each row is the median of %d interleaved rounds (by p99).\n\n", rounds)
		bare, _ := find(r.rows, "bare")
		if o, ok := find(r.rows, "optimistic"); ok {
			p("- Wrapper CPU per invocation (scenario − bare, the SDK's extra work for the transaction included): optimistic %d µs", (o.cpu - bare.cpu).Microseconds())
		}
		if cf, ok := find(r.rows, "claim-first"); ok {
			p(", claim-first %d µs (two calls)", (cf.cpu - bare.cpu).Microseconds())
		}
		p(".\n\n")
	}
	if len(r.renewals) > 0 {
		p("Renewals by handler duration (claim-first, invocation deadline 1 s + `LeaseMargin` 500 ms = a lease of %v, first renewal at 2/3 of it; the handlers ignore their deadline, as code on Managed Instances may; %d at once):\n\n", r.renewals[0].lease, c.concurrency)
		p("| handler runs | handler | renewals per invocation | DynamoDB calls per request, renewals included | errors |\n| --- | ---: | ---: | --- | ---: |\n")
		below := true
		for _, rn := range r.renewals {
			per := float64(rn.renewals) / float64(rn.requests)
			n := 0
			for _, v := range rn.calls {
				n += v
			}
			p("| %.1f× the lease | %v | %.2f | %.2f (%s) | %d |\n", rn.factor, rn.handler, per, float64(n)/float64(rn.requests), byOp(rn.calls, rn.requests), rn.errors)
			if rn.factor < 2.0/3 && rn.renewals != 0 {
				below = false
			}
		}
		p("\n- Target: 0 renewals below half the lease: %s.\n\n", met(below))
	}
	if s := r.soak; s != nil {
		first, last := s.samples[0], s.samples[len(s.samples)-1]
		maxHeap, maxG := 0.0, 0
		for _, x := range s.samples {
			maxHeap, maxG = max(maxHeap, x.heapMiB), max(maxG, x.goroutines)
		}
		var total int64
		for _, v := range s.ops {
			total += v
		}
		p("%s\n### Soak: %v of mixed traffic in one process\n\n", soakBegin, s.duration.Round(time.Second))
		p("%d concurrent invocation slots, %v per call; 50%% new keys, 20%% duplicates, 10%% in-flight conflicts (two invocations of one key at once), 10%% handlers that outlive their lease (deadline 500 ms + margin 100 ms, handler 1 s: renewed), 10%% external effects that fail (UNKNOWN) and are reconciled by the next call; a 10 s retry horizon over %d keys per kind, so keys come back fresh; a local cache of 512 outcomes. Live heap read after a forced GC every %v.\n\n", c.concurrency, c.latency, keySpace, c.sample)
		p("![heap and goroutines over the soak](%s)\n\n", chartFile)
		p("| | start | end | max |\n| --- | ---: | ---: | ---: |\n")
		p("| live heap | %.1f MiB | %.1f MiB | %.1f MiB |\n", first.heapMiB, last.heapMiB, maxHeap)
		p("| goroutines | %d | %d | %d |\n\n", first.goroutines, last.goroutines, maxG)
		p("- %d Do calls (%s); answers: %s.\n", total, byKind(s.ops), byKind(s.answers))
		p("- %d renewals, %d reconciliations.\n", s.renewals, s.reconciles)
		p("- Goroutines before the traffic: %d; after it stopped: %d (the difference is the SDK clients' idle keep-alive connections, two goroutines each, to the %d endpoints). Renewal goroutines: up to %d at a sample, %d after the traffic: every one ended with its attempt.\n", s.base, s.after, shards, s.maxRenew, s.renewers)
		p("%s\n", soakEnd)
	} else if old, err := os.ReadFile(c.out); err == nil {
		// The soak did not run: keep the last one's results.
		doc := string(old)
		if i, j := strings.Index(doc, soakBegin), strings.Index(doc, soakEnd); i >= 0 && j > i {
			p("%s\n", doc[i:j+len(soakEnd)])
		}
	}
	p("%s\n", sectionEnd)
	return b.String()
}

func byKind(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// write replaces this command's section of the results file (or appends
// it) and draws the soak chart.
func (r *results) write(c config) error {
	chartRef := filepath.Base(c.chart)
	if r.soak != nil {
		if err := r.soakChart(c.chart); err != nil {
			return err
		}
	}
	section := r.markdown(chartRef)
	old, err := os.ReadFile(c.out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := string(old)
	if i, j := strings.Index(doc, sectionBegin), strings.Index(doc, sectionEnd); i >= 0 && j > i {
		doc = doc[:i] + strings.TrimSuffix(section, "\n") + doc[j+len(sectionEnd):]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n\n" + section
	}
	fmt.Print(section)
	return os.WriteFile(c.out, []byte(doc), 0o644)
}

func (r *results) soakChart(path string) error {
	s := r.soak
	var x, heap, gor []float64
	for _, v := range s.samples {
		x = append(x, v.at.Minutes())
		heap = append(heap, v.heapMiB)
		gor = append(gor, float64(v.goroutines))
	}
	l := chart.Lines{
		Title: fmt.Sprintf("Soak: one Managed Instances process, %d concurrent invocations, %v", r.config.concurrency, s.duration.Round(time.Second)),
		XUnit: "min",
		Curves: []chart.Curve{
			{Title: "live heap after GC", Unit: "MiB", Color: color.RGBA{31, 119, 180, 255}, X: x, Y: heap},
			{Title: "goroutines", Unit: "", Color: color.RGBA{255, 127, 14, 255}, X: x, Y: gor},
		},
		Notes: []string{fmt.Sprintf("Sampled every %v; mixed traffic (new keys, duplicates, in-flight conflicts, renewals, reconciles) against minidyn behind the ddbtest proxy, %v per call. %s, Go %s.", r.config.sample, r.config.latency, r.started.UTC().Format("2006-01-02"), strings.TrimPrefix(runtime.Version(), "go"))},
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := l.PNG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
