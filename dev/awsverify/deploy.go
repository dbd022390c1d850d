package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// CDK context keys of the app (cdk/stacks) that a run sets.
const (
	contextStackSuffix = "stackSuffix"
	contextVerify      = "verifyStack"
)

// cdkDeployer deploys and destroys a run's stacks with the CDK CLI, as
// `make deploy` does, under the run's stack suffix and tag.
type cdkDeployer struct {
	CLI []string // the CDK CLI command ("npx --yes aws-cdk@…")
	Dir string   // the cdk/ folder
	Log io.Writer
}

// contextArgs are the CDK context of a run: its stacks' suffix, the verify
// stack, tables destroyed with their stacks, and a payments API without an
// authorizer (throttled; it exists for the run only).
func contextArgs(p *plan) []string {
	return []string{"-c", contextStackSuffix + "=-" + p.RunID, "-c", contextVerify + "=true",
		"-c", "destroyTables=true", "-c", "publicApi=true"}
}

func (d *cdkDeployer) cdk(ctx context.Context, args ...string) error {
	if len(d.CLI) == 0 {
		return errors.New("no CDK CLI command")
	}
	cmd := exec.CommandContext(ctx, d.CLI[0], append(append([]string(nil), d.CLI[1:]...), args...)...)
	cmd.Dir = d.Dir
	cmd.Stdout, cmd.Stderr = d.Log, d.Log
	// An interrupted deploy stops the CLI, which leaves CloudFormation to
	// finish or roll back; Destroy follows.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	fmt.Fprintf(d.Log, "awsverify: %s %s\n", strings.Join(d.CLI, " "), strings.Join(args, " "))
	return cmd.Run()
}

func (d *cdkDeployer) Deploy(ctx context.Context, p *plan) (outputs, error) {
	f, err := os.CreateTemp("", "awsverify-cdk-outputs-*.json")
	if err != nil {
		return nil, err
	}
	f.Close()
	defer os.Remove(f.Name())
	args := append([]string{"deploy", "--all", "--require-approval", "never", "--outputs-file", f.Name(),
		"--tags", TagKey + "=" + p.RunID}, contextArgs(p)...)
	if err := d.cdk(ctx, args...); err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, err
	}
	return readOutputs(doc, p.RunID)
}

func (d *cdkDeployer) Destroy(ctx context.Context, p *plan) error {
	return d.cdk(ctx, append([]string{"destroy", "--all", "--force"}, contextArgs(p)...)...)
}

// readOutputs parses `cdk deploy --outputs-file` and keys it by stack id,
// the run's suffix removed.
func readOutputs(doc []byte, runID string) (outputs, error) {
	var raw map[string]map[string]string
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("the CDK outputs file: %w", err)
	}
	out := outputs{}
	for stack, o := range raw {
		out[strings.TrimSuffix(stack, "-"+runID)] = o
	}
	return out, nil
}

// leftover is a stack of an earlier run, found by its tag.
type leftover struct {
	Stack, RunID, Status string
	Created              time.Time
}

// stacksAPI is the part of CloudFormation the cleaner calls.
type stacksAPI interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, optFns ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
	DeleteStack(ctx context.Context, in *cloudformation.DeleteStackInput, optFns ...func(*cloudformation.Options)) (*cloudformation.DeleteStackOutput, error)
}

// findLeftovers lists the stacks tagged TagKey (at most 100 pages).
func findLeftovers(ctx context.Context, api stacksAPI) ([]leftover, error) {
	var found []leftover
	var next *string
	for range 100 {
		out, err := api.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{NextToken: next})
		if err != nil {
			return nil, fmt.Errorf("list the stacks: %w", err)
		}
		for _, st := range out.Stacks {
			if st.StackStatus == cftypes.StackStatusDeleteComplete {
				continue
			}
			for _, t := range st.Tags {
				if aws.ToString(t.Key) == TagKey {
					found = append(found, leftover{Stack: aws.ToString(st.StackName), RunID: aws.ToString(t.Value), Status: string(st.StackStatus), Created: aws.ToTime(st.CreationTime)})
				}
			}
		}
		if next = out.NextToken; next == nil {
			break
		}
	}
	return found, nil
}

// removeLeftovers deletes each stack (CloudFormation deletes its tables:
// the run sets RemovalPolicy DESTROY) and does not wait.
func removeLeftovers(ctx context.Context, api stacksAPI, left []leftover) error {
	var errs []error
	for _, l := range left {
		if _, err := api.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(l.Stack)}); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", l.Stack, err))
		}
	}
	return errors.Join(errs...)
}

// clean is `make aws-clean`: it lists the tagged stacks, asks unless yes,
// and deletes them.
func clean(ctx context.Context, cfg aws.Config, stdin io.Reader, stdout io.Writer, yes bool) error {
	return cleanWith(ctx, cloudformation.NewFromConfig(cfg), cfg.Region, stdin, stdout, yes)
}

func cleanWith(ctx context.Context, api stacksAPI, region string, stdin io.Reader, stdout io.Writer, yes bool) error {
	left, err := findLeftovers(ctx, api)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		fmt.Fprintf(stdout, "awsverify: no stack tagged %s in %s\n", TagKey, region)
		return nil
	}
	fmt.Fprintf(stdout, "awsverify: stacks tagged %s in %s:\n", TagKey, region)
	for _, l := range left {
		fmt.Fprintf(stdout, "  %s (run %s, %s, created %s)\n", l.Stack, l.RunID, l.Status, l.Created.UTC().Format(time.RFC3339))
	}
	if !yes {
		fmt.Fprint(stdout, "Type yes to delete them: ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if !strings.EqualFold(strings.TrimSpace(line), "yes") {
			return errDeclined
		}
	}
	if err := removeLeftovers(ctx, api, left); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "awsverify: deletion started for %d stacks (CloudFormation finishes it)\n", len(left))
	return nil
}
