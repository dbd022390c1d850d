package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// report is what a run saw, rendered as Markdown by [report.markdown].
type report struct {
	RunID    string
	Mode     string // "AWS" or "LOCAL (…)"
	Region   string
	Date     time.Time
	Commit   string
	Versions []string
	Stacks   []string

	Deploy     string
	DeployTime time.Duration
	Teardown   string
	Sections   []*section
}

func newReport(p *plan) *report {
	r := &report{RunID: p.RunID, Region: p.Region, Date: time.Now().UTC(), Stacks: p.Stacks, Versions: versions(), Teardown: "not run"}
	r.Mode = "AWS"
	if len(p.Endpoints) > 0 {
		r.Mode = "NOT AWS: the endpoint of " + strings.Join(p.Endpoints, ", ") + " (-endpoint-ok)"
	}
	if p.Local {
		r.Mode = "LOCAL: the DynamoDB test endpoint (ddbtest: " + localBackend() + " behind the fidelity proxy) and the Lambda Runtime Interface Emulator; no AWS"
		r.Region = "none (local)"
	}
	if p.CDKCLI != "" {
		r.Versions = append(r.Versions, "CDK CLI: "+p.CDKCLI)
	}
	r.Commit = commit()
	return r
}

// failed reports whether any check failed.
func (r *report) failed() bool {
	for _, s := range r.Sections {
		if s.Status == "FAILED" {
			return true
		}
	}
	return false
}

// markdown renders the report.
func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# lambdaidem aws-verify report %s\n\n", r.RunID)
	fmt.Fprintf(&b, "| | |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| target | %s |\n", r.Mode)
	fmt.Fprintf(&b, "| Region | %s |\n", r.Region)
	fmt.Fprintf(&b, "| date (UTC) | %s |\n", r.Date.Format(time.RFC3339))
	fmt.Fprintf(&b, "| commit | %s |\n", r.Commit)
	fmt.Fprintf(&b, "| versions | %s |\n", strings.Join(r.Versions, "<br>"))
	if !strings.HasPrefix(r.Mode, "LOCAL") {
		fmt.Fprintf(&b, "| stacks | %s (tag %s=%s) |\n", strings.Join(r.Stacks, ", "), TagKey, r.RunID)
	}
	fmt.Fprintf(&b, "| deploy | %s (%v) |\n", r.Deploy, r.DeployTime.Round(time.Second))
	fmt.Fprintf(&b, "| teardown | %s |\n\n", r.Teardown)
	b.WriteString("## Checks\n\n| check | status | time |\n| --- | --- | --- |\n")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %v |\n", s.Name, anchor(s.Name), s.Status, s.Duration.Round(time.Millisecond))
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** in %v.\n", s.Name, s.Status, s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			fmt.Fprintf(&b, "\n```text\n%s\n```\n", strings.TrimSpace(s.Error))
		}
		if len(s.Lines) > 0 {
			b.WriteString("\n" + strings.Join(s.Lines, "\n") + "\n")
		}
	}
	return b.String()
}

// anchor is GitHub's heading anchor for a one-word heading.
func anchor(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "-")) }

// writeReport writes rep under dir as <date>-<region>-<run>.md and returns
// the path.
func writeReport(dir string, rep *report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("awsverify: report: %w", err)
	}
	region := rep.Region
	if strings.HasPrefix(rep.Mode, "LOCAL") {
		region = "local"
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.md", rep.Date.Format("2006-01-02"), region, rep.RunID))
	if err := os.WriteFile(path, []byte(rep.markdown()), 0o644); err != nil {
		return "", fmt.Errorf("awsverify: report: %w", err)
	}
	return path, nil
}

// commit is the repository's HEAD, marked when the work tree has changes.
func commit() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

// versions lists Go, the platform and the modules the checks run on.
func versions() []string {
	v := []string{runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var mods []string
	for _, m := range info.Deps {
		if strings.HasPrefix(m.Path, "github.com/aws/aws-sdk-go-v2") && !strings.Contains(m.Path, "/internal/") ||
			m.Path == "github.com/aws/smithy-go" || m.Path == "github.com/truora/minidyn" || m.Path == "github.com/aws/aws-lambda-go" {
			mods = append(mods, m.Path+" "+m.Version)
		}
	}
	sort.Strings(mods)
	return append(v, mods...)
}
