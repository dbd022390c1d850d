// Command awsverify is `make aws-verify`: evidence from real AWS in one
// command. For a user with AWS credentials and a Region it prints what it
// will create (the CDK app's stacks under a unique, tagged name), the
// estimated cost and time, asks for confirmation (unless -yes), deploys,
// runs bounded checks — the store conformance suite, contention, a chaos
// run, the black-box flows through API Gateway and SQS, the undocumented
// DynamoDB behaviours the store depends on, and the capacity units of
// every bench scenario beside ddbtest's — writes a Markdown report under
// aws-reports/ and always tears down, after a failure or an interrupt too.
//
//	cd dev && go run ./awsverify            # AWS: asks first
//	cd dev && go run ./awsverify -local     # no AWS: ddbtest and the Lambda RIE
//	cd dev && go run ./awsverify -clean     # make aws-clean: leftovers by tag
//	cd dev && go run ./awsverify -preflight # Region and credentials only
//
// It refuses to run without credentials or a Region, and when an
// AWS_ENDPOINT_URL* variable points the SDK elsewhere, unless -endpoint-ok.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	os.Exit(cli(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, sigs))
}

// options are the command's flags.
type options struct {
	Local, Clean, Yes, EndpointOK bool
	Preflight                     bool
	Region                        string
	Out                           string
	ChaosOps                      int
	Seed                          uint64
	Checks                        string
	CDKCLI                        string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("awsverify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.Local, "local", false, "run every check against the in-process DynamoDB endpoint and the Lambda RIE: no AWS")
	fs.BoolVar(&o.Clean, "clean", false, "find the stacks of earlier runs by their tag and delete them (make aws-clean)")
	fs.BoolVar(&o.Yes, "yes", false, "do not ask for confirmation before creating resources")
	fs.BoolVar(&o.Preflight, "preflight", false, "only check the Region, the credentials and the endpoint variables, then exit (make aws-verify runs it before building anything)")
	fs.BoolVar(&o.EndpointOK, "endpoint-ok", false, "run although AWS_ENDPOINT_URL* variables are set: test the endpoint they name")
	fs.StringVar(&o.Region, "region", "", "AWS Region (default: AWS_REGION or the profile's)")
	fs.StringVar(&o.Out, "out", "", "report folder (default ../aws-reports, or ../build/aws-verify-local with -local)")
	fs.IntVar(&o.ChaosOps, "chaos-ops", 2000, "operations of the chaos run")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the chaos run's fault plan")
	fs.StringVar(&o.Checks, "checks", "", "comma-separated checks to run (default: all)")
	fs.StringVar(&o.CDKCLI, "cdk-cli", "npx --yes aws-cdk@2.1148.1", "the CDK CLI command")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("awsverify: unexpected arguments %q", fs.Args())
	}
	if o.ChaosOps < 1 {
		return o, errors.New("awsverify: -chaos-ops must be positive")
	}
	return o, nil
}

// allChecks are the checks in the order they run.
func allChecks(o options) []*check {
	return []*check{conformanceCheck, contentionCheck, chaosCheck(o.ChaosOps, o.Seed), behavioursCheck, shapesCheck, costCheck, flowsCheck}
}

// selectChecks keeps the checks named in list ("" keeps all).
func selectChecks(all []*check, list string) ([]*check, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var out []*check
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, c := range all {
			if c.Name == name {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			var names []string
			for _, c := range all {
				names = append(names, c.Name)
			}
			return nil, fmt.Errorf("awsverify: no check %q (checks: %s)", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// cli runs the command; it returns the exit code: 0 all passed (or
// declined), 1 a check or the teardown failed, 2 a refusal or bad usage,
// 130 interrupted.
func cli(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	devDir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if _, err := os.Stat(filepath.Join(devDir, "awsverify")); err != nil {
		fmt.Fprintln(stderr, "awsverify: run it from the dev/ folder (make aws-verify does)")
		return 2
	}
	checks, err := selectChecks(allChecks(o), o.Checks)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if o.Preflight && o.Local {
		fmt.Fprintln(stdout, "awsverify: -local needs no Region nor credentials: ready")
		return 0
	}
	p := &plan{RunID: newRunID(), Checks: checks, Local: o.Local}
	r := &runner{Stdin: stdin, Stdout: stdout, Yes: o.Yes || o.Local, Signals: sigs}
	if o.Local {
		out := o.Out
		if out == "" {
			out = filepath.Join(devDir, "..", "build", "aws-verify-local")
		}
		d := &localDeployer{DevDir: devDir}
		r.Deployer, r.NewWorld = d, d.world
		r.Report = func(rep *report) (string, error) { return writeReport(out, rep) }
		return exitCode(stderr, run(ctx, r, p))
	}

	load := func(ctx context.Context) (aws.Config, error) {
		var opts []func(*config.LoadOptions) error
		if o.Region != "" {
			opts = append(opts, config.WithRegion(o.Region))
		}
		return config.LoadDefaultConfig(ctx, opts...)
	}
	tgt, err := preflight(ctx, preflightOptions{Environ: os.Environ(), EndpointOK: o.EndpointOK, LoadConfig: load})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if o.Preflight {
		fmt.Fprintf(stdout, "awsverify: Region %s, credentials %s: ready\n", tgt.Config.Region, tgt.AccessKey)
		return 0
	}
	cdk := &cdkDeployer{CLI: strings.Fields(o.CDKCLI), Dir: filepath.Join(devDir, "..", "cdk"), Log: stdout}
	if o.Clean {
		return exitCode(stderr, clean(ctx, tgt.Config, stdin, stdout, o.Yes))
	}
	p.Region, p.Account, p.Stacks, p.Tables, p.CDKCLI = tgt.Config.Region, tgt.AccessKey, stackNames(p.RunID), tableRoles, o.CDKCLI
	p.Endpoints = tgt.Endpoints
	out := o.Out
	if out == "" {
		out = filepath.Join(devDir, "..", "aws-reports")
	}
	r.Deployer = cdk
	r.NewWorld = func(ctx context.Context, outs outputs) (*world, error) {
		return awsWorld(ctx, tgt.Config, devDir, p.RunID, outs)
	}
	r.Report = func(rep *report) (string, error) { return writeReport(out, rep) }
	return exitCode(stderr, run(ctx, r, p))
}

func run(ctx context.Context, r *runner, p *plan) error {
	_, err := r.run(ctx, p)
	return err
}

func exitCode(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errDeclined):
		fmt.Fprintln(stderr, err)
		return 0
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, err)
		return 130
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}
