package dynamostore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

var pk = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}

// stagers are the four typed staging helpers, each with a valid write.
var stagers = map[string]func(ctx context.Context) error{
	"Put": func(ctx context.Context) error {
		return dynamostore.Stage(ctx, types.Put{TableName: aws.String("orders"), Item: pk})
	},
	"Update": func(ctx context.Context) error {
		return dynamostore.Stage(ctx, types.Update{TableName: aws.String("orders"), Key: pk, UpdateExpression: aws.String("REMOVE x")})
	},
	"Delete": func(ctx context.Context) error {
		return dynamostore.Stage(ctx, types.Delete{TableName: aws.String("orders"), Key: pk})
	},
	"ConditionCheck": func(ctx context.Context) error {
		return dynamostore.Stage(ctx, types.ConditionCheck{TableName: aws.String("orders"), Key: pk, ConditionExpression: aws.String("attribute_exists(pk)")})
	},
}

// TestStageOutsideInvocation: a write staged outside a wrapped invocation
// fails loudly with ErrNoAttempt instead of vanishing.
func TestStageOutsideInvocation(t *testing.T) {
	for name, stage := range stagers {
		if err := stage(context.Background()); !errors.Is(err, lambdaidem.ErrNoAttempt) {
			t.Errorf("%s outside an invocation = %v; want ErrNoAttempt", name, err)
		}
	}
}

// TestStageValidates: what can be checked at once is checked when the
// write is staged.
func TestStageValidates(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t, nil)
	cases := map[string]func(ctx context.Context) error{
		"Put without table": func(ctx context.Context) error { return dynamostore.Stage(ctx, types.Put{Item: pk}) },
		"Put without item":  func(ctx context.Context) error { return dynamostore.Stage(ctx, types.Put{TableName: aws.String("t")}) },
		"Update without key": func(ctx context.Context) error {
			return dynamostore.Stage(ctx, types.Update{TableName: aws.String("t"), UpdateExpression: aws.String("REMOVE x")})
		},
		"Update without expression": func(ctx context.Context) error {
			return dynamostore.Stage(ctx, types.Update{TableName: aws.String("t"), Key: pk})
		},
		"Delete without key": func(ctx context.Context) error {
			return dynamostore.Stage(ctx, types.Delete{TableName: aws.String("t")})
		},
		"ConditionCheck without cond.": func(ctx context.Context) error {
			return dynamostore.Stage(ctx, types.ConditionCheck{TableName: aws.String("t"), Key: pk})
		},
	}
	for name, stage := range cases {
		_, err := lambdaidem.Do(context.Background(), g, call(name), func(ctx context.Context) (string, error) {
			return "", stage(ctx)
		})
		if !errors.Is(err, dynamostore.ErrInvalidEffect) {
			t.Errorf("%s = %v; want ErrInvalidEffect", name, err)
		}
	}
	for name, stage := range stagers {
		_, err := lambdaidem.Do(context.Background(), g, call("valid "+name), func(ctx context.Context) (string, error) {
			return "", stage(ctx)
		})
		if err != nil && errors.Is(err, dynamostore.ErrInvalidEffect) {
			t.Errorf("valid %s refused: %v", name, err)
		}
	}
}

// TestStageCopiesMaps: changing an item's map after staging it does not
// change what is committed.
func TestStageCopiesMaps(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t, nil)
	_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		p := *e.order("first").Put
		if err := dynamostore.Stage(ctx, p); err != nil {
			return "", err
		}
		p.Item["pk"] = &types.AttributeValueMemberS{Value: "changed"}
		return "ok", nil
	})
	if err != nil || !e.written(t, "first") || e.written(t, "changed") {
		t.Fatalf("Do = %v; want the item as staged written", err)
	}
}
