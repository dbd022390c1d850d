package dynamostore

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// expr collects the placeholders of one request's expressions. DynamoDB
// rejects a name or value placeholder that no expression uses, so each is
// registered only when an expression asks for it.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
	byAttr map[string]string
}

// n returns the name placeholder for attr, the same one on every call.
func (e *expr) n(attr string) string {
	if p, ok := e.byAttr[attr]; ok {
		return p
	}
	if e.names == nil {
		e.names = map[string]string{}
		e.byAttr = map[string]string{}
	}
	p := "#n" + strconv.Itoa(len(e.names))
	e.names[p] = attr
	e.byAttr[attr] = p
	return p
}

// v returns a fresh value placeholder for av.
func (e *expr) v(av types.AttributeValue) string {
	if e.values == nil {
		e.values = map[string]types.AttributeValue{}
	}
	p := ":v" + strconv.Itoa(len(e.values))
	e.values[p] = av
	return p
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
