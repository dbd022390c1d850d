// Command mutate is make mutate: it applies each mutation listed in a
// mutants file (dev/mutate/mutants.txt) to the Go guards of this
// repository, one at a time, runs the behavioural suites the mutant names,
// and fails unless every mutant is killed.
//
// A mutant is applied through go test's -overlay, so the working tree is
// never touched. A kill counts only when a behavioural assertion fails
// (a "--- FAIL" line or a test that ran past its timeout): a mutant that
// does not compile, or whose requests DynamoDB refuses (a
// ValidationException, as for an unused :placeholder), is broken, not
// killed, and fails the run as a survivor does. (A ValidationException
// about the request's data, such as an item over the size limit, which
// some tests provoke on purpose, is not a refused expression.) Before any search the
// tool checks every mutant statically: its anchor and original text are
// found exactly where the list says (a listed text no longer in the code
// fails loudly: the list must follow main), and the replacement keeps
// every :placeholder and #name the original used.
//
// Each mutant is a text replacement: "from" (with {} in "to" standing for
// it), looked up from an anchor ("at") found once in the file. An
// expression's conjunct is made always true, and a disjunct always false,
// with attribute_exists/attribute_not_exists of the key, so that every
// :placeholder stays in use (the #name placeholders follow the text: the
// stores build their names maps from it).
//
// The suites run unmutated first: a failing baseline would make every
// mutant look killed.
//
//	go run ./mutate [-list mutants.txt] [-only NAME,NAME] [-check] [-v]
//
// from the dev module; -check only verifies the list against the tree.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// suite is a set of packages go test runs for a mutant: in the root module
// (GOWORK=off, as the Makefile runs it) or in the dev module.
type suite struct {
	name   string
	module string // "root" or "dev"
	args   []string
}

// mutant is one listed mutation.
type mutant struct {
	name   string
	suites []string
	file   string // relative to the repository root
	at     string // a text found exactly once; from is looked up from its start
	from   string
	to     string // {} stands for from
	line   int    // in the list, for messages
	why    string // what the mutation stands for
}

// list is a parsed mutants file.
type list struct {
	suites  map[string]suite
	mutants []mutant
}

func main() {
	listPath := flag.String("list", "mutate/mutants.txt", "the mutants file")
	only := flag.String("only", "", "comma-separated mutant names to run (default: all)")
	check := flag.Bool("check", false, "only check the list against the tree")
	verbose := flag.Bool("v", false, "print each mutant's test output")
	timeout := flag.Duration("timeout", 5*time.Minute, "go test -timeout for each suite")
	flag.Parse()
	if err := run(*listPath, *only, *check, *verbose, *timeout, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(listPath, only string, checkOnly, verbose bool, timeout time.Duration, w io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	l, err := parse(listPath)
	if err != nil {
		return err
	}
	if only != "" {
		want := map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			want[n] = true
		}
		var keep []mutant
		for _, m := range l.mutants {
			if want[m.name] {
				keep = append(keep, m)
				delete(want, m.name)
			}
		}
		if len(want) > 0 {
			return fmt.Errorf("not in the list: %v", keys(want))
		}
		l.mutants = keep
	}
	texts := map[string]string{}
	for _, m := range l.mutants {
		if _, err := apply(root, m, texts); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d mutants, each original text found once in the tree; placeholders kept\n", len(l.mutants))
	if checkOnly {
		return nil
	}
	tmp, err := os.MkdirTemp("", "mutate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	used := map[string]bool{}
	for _, m := range l.mutants {
		for _, s := range m.suites {
			used[s] = true
		}
	}
	for _, name := range keys(used) {
		start := time.Now()
		r := runSuite(root, l.suites[name], "", timeout)
		if r.failed || r.broken != "" {
			return fmt.Errorf("baseline: suite %s fails without any mutant (%s):\n%s", name, firstNonEmpty(r.broken, strings.Join(r.fails, " ")), r.out)
		}
		fmt.Fprintf(w, "baseline %-6s passes (%.0f s)\n", name, time.Since(start).Seconds())
	}

	var killed, survived, broken []string
	for i, m := range l.mutants {
		start := time.Now()
		mutated, _ := apply(root, m, texts)
		file := filepath.Join(tmp, fmt.Sprintf("m%d_%s", i, filepath.Base(m.file)))
		if err := os.WriteFile(file, []byte(mutated), 0o644); err != nil {
			return err
		}
		overlay := filepath.Join(tmp, fmt.Sprintf("m%d.json", i))
		b, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, m.file): file}})
		if err := os.WriteFile(overlay, b, 0o644); err != nil {
			return err
		}
		verdict, by := "SURVIVED", ""
		for _, s := range m.suites {
			r := runSuite(root, l.suites[s], overlay, timeout)
			if verbose {
				fmt.Fprintf(w, "--- %s in %s:\n%s\n", m.name, s, r.out)
			}
			switch {
			case r.broken != "":
				verdict, by = "BROKEN", s+": "+r.broken
			case r.failed:
				verdict, by = "killed", s+": "+strings.Join(r.fails, " ")
			}
			if verdict != "SURVIVED" {
				break
			}
		}
		switch verdict {
		case "killed":
			killed = append(killed, m.name)
		case "BROKEN":
			broken = append(broken, m.name)
		default:
			survived = append(survived, m.name)
		}
		fmt.Fprintf(w, "%-24s %-8s %4.0f s  %s\n", m.name, verdict, time.Since(start).Seconds(), trim(by, 110))
	}
	n := len(l.mutants)
	fmt.Fprintf(w, "mutation score: %d of %d killed (%.1f%%); %d survived %v; %d broken %v\n",
		len(killed), n, 100*float64(len(killed))/float64(max(n, 1)), len(survived), survived, len(broken), broken)
	if len(survived)+len(broken) > 0 {
		return errors.New("every mutant must be killed by a behavioural test")
	}
	return nil
}

