package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository's root, or the test is skipped outside a git
// checkout.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	return strings.TrimSpace(string(out))
}

// corePackage is the package whose errors README names unqualified.
const corePackage = "lambdaidem/"

// libraryErrors returns the exported errors of the library module (the
// root module's packages but internal ones, tests, and nested modules): its
// sentinels (exported package-level variables named Err…) and typed errors
// (exported types with an Error method), as README names them: the core's
// unqualified, the others' as pkg.Name.
func libraryErrors(t *testing.T, root string) []string {
	t.Helper()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "internal" || name == "testdata" || name == "build" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		qualify := f.Name.Name + "."
		if filepath.ToSlash(filepath.Dir(rel))+"/" == corePackage {
			qualify = ""
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				if decl.Tok != token.VAR {
					continue
				}
				for _, spec := range decl.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
							seen[qualify+n.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil || decl.Name.Name != "Error" || len(decl.Recv.List) != 1 {
					continue
				}
				typ := decl.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					seen["*"+qualify+id.Name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// section returns the text of doc between <!-- name… --> and <!-- /name -->.
func section(t *testing.T, root, doc, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- "+name)
	j := strings.Index(s, "<!-- /"+name+" -->")
	if i < 0 || j < i {
		t.Fatalf("%s: no <!-- %s --> … <!-- /%s --> section", doc, name, name)
	}
	return s[i:j]
}

// errorName is an error's name in backquotes: `ErrX`, `*pkg.SomeError`.
var errorName = regexp.MustCompile("`(\\*?(?:[a-z]+\\.)?(?:Err[A-Za-z]+|[A-Z][A-Za-z]*Error))`")

// TestREADMEListsEveryError: README's error list names every exported
// sentinel and typed error of the library module, and nothing else (a
// typed error with its *: errors.As takes a pointer).
func TestREADMEListsEveryError(t *testing.T) {
	root := repoRoot(t)
	code := libraryErrors(t, root)
	if !slices.Contains(code, "ErrInProgress") || !slices.Contains(code, "*RecordError") {
		t.Fatalf("the code's errors %v lack ErrInProgress and *RecordError: the walk is broken", code)
	}
	listed := map[string]bool{}
	for _, m := range errorName.FindAllStringSubmatch(section(t, root, "README.md", "errors"), -1) {
		listed[m[1]] = true
	}
	for _, n := range code {
		if !listed[n] {
			t.Errorf("README's error list (<!-- errors -->) lacks `%s`, which the library exports", n)
		}
	}
	for n := range listed {
		if !slices.Contains(code, n) {
			t.Errorf("README's error list names `%s`, which the library does not export (renamed or removed?)", n)
		}
	}
}
