package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
)

// machine describes where and with what the benchmarks ran.
type machine struct {
	cpus      int
	cpuModel  string
	kernel    string
	goVersion string
	commit    string
	modules   map[string]string // Go module → version
	loadStart string
	loadEnd   string
}

func describeMachine(ctx context.Context, c config) machine {
	m := machine{
		cpus:      runtime.NumCPU(),
		cpuModel:  cpuModel(),
		goVersion: runtime.Version(),
		modules:   map[string]string{},
		loadStart: loadAverage(),
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", c.root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.commit = strings.TrimSpace(string(out))
		if out, err := exec.CommandContext(ctx, "git", "-C", c.root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
			m.commit += " (with uncommitted changes)"
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/aws/aws-sdk-go-v2", "github.com/aws/aws-sdk-go-v2/service/dynamodb",
				"github.com/aws/aws-lambda-go", "github.com/truora/minidyn":
				m.modules[d.Path] = d.Version
			}
		}
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
