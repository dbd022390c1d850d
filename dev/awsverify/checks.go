package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// errSkipped marks a check that did not apply to the target (its reason
// is the error's text).
var errSkipped = errors.New("skipped")

// check is one bounded verification.
type check struct {
	// Name is short, for the plan and the report's table.
	Name string
	// Bound says how much it does, in operations.
	Bound string
	// Budget is its upper bound of consumption; Budget.Time also bounds
	// its run (its context's deadline).
	Budget budget
	// Run runs it against w, writing its figures and observations to s.
	Run func(ctx context.Context, w *world, s *section) error
}

// section is one check's part of the report.
type section struct {
	Name     string
	Status   string // passed, FAILED, skipped, interrupted
	Duration time.Duration
	Error    string
	// Lines are Markdown: figures, tables, observed behaviours.
	Lines []string
}

// printf appends a line of Markdown.
func (s *section) printf(format string, args ...any) {
	s.Lines = append(s.Lines, fmt.Sprintf(format, args...))
}

// table appends a Markdown table.
func (s *section) table(header []string, rows [][]string) {
	s.Lines = append(s.Lines, "", "| "+strings.Join(header, " | ")+" |", "|"+strings.Repeat(" --- |", len(header)))
	for _, r := range rows {
		s.Lines = append(s.Lines, "| "+strings.Join(r, " | ")+" |")
	}
	s.Lines = append(s.Lines, "")
}

// runChecks runs each check within its time bound, recording each in rep;
// a failing check does not stop the others, an interrupt does.
func runChecks(ctx context.Context, w *world, checks []*check, rep *report, log io.Writer) {
	for _, c := range checks {
		s := &section{Name: c.Name}
		rep.Sections = append(rep.Sections, s)
		if ctx.Err() != nil {
			s.Status = "interrupted"
			s.Error = "not run: " + context.Cause(ctx).Error()
			continue
		}
		fmt.Fprintf(log, "awsverify: %s: %s\n", c.Name, c.Bound)
		cctx, cancel := context.WithTimeoutCause(ctx, c.Budget.Time, fmt.Errorf("%s: past its bound of %v", c.Name, c.Budget.Time))
		start := time.Now()
		err := runOne(cctx, c, w, s)
		cancel()
		s.Duration = time.Since(start)
		switch {
		case err == nil:
			s.Status = "passed"
		case errors.Is(err, errSkipped):
			s.Status = "skipped"
			s.Error = err.Error()
		case ctx.Err() != nil:
			s.Status = "interrupted"
			s.Error = err.Error()
		default:
			s.Status = "FAILED"
			s.Error = err.Error()
		}
		fmt.Fprintf(log, "awsverify: %s: %s in %v\n", c.Name, s.Status, s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			fmt.Fprintf(log, "  %s\n", firstLines(s.Error, 20))
		}
	}
}

// runOne runs c, turning a panic into its failure.
func runOne(ctx context.Context, c *check, w *world, s *section) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return c.Run(ctx, w, s)
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines in the report)", len(lines)-n))
	}
	return strings.Join(lines, "\n  ")
}