// result is one go test run.
type result struct {
	failed bool
	fails  []string // the failing tests
	broken string   // why the run proves nothing
	out    string
}

var (
	failLine  = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	timedOut  = regexp.MustCompile(`(?m)^panic: test timed out`)
	buildFail = regexp.MustCompile(`(?m)\[(build failed|setup failed)\]|^# \S+$`)
	// exprRefused: DynamoDB's refusal of an expression (an unused or
	// undefined placeholder, a syntax error), not of the request's data (an
	// item too large, which tests provoke on purpose).
	exprRefused = regexp.MustCompile(`ValidationException: [^"\n]*(Expression|expression|unused|[Ss]yntax|placeholder)[^"\n]*`)
)

func runSuite(root string, s suite, overlay string, timeout time.Duration) result {
	args := []string{"test", "-count=1", "-failfast", "-vet=off", "-timeout", timeout.String()}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, s.args...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Env = os.Environ()
	cmd.Dir = root
	if s.module == "dev" {
		cmd.Dir = filepath.Join(root, "dev")
	} else {
		cmd.Env = append(cmd.Env, "GOWORK=off")
	}
	out, err := cmd.CombinedOutput()
	r := result{out: string(out)}
	switch {
	case err == nil:
		return r
	case buildFail.Match(out):
		r.broken = "does not compile"
	case exprRefused.Match(out):
		r.broken = "DynamoDB refused an expression (ValidationException): " + string(exprRefused.Find(out))
	case timedOut.Match(out):
		r.failed, r.fails = true, []string{"(a test ran past its timeout)"}
	default:
		for _, m := range failLine.FindAllSubmatch(out, -1) {
			r.fails = append(r.fails, string(m[1]))
		}
		if len(r.fails) == 0 {
			r.broken = "go test failed without a failing test: " + lastLine(string(out))
		} else {
			r.failed = true
		}
	}
	return r
}

