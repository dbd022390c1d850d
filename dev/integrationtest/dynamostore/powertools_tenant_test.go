package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestPowertoolsWindowNeverAnswersAnotherTenant: Powertools derives its
// record key from the event alone (function, handler, the selected
// payload), so in tenant isolation mode an old version's record is every
// tenant's. Through PowertoolsHandler and Do on a real table, tenant green
// sending the order id whose old record tenant blue's invocation completed
// is refused (ErrPowertoolsTenant), never answered with blue's outcome,
// and nothing runs.
func TestPowertoolsWindowNeverAnswersAnotherTenant(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	e.putItem(t, ptItem(t, "done", 10, "COMPLETED", clk.Now().Add(time.Hour), time.Time{}, `"blue's answer"`))
	ran := 0
	h := dynamostore.PowertoolsHandler(e.store, func(ctx context.Context, id string) (string, error) {
		return lambdaidem.Do(ctx, g, call(id), func(context.Context) (string, error) {
			ran++
			return "green's answer", nil
		})
	}, func(id string) (any, error) { return id, nil }, func(string) (any, error) { return 10, nil })
	green := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{TenantID: "green"})
	got, err := h(green, "done")
	if !errors.Is(err, dynamostore.ErrPowertoolsTenant) || got == "blue's answer" || ran != 0 {
		t.Errorf("tenant green through PowertoolsHandler: %q, %v, ran %d; want ErrPowertoolsTenant, no replay, no run", got, err, ran)
	}
	// Without a tenant the old record is the same operation, as before.
	if got, err := h(context.Background(), "done"); err != nil || got != "blue's answer" || ran != 0 {
		t.Errorf("without a tenant: %q, %v, ran %d; want the old record replayed", got, err, ran)
	}
}
