package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notObserved is what README's evidence table says of a claim no report
// shows yet.
const notObserved = "not yet observed on AWS"

var reportLink = regexp.MustCompile(`\]\((aws-reports/[^)]+\.md)\)`)

// TestReadmeLinksTheReportsThatExist keeps README's "Evidence from AWS"
// table honest: without a report in aws-reports/ every row says "not yet
// observed on AWS"; a row that claims more links to a report that exists,
// and every check the command runs has a row.
func TestReadmeLinksTheReportsThatExist(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Evidence from AWS\n")
	if !ok {
		t.Fatal(`README has no "## Evidence from AWS" section`)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	reports, _ := filepath.Glob(filepath.Join("..", "..", "aws-reports", "*.md"))
	var sent []string
	for _, r := range reports {
		if filepath.Base(r) != "README.md" {
			sent = append(sent, r)
		}
	}
	covered := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(rest, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 3 || cells[0] == "claim" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows++
		for _, c := range strings.Split(cells[1], ",") {
			covered[strings.TrimSpace(c)] = true
		}
		onAWS := cells[2]
		if onAWS == notObserved {
			continue
		}
		links := reportLink.FindAllStringSubmatch(onAWS, -1)
		if len(sent) == 0 || len(links) == 0 {
			t.Errorf("row %q claims %q: with no report linked (reports: %d) it must say %q", cells[0], onAWS, len(sent), notObserved)
		}
		for _, l := range links {
			if _, err := os.Stat(filepath.Join("..", "..", l[1])); err != nil {
				t.Errorf("row %q links %s, which does not exist", cells[0], l[1])
			}
		}
	}
	if rows == 0 {
		t.Fatal("the evidence table has no rows")
	}
	for _, c := range allChecks(options{ChaosOps: 1}) {
		if !covered[c.Name] {
			t.Errorf("no row of the evidence table names the %s check", c.Name)
		}
	}
}