// apply returns the file m.file with m applied, checking that the anchor
// is found exactly once, the original text after it, and that the
// replacement keeps every placeholder.
func apply(root string, m mutant, cache map[string]string) (string, error) {
	where := fmt.Sprintf("mutant %s (line %d)", m.name, m.line)
	text, ok := cache[m.file]
	if !ok {
		b, err := os.ReadFile(filepath.Join(root, m.file))
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		text = string(b)
		cache[m.file] = text
	}
	at := m.at
	if at == "" {
		at = m.from
	}
	switch n := strings.Count(text, at); n {
	case 0:
		return "", fmt.Errorf("%s: %q is no longer in %s: update the list to follow the code", where, at, m.file)
	case 1:
	default:
		return "", fmt.Errorf("%s: %q is in %s %d times: give an anchor (at) found once", where, at, m.file, n)
	}
	i := strings.Index(text, at)
	j := strings.Index(text[i:], m.from)
	if j < 0 || j > len(at)+400 {
		return "", fmt.Errorf("%s: %q is not found at its anchor %q in %s: update the list", where, m.from, at, m.file)
	}
	to := strings.ReplaceAll(m.to, "{}", m.from)
	if to == m.from {
		return "", fmt.Errorf("%s: the replacement changes nothing", where)
	}
	for _, p := range placeholder.FindAllString(m.from, -1) {
		if !strings.Contains(to, p) {
			return "", fmt.Errorf("%s: the replacement drops %s (DynamoDB refuses a request with an unused placeholder: a broken mutant, not a kill)", where, p)
		}
	}
	return text[:i+j] + to + text[i+j+len(m.from):], nil
}

// unescape reads \n and \t in a list's texts as a newline and a tab.
var unescape = strings.NewReplacer(`\n`, "\n", `\t`, "\t")

// placeholder matches the :value placeholders of a DynamoDB expression.
var placeholder = regexp.MustCompile(`:[A-Za-z][A-Za-z0-9]*`)

// parse reads a mutants file: "suite NAME root|dev ARGS..." lines, then
// blocks starting "mutant NAME SUITE[,SUITE]" followed by "file", optional
// "at" and "why", "from" and "to" lines; # starts a comment line.
func parse(path string) (*list, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &list{suites: map[string]suite{}}
	var cur *mutant
	seen := map[string]bool{}
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.file == "" || cur.from == "" || cur.to == "" {
			return fmt.Errorf("%s:%d: mutant %s needs file, from and to", path, cur.line, cur.name)
		}
		for _, s := range cur.suites {
			if _, ok := l.suites[s]; !ok {
				return fmt.Errorf("%s:%d: mutant %s names suite %q, not defined above it", path, cur.line, cur.name, s)
			}
		}
		l.mutants = append(l.mutants, *cur)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimLeft(rest, " ")
		switch word {
		case "suite":
			fs := strings.Fields(rest)
			if len(fs) < 3 || (fs[1] != "root" && fs[1] != "dev") {
				return nil, fmt.Errorf("%s:%d: want \"suite NAME root|dev PACKAGE [PACKAGE ...]\"", path, n)
			}
			l.suites[fs[0]] = suite{name: fs[0], module: fs[1], args: fs[2:]}
		case "mutant":
			if err := finish(); err != nil {
				return nil, err
			}
			fs := strings.Fields(rest)
			if len(fs) != 2 {
				return nil, fmt.Errorf("%s:%d: mutant NAME SUITE[,SUITE]", path, n)
			}
			if seen[fs[0]] {
				return nil, fmt.Errorf("%s:%d: mutant %s listed twice", path, n, fs[0])
			}
			seen[fs[0]] = true
			cur = &mutant{name: fs[0], suites: strings.Split(fs[1], ","), line: n}
		case "file", "at", "from", "to", "why":
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: %s outside a mutant", path, n, word)
			}
			rest = unescape.Replace(rest)
			switch word {
			case "file":
				cur.file = rest
			case "at":
				cur.at = rest
			case "from":
				cur.from = rest
			case "to":
				cur.to = rest
			case "why":
				cur.why = rest
			}
		default:
			return nil, fmt.Errorf("%s:%d: unknown line %q", path, n, word)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(l.mutants) == 0 {
		return nil, fmt.Errorf("%s: no mutants", path)
	}
	return l, nil
}

// repoRoot is the repository's root: the parent of the dev module.
func repoRoot() (string, error) {
	out, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if filepath.Base(filepath.Dir(mod)) != "dev" {
		return "", fmt.Errorf("run from the dev module (go env GOMOD = %q)", mod)
	}
	return filepath.Dir(filepath.Dir(mod)), nil
}

func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
