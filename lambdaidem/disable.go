package lambdaidem

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
)

// DisableEnv names the environment variable that turns idempotency off
// outside Lambda, the counterpart of Powertools'
// POWERTOOLS_IDEMPOTENCY_DISABLED: "true" or "1" sets Options.Disabled.
const DisableEnv = "LAMBDAIDEM_DISABLED"

// lambdaMarker is set by the Lambda service in every execution
// environment (and by the Runtime Interface Emulator).
const lambdaMarker = "AWS_LAMBDA_FUNCTION_NAME"

// applyDisable reads DisableEnv, refuses to disable inside Lambda, and
// says loudly that idempotency is off.
func (o *Options) applyDisable() error {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if v := o.Getenv(DisableEnv); v != "" {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("lambdaidem: %s=%q is not a boolean", DisableEnv, v)
		}
		o.Disabled = o.Disabled || off
	}
	if !o.Disabled {
		return nil
	}
	if fn := o.Getenv(lambdaMarker); fn != "" {
		return fmt.Errorf("lambdaidem: idempotency cannot be disabled in a Lambda execution environment (%s=%s); unset %s and Options.Disabled", lambdaMarker, fn, DisableEnv)
	}
	o.Logger.LogAttrs(context.Background(), slog.LevelError,
		"lambdaidem: IDEMPOTENCY DISABLED: every duplicate runs its handler again and nothing is stored (Options.Disabled or "+DisableEnv+")")
	return nil
}

// disabled runs fn as if no store existed.
func (o *op[Out]) disabled(ctx context.Context) (Out, error) {
	var zero Out
	a := &Attempt{operationKey: operationKey(o.key), since: o.g.opts.Now(), number: 1, mode: o.g.opts.Mode}
	out, err := o.invoke(ctx, a, nil)
	if effects, _ := a.close(); len(effects) > 0 {
		return zero, fmt.Errorf("lambdaidem: %d staged writes cannot be committed: idempotency is disabled (Options.Disabled or %s)", len(effects), DisableEnv)
	}
	return out, unmark(err)
}
