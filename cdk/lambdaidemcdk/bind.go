package lambdaidemcdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Errors of binding a function of any shape ([Table.Bind], [BindSealing]).
var (
	// ErrEnvironmentNotSet reports a function whose environment this app
	// cannot set: an imported function, or an alias or version of one. The
	// error is an [*EnvironmentNotSetError] holding the variables to set
	// where the function is defined, and saying whether the grant was made.
	ErrEnvironmentNotSet = errors.New("lambdaidemcdk: the function's environment is not this app's to set")
	// ErrEnvironmentConflict reports a variable the function already sets to
	// another value: binding would overwrite it silently, so nothing is
	// changed and the error names the variable.
	ErrEnvironmentConflict = errors.New("lambdaidemcdk: the function already sets a variable to another value")
)

// EnvironmentNotSetError is the error [Table.Bind] and [BindSealing] return
// for a function whose environment is not defined in this app (imported with
// awslambda.Function_FromFunctionArn, _FromFunctionName or
// _FromFunctionAttributes, or an alias or version of such a function). The
// grant was made if the import names the role (CDK can change an imported function's
// role only when its attributes name the role: see Granted); Environment holds what the
// function needs, to be set where the function is defined (its own stack or
// template, or through [Table.Environment] there). Values may be CDK tokens
// (a table name), usable in this app, for example in a CfnOutput.
type EnvironmentNotSetError struct {
	// Function is the construct path of the function as given.
	Function string
	// Environment is every variable the function needs.
	Environment map[string]*string
	// Granted says whether the grant was made: false when the import does
	// not name the function's role (CDK cannot attach a policy to a role it
	// does not know, and would only warn), so the grant is to be made where
	// the role is defined, or the function imported with
	// awslambda.FunctionAttributes.Role.
	Granted bool
}

func (e *EnvironmentNotSetError) Error() string {
	grant := "the grant was made"
	if !e.Granted {
		grant = "nor its role, which the import does not name (import it with FunctionAttributes.Role, or grant where the role is defined)"
	}
	return fmt.Sprintf("%v: %s is imported (or an alias or version of an imported function): "+
		"%s; set %s where the function is defined", ErrEnvironmentNotSet, e.Function, grant,
		strings.Join(sortedNames(e.Environment), ", "))
}

// Is reports whether target is [ErrEnvironmentNotSet].
func (e *EnvironmentNotSetError) Is(target error) bool { return target == ErrEnvironmentNotSet }

// boundFunction is a function of any shape, resolved to the function whose
// environment a binding sets.
type boundFunction struct {
	given awslambda.IFunction // what the caller gave: the grantee
	path  string              // its construct path, for messages
	// local is the function defined in this app whose environment the
	// binding sets: given itself, or the function an alias or version runs.
	// Nil for an imported function.
	local awslambda.Function
}

// resolveFunction finds, for fn of any shape, the function whose environment
// a binding sets: a function defined in this app is its own; an alias or a
// version (fn.CurrentVersion(), awslambda.NewVersion, awslambda.NewAlias, or
// the imported Version_FromVersionArn) sets that of the function it runs,
// when that function is defined in this app. An imported function has none.
func resolveFunction(fn awslambda.IFunction) (boundFunction, error) {
	if fn == nil || reflect.ValueOf(fn).IsNil() {
		return boundFunction{}, fmt.Errorf("%w: no function", ErrInvalidProps)
	}
	b := boundFunction{given: fn, path: *fn.Node().Path()}
	underlying := fn
	switch f := fn.(type) {
	case awslambda.IAlias:
		underlying = f.Version().Lambda()
	case awslambda.IVersion:
		underlying = f.Lambda()
	}
	b.local, _ = underlying.(awslambda.Function)
	return b, nil
}

// environmentOf returns fn's environment variables as the template will
// hold them (tokens resolved to CloudFormation intrinsics). It reads the
// CfnFunction's properties (CDK renders the environment lazily from the
// function's variables), since awslambda.Function has no getter for them.
func environmentOf(fn awslambda.Function) map[string]any {
	cfn, ok := fn.Node().DefaultChild().(awslambda.CfnFunction)
	if !ok {
		return nil
	}
	props := cfn.CfnProperties()
	if props == nil {
		return nil
	}
	raw, ok := (*props)["environment"]
	if !ok || raw == nil {
		return nil
	}
	env, _ := plain(awscdk.Stack_Of(fn).Resolve(raw)).(map[string]any)
	vars, _ := env["variables"].(map[string]any) // CfnFunction.EnvironmentProperty, before rendering
	return vars
}

// plain resolves v in fn's stack and round-trips it through JSON, so that it
// compares with reflect.DeepEqual.
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// checkEnvironment refuses env when fn already sets one of its variables to
// another value, naming the first such variable (in name order).
func checkEnvironment(fn awslambda.Function, env map[string]*string) error {
	have := environmentOf(fn)
	stack := awscdk.Stack_Of(fn)
	for _, name := range sortedNames(env) {
		old, ok := have[name]
		if !ok {
			continue
		}
		if want := plain(stack.Resolve(env[name])); !reflect.DeepEqual(old, want) {
			return fmt.Errorf("%w: %s already sets %s to %s, and binding would set %s: "+
				"remove the other setting, or bind the function once", ErrEnvironmentConflict,
				*fn.Node().Path(), name, show(old), show(want))
		}
	}
	return nil
}

// setEnvironment sets env on fn (checked by checkEnvironment) and guards it:
// a later AddEnvironment that changes one of these variables fails
// synthesis, naming it, instead of silently rebinding the function.
func setEnvironment(fn awslambda.Function, env map[string]*string, by string) {
	stack := awscdk.Stack_Of(fn)
	want := map[string]any{}
	for _, name := range sortedNames(env) {
		fn.AddEnvironment(jsii.String(name), env[name], nil)
		want[name] = plain(stack.Resolve(env[name]))
	}
	fn.Node().AddValidation(&environmentGuard{fn: fn, want: want, by: by})
}

// environmentGuard is the validation setEnvironment adds.
type environmentGuard struct {
	fn   awslambda.Function
	want map[string]any
	by   string
}

// Validate reports each bound variable whose value changed after binding.
func (g *environmentGuard) Validate() *[]*string {
	have := environmentOf(g.fn)
	var errs []*string
	for _, name := range slices.Sorted(maps.Keys(g.want)) {
		if got := have[name]; !reflect.DeepEqual(got, g.want[name]) {
			errs = append(errs, jsii.String(fmt.Sprintf("%s set %s to %s, and it was changed afterwards to %s: "+
				"the function would not use what it was bound to", g.by, name, show(g.want[name]), show(got))))
		}
	}
	return &errs
}

var _ constructs.IValidation = (*environmentGuard)(nil)

func sortedNames(env map[string]*string) []string {
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// show renders a template value for a message: a string as quoted, an
// intrinsic as its JSON.
func show(v any) string {
	if v == nil {
		return "nothing"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
