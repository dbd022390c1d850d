package httpengine

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A request walks down through the engine: once the handler has run, what
// a front door may change (a replay's headers, a failed condition's
// problem) comes back in Serve's Outcome, and the engine calls no hook of
// its front door. The only functions a front door hands the engine are
// those that read the request before the claim (Key, Scope, Fingerprint)
// and the Decided predicate.
func TestTheEngineCallsNoFrontDoorHookAfterTheHandler(t *testing.T) {
	allowed := []string{"Key", "Scope", "Fingerprint", "Decided"}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() == reflect.Func && !slices.Contains(allowed, f.Name) {
			t.Errorf("Config.%s is a function the engine would call back into its front door; return what it decides in Serve's Outcome instead", f.Name)
		}
	}
}

// The engine sits beside the front doors it serves: under lambdaidem/, and
// imported by apigw and httpidem only.
func TestOnlyTheFrontDoorsImportTheEngine(t *testing.T) {
	const self = "github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
	root := filepath.Join("..", "..", "..") // the repository (the root module)
	importers := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "build" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // not ours to judge
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				importers[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range importers {
		if dir != "lambdaidem/apigw" && dir != "lambdaidem/httpidem" {
			t.Errorf("%s imports the HTTP engine; only the front doors (lambdaidem/apigw, lambdaidem/httpidem) do", dir)
		}
	}
	if !importers["lambdaidem/apigw"] || !importers["lambdaidem/httpidem"] {
		t.Errorf("importers %v: the scan missed a front door", importers)
	}
}
