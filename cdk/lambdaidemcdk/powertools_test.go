package lambdaidemcdk_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// The window's settings reach the function as the variables
// dynamostore.ReadPowertoolsEnv reads; bad props are refused.
func TestBindPowertoolsWindow(t *testing.T) {
	stack := newStack(t)
	fn := newFunction(t, stack, "Fn", 0)
	stops := time.Date(2027, 1, 15, 9, 0, 0, 0, time.UTC)
	until := lambdaidemcdk.PowertoolsWindowCloses(stops, 3600, 30*time.Second)
	assert.Equal(t, time.Date(2027, 1, 15, 10, 0, 30, 0, time.UTC), until)
	require.NoError(t, lambdaidemcdk.BindPowertoolsWindow(fn, lambdaidemcdk.PowertoolsWindowProps{
		Language: "Python", FunctionName: "orders", Handler: "app.handler", Validation: true, Until: until,
	}))
	tmpl := cdktest.Synth(t, stack)
	assert.Equal(t, map[string]any{
		"IDEMPOTENCY_POWERTOOLS_UNTIL":         "2027-01-15T10:00:30Z",
		"IDEMPOTENCY_POWERTOOLS_LANGUAGE":      "python",
		"IDEMPOTENCY_POWERTOOLS_FUNCTION_NAME": "orders",
		"IDEMPOTENCY_POWERTOOLS_HANDLER":       "app.handler",
		"IDEMPOTENCY_POWERTOOLS_VALIDATION":    "true",
	}, envOf(t, tmpl, "Fn"))

	other := newFunction(t, newStack(t), "Other", 0)
	for _, p := range []lambdaidemcdk.PowertoolsWindowProps{
		{Language: "ruby", FunctionName: "orders", Until: until},
		{Language: "typescript", FunctionName: "orders"},
		{Language: "typescript", Until: until},
	} {
		err := lambdaidemcdk.BindPowertoolsWindow(other, p)
		assert.True(t, errors.Is(err, lambdaidemcdk.ErrInvalidProps), "%+v: %v", p, err)
	}
}
