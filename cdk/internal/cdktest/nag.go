package cdktest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Finding is one unsuppressed cdk-nag error or warning.
type Finding struct {
	Level   string // "error" or "warning"
	Path    string // the construct path of the resource ("/Stack/Fn/Resource")
	Rule    string // the rule id ("AwsSolutions-IAM5")
	Message string // the rule's message
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s", f.Level, f.Rule, f.Path, f.Message)
}

// NagPacks are the rule packs [Nag] applies: AWS Solutions (the general
// best-practice pack) and Serverless (Lambda, API Gateway, SQS, streams).
var NagPacks = []string{"AwsSolutions", "Serverless"}

// ApplyNag adds the AwsSolutions and Serverless cdk-nag packs to stack as
// aspects. Call it before the stack is first synthesized: aspects run at
// synthesis.
func ApplyNag(stack awscdk.Stack) {
	props := &cdknag.NagPackProps{Reports: jsii.Bool(false)}
	awscdk.Aspects_Of(stack).Add(cdknag.NewAwsSolutionsChecks(props), nil)
	awscdk.Aspects_Of(stack).Add(cdknag.NewServerlessChecks(props), nil)
}

// Nag synthesizes stack, to which [ApplyNag] was applied, and returns every
// unsuppressed finding (errors and warnings) of the packs, sorted. A
// suppressed finding is not reported: cdk-nag records no annotation for it.
func Nag(t testing.TB, stack awscdk.Stack) []Finding {
	t.Helper()
	a := assertions.Annotations_FromStack(stack)
	var out []Finding
	all := assertions.Match_StringLikeRegexp(jsii.String(".*"))
	// The assertions API of aws-cdk-go v2.277 returns only cxapi's
	// SynthesisMessage, which its docs mark as moved to a package the Go
	// binding does not have.
	//lint:ignore SA1019 the only type Annotations.FindError/FindWarning return
	for level, msgs := range map[string]*[]*cxapi.SynthesisMessage{
		"error":   a.FindError(jsii.String("*"), all),
		"warning": a.FindWarning(jsii.String("*"), all),
	} {
		for _, m := range *msgs {
			msg := fmt.Sprint(m.Entry.Data) //lint:ignore SA1019 see above
			rule, _, _ := strings.Cut(msg, ":")
			rule, _, _ = strings.Cut(rule, "[")
			if !isNagRule(rule) {
				continue // a CDK warning, not a finding of the packs
			}
			//lint:ignore SA1019 see above
			out = append(out, Finding{Level: level, Path: *m.Id, Rule: rule, Message: strings.TrimSpace(msg)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func isNagRule(id string) bool {
	for _, p := range NagPacks {
		if strings.HasPrefix(id, p+"-") {
			return true
		}
	}
	return false
}
