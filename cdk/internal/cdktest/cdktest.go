// Package cdktest holds helpers for synthesizing stacks in tests and reading the
// resulting CloudFormation templates as plain Go values.
package cdktest

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// Resource is one CloudFormation resource of a synthesized template.
type Resource struct {
	LogicalID      string
	Type           string
	Properties     map[string]any
	DeletionPolicy string
	UpdateReplace  string
	Metadata       map[string]any
}

// Template is a synthesized CloudFormation template.
type Template struct {
	Raw       map[string]any
	Resources []Resource
}

// DummyZip writes a zip holding a placeholder bootstrap into a temporary folder
// of t and returns its path: function code for assets, with no build needed.
func DummyZip(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bootstrap.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
	h.SetMode(0o755)
	bw, err := w.CreateHeader(h)
	if err == nil {
		_, err = bw.Write([]byte("#!/bin/sh\nexit 0\n"))
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// NewApp returns an app that synthesizes into a temporary folder of t, with
// the given context.
func NewApp(t testing.TB, context map[string]any) awscdk.App {
	t.Helper()
	props := &awscdk.AppProps{Outdir: jsii.String(t.TempDir())}
	if context != nil {
		props.Context = &context
	}
	return awscdk.NewApp(props)
}

// Synth synthesizes stack with assertions.Template_FromStack and decodes it.
func Synth(t testing.TB, stack awscdk.Stack) *Template {
	t.Helper()
	raw := *assertions.Template_FromStack(stack, nil).ToJSON()
	// Round-trip through JSON so every value is a plain Go value.
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &Template{}
	if err := json.Unmarshal(b, &tmpl.Raw); err != nil {
		t.Fatal(err)
	}
	resources, _ := tmpl.Raw["Resources"].(map[string]any)
	ids := make([]string, 0, len(resources))
	for id := range resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := resources[id].(map[string]any)
		res := Resource{LogicalID: id}
		res.Type, _ = r["Type"].(string)
		res.Properties, _ = r["Properties"].(map[string]any)
		res.DeletionPolicy, _ = r["DeletionPolicy"].(string)
		res.UpdateReplace, _ = r["UpdateReplacePolicy"].(string)
		res.Metadata, _ = r["Metadata"].(map[string]any)
		tmpl.Resources = append(tmpl.Resources, res)
	}
	return tmpl
}

// NagSuppressions returns the ids of the cdk-nag rules suppressed on r (its
// cdk_nag metadata), in order.
func (r Resource) NagSuppressions() []string {
	var ids []string
	m, _ := r.Metadata["cdk_nag"].(map[string]any)
	rules, _ := m["rules_to_suppress"].([]any)
	for _, rule := range rules {
		id, _ := rule.(map[string]any)["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

// OfType returns the resources of one CloudFormation type, by logical id.
func (tm *Template) OfType(typ string) []Resource {
	var out []Resource
	for _, r := range tm.Resources {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// One returns the only resource of typ whose logical id starts with prefix,
// failing t unless there is exactly one.
func (tm *Template) One(t testing.TB, typ, prefix string) Resource {
	t.Helper()
	var found []Resource
	for _, r := range tm.OfType(typ) {
		if len(r.LogicalID) >= len(prefix) && r.LogicalID[:len(prefix)] == prefix {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s with logical id %s*, found %d", typ, prefix, len(found))
	}
	return found[0]
}

// Outputs returns the template's output names.
func (tm *Template) Outputs() []string {
	outs, _ := tm.Raw["Outputs"].(map[string]any)
	names := make([]string, 0, len(outs))
	for name := range outs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Output returns the Value of the template's output name, failing t if there
// is no such output.
func (tm *Template) Output(t testing.TB, name string) any {
	t.Helper()
	outs, _ := tm.Raw["Outputs"].(map[string]any)
	o, ok := outs[name].(map[string]any)
	if !ok {
		t.Fatalf("no output %s (outputs: %v)", name, tm.Outputs())
	}
	return o["Value"]
}

// Statement is one IAM policy statement, with Action and Resource normalized to
// lists.
type Statement struct {
	Effect    string
	Actions   []string
	Resources []any
	Condition map[string]any // nil without one
}

// Equal reports whether st and o are the same statement.
func (st Statement) Equal(o Statement) bool { return reflect.DeepEqual(st, o) }

// Statements returns the statements of every AWS::IAM::Policy in the template,
// in template order.
func (tm *Template) Statements() []Statement {
	var out []Statement
	for _, p := range tm.OfType("AWS::IAM::Policy") {
		out = append(out, PolicyStatements(p)...)
	}
	return out
}

// PolicyStatements returns the statements of one AWS::IAM::Policy.
func PolicyStatements(p Resource) []Statement {
	var out []Statement
	doc, _ := p.Properties["PolicyDocument"].(map[string]any)
	stmts, _ := doc["Statement"].([]any)
	for _, s := range stmts {
		m := s.(map[string]any)
		st := Statement{}
		st.Effect, _ = m["Effect"].(string)
		for _, a := range list(m["Action"]) {
			st.Actions = append(st.Actions, a.(string))
		}
		st.Resources = list(m["Resource"])
		st.Condition, _ = m["Condition"].(map[string]any)
		out = append(out, st)
	}
	return out
}

// GetAtt is the template value {"Fn::GetAtt": [logicalID, attr]}.
func GetAtt(logicalID, attr string) any {
	return map[string]any{"Fn::GetAtt": []any{logicalID, attr}}
}

// Ref is the template value {"Ref": logicalID}.
func Ref(logicalID string) any {
	return map[string]any{"Ref": logicalID}
}

func list(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		return []any{v}
	}
}
