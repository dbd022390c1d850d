package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// microResult is one benchmark: the median of its runs.
type microResult struct {
	name        string
	nsPerOp     float64
	bytesPerOp  float64
	allocsPerOp float64
	runs        int
}

// runMicro runs the CPU and allocation benchmarks of bench/micro.
func runMicro(ctx context.Context, c config) ([]microResult, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchmem",
		"-benchtime", c.benchtime, "-count", strconv.Itoa(c.benchCount), "./bench/micro")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		os.Stderr.Write(out)
		return nil, fmt.Errorf("go test -bench: %w\n%s", err, stderr.String())
	}
	return parseBench(out), nil
}

// parseBench reads `go test -bench -benchmem` output and keeps the median
// of each benchmark's runs.
func parseBench(out []byte) []microResult {
	type runs struct{ ns, b, allocs []float64 }
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
		var v [3]float64
		for i, unit := range []string{"ns/op", "B/op", "allocs/op"} {
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
		r.ns, r.b, r.allocs = append(r.ns, v[0]), append(r.b, v[1]), append(r.allocs, v[2])
	}
	var res []microResult
	for _, name := range order {
		r := byName[name]
		res = append(res, microResult{name: name, nsPerOp: median(r.ns), bytesPerOp: median(r.b), allocsPerOp: median(r.allocs), runs: len(r.ns)})
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
