package dynamostore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

func TestReadPowertoolsEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	w, err := dynamostore.ReadPowertoolsEnv(env(nil))
	if err != nil || !w.Until.IsZero() || w.Config != (powertools.Config{}) {
		t.Errorf("nothing set: %+v, %v; want no window", w, err)
	}
	w, err = dynamostore.ReadPowertoolsEnv(env(map[string]string{
		dynamostore.EnvPowertoolsUntil:        "2027-01-15T10:00:00Z",
		dynamostore.EnvPowertoolsLanguage:     "python",
		dynamostore.EnvPowertoolsFunctionName: "orders",
		dynamostore.EnvPowertoolsHandler:      "app.handler",
		dynamostore.EnvPowertoolsValidation:   "true",
	}))
	want := dynamostore.PowertoolsWindow{
		Config:     powertools.Config{Language: powertools.Python, FunctionName: "orders", Handler: "app.handler"},
		Until:      time.Date(2027, 1, 15, 10, 0, 0, 0, time.UTC),
		Validation: true,
	}
	if err != nil || w.Config != want.Config || !w.Until.Equal(want.Until) || w.Validation != want.Validation {
		t.Errorf("ReadPowertoolsEnv = %+v, %v; want %+v", w, err, want)
	}
	_, err = dynamostore.ReadPowertoolsEnv(env(map[string]string{
		dynamostore.EnvPowertoolsLanguage:     "ruby",
		dynamostore.EnvPowertoolsValidation:   "yes",
		dynamostore.EnvPowertoolsFunctionName: "orders",
	}))
	if !errors.Is(err, dynamostore.ErrEnvironment) {
		t.Fatalf("bad values: %v; want ErrEnvironment", err)
	}
	for _, name := range []string{dynamostore.EnvPowertoolsUntil, dynamostore.EnvPowertoolsLanguage, dynamostore.EnvPowertoolsValidation} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	_, err = dynamostore.ReadPowertoolsEnv(env(map[string]string{
		dynamostore.EnvPowertoolsUntil: "2027-01-15T10:00:00Z", dynamostore.EnvPowertoolsLanguage: "java", dynamostore.EnvPowertoolsHashFunction: "crc32",
	}))
	if !errors.Is(err, dynamostore.ErrEnvironment) || !strings.Contains(err.Error(), dynamostore.EnvPowertoolsHashFunction) {
		t.Errorf("crc32: %v; want ErrEnvironment naming %s", err, dynamostore.EnvPowertoolsHashFunction)
	}
	// A store refuses a window on a table with a sort key.
	_, err = dynamostore.New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", func(o *dynamostore.Options) {
		o.SortKeyAttr, o.SortKeyValue = "sk", "v"
		o.Powertools = want
	})
	if err == nil {
		t.Error("New with a window and a sort key: nil error")
	}
}

// A window read from the environment without the old function's name or
// key prefix is refused, as lambdaidemcdk.BindPowertoolsWindow refuses it:
// Powertools' prefix would then be "test-func" (Python) or "" (TypeScript),
// which no deployed Powertools function wrote, and the window would find
// nothing, silently.
func TestReadPowertoolsEnvNeedsTheOldName(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{dynamostore.EnvPowertoolsUntil: "2027-01-15T10:00:00Z", dynamostore.EnvPowertoolsLanguage: "typescript"}
	_, err := dynamostore.ReadPowertoolsEnv(env(base))
	if !errors.Is(err, dynamostore.ErrEnvironment) || !strings.Contains(err.Error(), dynamostore.EnvPowertoolsFunctionName) {
		t.Errorf("no function name: %v; want ErrEnvironment naming %s", err, dynamostore.EnvPowertoolsFunctionName)
	}
	for _, name := range []string{dynamostore.EnvPowertoolsFunctionName, dynamostore.EnvPowertoolsKeyPrefix} {
		m := map[string]string{name: "orders"}
		for k, v := range base {
			m[k] = v
		}
		if _, err := dynamostore.ReadPowertoolsEnv(env(m)); err != nil {
			t.Errorf("with %s: %v", name, err)
		}
	}
}
