package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// firstColumn is a table row's first cell: one or more `names`.
var firstColumn = regexp.MustCompile(`^\| ([^|]+) \|`)

// quoted is a `name` in backquotes.
var quoted = regexp.MustCompile("`([^`]+)`")

// tableNames returns the backquoted names in the first column of every
// table row of text, per table (tables are separated by a line that is not
// a row).
func tableNames(text string) [][]string {
	var tables [][]string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		m := firstColumn.FindStringSubmatch(line)
		if m == nil {
			if cur != nil {
				tables, cur = append(tables, cur), nil
			}
			continue
		}
		if cur == nil {
			cur = []string{}
		}
		for _, n := range quoted.FindAllStringSubmatch(m[1], -1) {
			cur = append(cur, n[1])
		}
	}
	if cur != nil {
		tables = append(tables, cur)
	}
	return tables
}

// recordAttributes are the record's default attribute names: every *Attr
// field of dynamostore.Options, as the store fills them in.
func recordAttributes(t *testing.T) []string {
	t.Helper()
	s, err := dynamostore.New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t")
	if err != nil {
		t.Fatal(err)
	}
	o := reflect.ValueOf(s.Options())
	var names []string
	for i := range o.NumField() {
		f := o.Type().Field(i)
		if strings.HasSuffix(f.Name, "Attr") && f.Type.Kind() == reflect.String && o.Field(i).String() != "" {
			names = append(names, o.Field(i).String())
		}
	}
	return names
}

// outboxAttributes are the outbox item's attribute names (the *Attr
// constants of internal/outboxitem) and a message's (what Encode writes
// for a message with every field set).
func outboxAttributes(t *testing.T, root string) (item, message []string) {
	t.Helper()
	dir := filepath.Join(root, "internal", "outboxitem")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasSuffix(n.Name, "Attr") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						item = append(item, v)
					}
				}
			}
		}
	}
	var m outbox.Message
	v := reflect.ValueOf(&m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int64, reflect.Int:
			f.SetInt(int64(time.Second))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			mv := reflect.MakeMap(f.Type())
			mv.SetMapIndex(reflect.ValueOf("k").Convert(f.Type().Key()), reflect.ValueOf("v").Convert(f.Type().Elem()))
			f.Set(mv)
		case reflect.Slice:
			f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 1), reflect.ValueOf("x").Convert(f.Type().Elem())))
		}
	}
	enc := outboxitem.Encode("k", []outbox.Message{m}, time.Unix(0, 0))
	for k := range enc[outboxitem.MessagesAttr].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value {
		message = append(message, k)
	}
	return item, message
}

// sameNames reports the names one side has and the other lacks.
func sameNames(t *testing.T, what string, code, doc []string) {
	t.Helper()
	for _, n := range code {
		if !slices.Contains(doc, n) {
			t.Errorf("%s: README does not document `%s`, which the code writes", what, n)
		}
	}
	for _, n := range doc {
		if !slices.Contains(code, n) {
			t.Errorf("%s: README documents `%s`, which the code does not write (renamed or removed?)", what, n)
		}
	}
}

// TestREADMEDocumentsEveryAttribute: README's record schema names every
// attribute the store writes (its default names), and its outbox tables
// every attribute of the outbox item and of a message; nothing else.
func TestREADMEDocumentsEveryAttribute(t *testing.T) {
	root := repoRoot(t)
	record := tableNames(section(t, root, "README.md", "record-attributes"))
	if len(record) != 1 {
		t.Fatalf("the record-attributes section holds %d tables; want 1", len(record))
	}
	code := recordAttributes(t)
	if !slices.Contains(code, "status") || !slices.Contains(code, "renews") {
		t.Fatalf("the store's attributes %v lack status and renews: the reflection is broken", code)
	}
	sameNames(t, "the record", code, slices.DeleteFunc(record[0], func(s string) bool { return s == "attribute" }))

	ob := tableNames(section(t, root, "README.md", "outbox-attributes"))
	if len(ob) != 2 {
		t.Fatalf("the outbox-attributes section holds %d tables; want 2 (the item, a message)", len(ob))
	}
	item, message := outboxAttributes(t, root)
	if len(item) < 7 || len(message) < 10 {
		t.Fatalf("the outbox item's attributes %v and a message's %v: the derivation is broken", item, message)
	}
	sameNames(t, "the outbox item", item, ob[0])
	sameNames(t, "an outbox message", message, ob[1])
}
