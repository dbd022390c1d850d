package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// stubStacks is CloudFormation with two pages of stacks, recording the
// deletions and failing them on demand.
type stubStacks struct {
	deleted   []string
	deleteErr error
}

func (s *stubStacks) DescribeStacks(_ context.Context, in *cloudformation.DescribeStacksInput, _ ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error) {
	tag := func(k, v string) []cftypes.Tag { return []cftypes.Tag{{Key: aws.String(k), Value: aws.String(v)}} }
	if in.NextToken == nil {
		return &cloudformation.DescribeStacksOutput{NextToken: aws.String("2"), Stacks: []cftypes.Stack{
			{StackName: aws.String("lambdaidem-payments-v1"), StackStatus: cftypes.StackStatusCreateComplete, Tags: tag(TagKey, "v1")},
			{StackName: aws.String("someone-elses"), StackStatus: cftypes.StackStatusCreateComplete, Tags: tag("team", "x")},
		}}, nil
	}
	return &cloudformation.DescribeStacksOutput{Stacks: []cftypes.Stack{
		{StackName: aws.String("lambdaidem-verify-v2"), StackStatus: cftypes.StackStatusRollbackFailed, Tags: tag(TagKey, "v2")},
		{StackName: aws.String("lambdaidem-orders-v0"), StackStatus: cftypes.StackStatusDeleteComplete, Tags: tag(TagKey, "v0")},
	}}, nil
}

func (s *stubStacks) DeleteStack(_ context.Context, in *cloudformation.DeleteStackInput, _ ...func(*cloudformation.Options)) (*cloudformation.DeleteStackOutput, error) {
	s.deleted = append(s.deleted, aws.ToString(in.StackName))
	return &cloudformation.DeleteStackOutput{}, s.deleteErr
}

func TestCleanDeletesOnlyTaggedStacksAfterAsking(t *testing.T) {
	for _, c := range []struct {
		name, stdin string
		yes         bool
		wantDeleted string
		wantErr     error
	}{
		{"declined", "no\n", false, "", errDeclined},
		{"confirmed", "yes\n", false, "lambdaidem-payments-v1 lambdaidem-verify-v2", nil},
		{"-yes", "", true, "lambdaidem-payments-v1 lambdaidem-verify-v2", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &stubStacks{}
			var out bytes.Buffer
			err := cleanWith(t.Context(), api, "eu-west-1", strings.NewReader(c.stdin), &out, c.yes)
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("clean = %v; want %v", err, c.wantErr)
			}
			if got := strings.Join(api.deleted, " "); got != c.wantDeleted {
				t.Fatalf("deleted %q; want %q", got, c.wantDeleted)
			}
			if !strings.Contains(out.String(), "lambdaidem-verify-v2 (run v2, ROLLBACK_FAILED") || strings.Contains(out.String(), "someone-elses") {
				t.Fatalf("listing:\n%s", &out)
			}
		})
	}
	api := &stubStacks{deleteErr: errors.New("denied")}
	if err := cleanWith(t.Context(), api, "eu-west-1", nil, &bytes.Buffer{}, true); err == nil || !strings.Contains(err.Error(), "lambdaidem-verify-v2: denied") {
		t.Fatalf("a failed deletion: %v", err)
	}
}
