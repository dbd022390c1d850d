// Command cdk is the lambdaidem example CDK app: it synthesizes the payments and
// orders stacks of package stacks into a cloud assembly.
//
// Run by the CDK CLI (cdk.json: "go mod download && go run ."), or directly to
// synthesize without the CLI or AWS credentials:
//
//	go run . [-o cdk.out] [-c key=value ...]
//
// The context keys are listed in package stacks (paymentsZip, ordersZip,
// jwtIssuer, jwtAudience, paymentsTtl, destroyTables, arch, httpApi, publicApi). The output folder is
// CDK_OUTDIR when the CLI sets it, else -o (default cdk.out).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

// contextFlags collects repeated -c key=value flags.
type contextFlags map[string]any

func (c contextFlags) String() string { return fmt.Sprint(map[string]any(c)) }

func (c contextFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	c[k] = v
	return nil
}

func main() {
	ctx := contextFlags{}
	out := flag.String("o", "cdk.out", "cloud assembly folder (CDK_OUTDIR, set by the CDK CLI, wins)")
	flag.Var(ctx, "c", "context `key=value` (repeatable)")
	flag.Parse()

	props := &awscdk.AppProps{Context: (*map[string]any)(&ctx)}
	if os.Getenv("CDK_OUTDIR") == "" {
		props.Outdir = out
	}
	app := awscdk.NewApp(props)
	if err := stacks.Build(app); err != nil {
		jsii.Close()
		fmt.Fprintln(os.Stderr, "lambdaidem cdk:", err)
		os.Exit(1)
	}
	asm := app.Synth(nil)
	fmt.Fprintln(os.Stderr, "lambdaidem cdk: cloud assembly in", *asm.Directory())
	jsii.Close()
}
