package lambdaidem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDisableSwitch(t *testing.T) {
	cases := []struct {
		name     string
		disabled bool
		vars     map[string]string
		wantErr  string // New's error, or "" to build
		wantOff  bool
	}{
		{"default", false, nil, "", false},
		{"env true", false, map[string]string{"LAMBDAIDEM_DISABLED": "true"}, "", true},
		{"env 1", false, map[string]string{"LAMBDAIDEM_DISABLED": "1"}, "", true},
		{"env false", false, map[string]string{"LAMBDAIDEM_DISABLED": "false"}, "", false},
		{"env not a boolean", false, map[string]string{"LAMBDAIDEM_DISABLED": "yes please"}, "not a boolean", false},
		{"option", true, nil, "", true},
		{"env in Lambda", false, map[string]string{"LAMBDAIDEM_DISABLED": "true", "AWS_LAMBDA_FUNCTION_NAME": "payments"}, "Lambda execution environment", false},
		{"option in Lambda", true, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "payments"}, "Lambda execution environment", false},
		{"in Lambda, not disabled", false, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "payments"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := captureDefault(t)
			store := memstore.New()
			g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
				o.Disabled = c.disabled
				o.Getenv = env(c.vars)
			})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("New = %v; want an error saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loud := strings.Contains(buf.String(), "level=ERROR") && strings.Contains(buf.String(), "IDEMPOTENCY DISABLED"); loud != c.wantOff {
				t.Fatalf("log %q; want a loud line: %v", buf, c.wantOff)
			}
			runs := 0
			for range 2 {
				if _, err := lambdaidem.Do(context.Background(), g, call("k", "p"), func(context.Context) (string, error) { runs++; return "ok", nil }); err != nil {
					t.Fatal(err)
				}
			}
			if off := runs == 2 && len(store.Records()) == 0 && store.Calls()["claim"] == 0; off != c.wantOff {
				t.Fatalf("%d runs, %d records, %d claims; want disabled: %v", runs, len(store.Records()), store.Calls()["claim"], c.wantOff)
			}
		})
	}
}

// With idempotency off, a staged write cannot be committed, and the call
// says so rather than dropping it.
func TestDisabledRefusesStagedWrites(t *testing.T) {
	g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Disabled = true; o.Getenv = env(nil) })
	if err != nil {
		t.Fatal(err)
	}
	_, err = lambdaidem.Do(context.Background(), g, call("k", "p"), func(ctx context.Context) (string, error) { return stagePayment(ctx, "k") })
	if err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("Do = %v; want an error saying idempotency is disabled", err)
	}
	_, err = lambdaidem.Do(context.Background(), g, call("k", "p"), func(ctx context.Context) (string, error) { return "", errDeclined })
	if !errors.Is(err, errDeclined) {
		t.Fatalf("Do = %v; want the handler's error unchanged", err)
	}
}
