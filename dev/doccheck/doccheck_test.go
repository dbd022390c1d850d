// Package doccheck holds the check that the code blocks the docs say are
// compiled are the files that make test compiles.
package doccheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// marker precedes a fenced block that must be, byte for byte, the file it
// names (a path from the repository's root): <!-- compiled: examples/x/main.go -->
const markerPrefix, markerSuffix = "<!-- compiled: ", " -->"

type block struct {
	doc, file string
	line      int
	text      string
}

// compiledBlocks returns the marked blocks of one Markdown file; a marker
// without a fenced block after it is an error.
func compiledBlocks(t *testing.T, root, doc string) []block {
	t.Helper()
	f, err := os.Open(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []block
	var cur *block
	inBlock := false
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
		line := sc.Text()
		switch {
		case cur != nil && !inBlock:
			if !strings.HasPrefix(line, "```") {
				t.Errorf("%s:%d: %s is not followed by a fenced code block", doc, cur.line, cur.file)
				cur = nil
				continue
			}
			inBlock = true
		case cur != nil && inBlock:
			if line == "```" {
				blocks = append(blocks, *cur)
				cur, inBlock = nil, false
				continue
			}
			cur.text += line + "\n"
		case strings.HasPrefix(line, markerPrefix) && strings.HasSuffix(line, markerSuffix):
			cur = &block{doc: doc, line: n, file: strings.TrimSuffix(strings.TrimPrefix(line, markerPrefix), markerSuffix)}
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: the block for %s is not closed", doc, cur.line, cur.file)
	}
	return blocks
}

// TestCompiledBlocksAreTheFiles: a block the docs say is compiled is the
// file the build compiles, as it is.
func TestCompiledBlocksAreTheFiles(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	root := strings.TrimSpace(string(out))
	docs, err := exec.Command("git", "-C", root, "ls-files", "*.md").Output()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, doc := range strings.Fields(string(docs)) {
		for _, b := range compiledBlocks(t, root, doc) {
			found++
			want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.file)))
			if err != nil {
				t.Errorf("%s:%d: says it is %s: %v", b.doc, b.line, b.file, err)
				continue
			}
			if b.text != string(want) {
				t.Errorf("%s:%d: the block differs from %s, which make test compiles: copy the file into the block", b.doc, b.line, b.file)
			}
		}
	}
	// README's two-minute program is one of them: a check that finds nothing guards nothing.
	if found == 0 {
		t.Fatal("no <!-- compiled: … --> block in any Markdown file")
	}
}
