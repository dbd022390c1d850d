package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// microResult is one benchmark: the median (and the fastest) of its runs.
type microResult struct {
	name        string
	nsPerOp     float64
	minNsPerOp  float64
	bytesPerOp  float64
	allocsPerOp float64
	ratio       float64 // a compression benchmark's ratio; 0 for the others
	runs        int
}

// runMicro runs the CPU and allocation benchmarks of bench/micro: the test
// binary is built once and run c.benchCount times over all benchmarks, so
// that a burst of load on the machine hits one run of every benchmark
// rather than every run of one.
func runMicro(ctx context.Context, c config) ([]microResult, error) {
	dir, err := os.MkdirTemp("", "lambdaidem-micro-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "micro.test")
	build := exec.CommandContext(ctx, "go", "test", "-C", "dev", "-c", "-o", bin, "./bench/micro")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go test -c: %w\n%s", err, out)
	}
	var all []byte
	for range c.benchCount {
		cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", ".", "-test.benchmem", "-test.benchtime", c.benchtime)
		cmd.Dir = "dev/bench/micro"
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("benchmarks: %w\n%s%s", err, out, stderr.String())
		}
		all = append(all, out...)
	}
	return parseBench(all), nil
}

// parseBench reads `go test -bench -benchmem` output and keeps the median
// of each benchmark's runs.
func parseBench(out []byte) []microResult {
	type runs struct{ ns, b, allocs, ratio []float64 }
	byName := map[string]*runs{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i] // GOMAXPROCS suffix
		}
		var v [4]float64
		for i, unit := range []string{"ns/op", "B/op", "allocs/op", "ratio"} {
			for j := 2; j+1 < len(f); j++ {
				if f[j+1] == unit {
					v[i], _ = strconv.ParseFloat(f[j], 64)
				}
			}
		}
		r := byName[name]
		if r == nil {
			r = &runs{}
			byName[name] = r
			order = append(order, name)
		}
		r.ns, r.b, r.allocs, r.ratio = append(r.ns, v[0]), append(r.b, v[1]), append(r.allocs, v[2]), append(r.ratio, v[3])
	}
	rank := func(name string) int {
		for i, prefix := range []string{"Bare/", "First/", "Replay/", "RecordKey", "Fingerprint/", "OutcomeCodec/"} {
			if strings.HasPrefix(name, prefix) {
				return i
			}
		}
		return 99
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	var res []microResult
	for _, name := range order {
		r := byName[name]
		res = append(res, microResult{name: name, nsPerOp: median(r.ns), minNsPerOp: slices.Min(r.ns), bytesPerOp: median(r.b), allocsPerOp: median(r.allocs), ratio: median(r.ratio), runs: len(r.ns)})
	}
	return res
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
