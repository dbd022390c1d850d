// Package envcheck checks that the configuration the CDK construct writes
// cannot drift from what the library reads: every environment variable the
// construct sets on a function is read by dynamostore.ReadEnv,
// dynamostore.ReadPowertoolsEnv, kmsseal.ReadEnv or lambdaidem.New.
package envcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// constructVariables returns the environment variables the construct names:
// the values of its exported string constants named Env* or *Env (the
// dev module does not depend on the cdk module, so its source is read).
func constructVariables(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "cdk", "lambdaidemcdk", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the construct's source: %v (%d files)", err, len(files))
	}
	varName := regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
	vars := map[string]string{} // variable → constant
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || !(strings.HasPrefix(name.Name, "Env") || strings.HasSuffix(name.Name, "Env")) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if varName.MatchString(v) {
						vars[v] = name.Name
					}
				}
			}
		}
	}
	return vars
}

// recorder is a getenv that records every name asked for.
type recorder struct {
	mu   sync.Mutex
	read map[string]bool
}

func (r *recorder) getenv(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read[name] = true
	return ""
}

// Every variable the construct sets is read by the library: a variable the
// construct sets and nothing reads is configuration that silently does
// nothing.
func TestTheLibraryReadsEveryVariableTheConstructSets(t *testing.T) {
	vars := constructVariables(t)
	if len(vars) < 10 {
		t.Fatalf("found only %d variables in the construct (%v): the scan is broken", len(vars), vars)
	}
	r := &recorder{read: map[string]bool{}}
	_, _ = dynamostore.ReadEnv(r.getenv)
	_, _ = dynamostore.ReadPowertoolsEnv(r.getenv)
	_, _ = kmsseal.ReadEnv(r.getenv)
	if _, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Getenv = r.getenv }); err != nil {
		t.Fatal(err)
	}
	for _, v := range slices.Sorted(maps.Keys(vars)) {
		if !r.read[v] {
			t.Errorf("lambdaidemcdk.%s = %q is set by the construct, but neither dynamostore.ReadEnv, ReadPowertoolsEnv, kmsseal.ReadEnv nor lambdaidem.New reads it", vars[v], v)
		}
	}
}
