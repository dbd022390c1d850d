package dynamostore

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// DynamoDB's limits on one TransactWriteItems.
const (
	// MaxEffects is how many business writes one commit can carry: a
	// transaction holds at most 100 actions, and the record is one of them.
	MaxEffects = 99
	// MaxTransactionSize is DynamoDB's limit on the aggregate size of the
	// items in one transaction, 4 MB.
	MaxTransactionSize = 4 << 20
)

// action is what the store knows of one transaction item.
type action struct {
	name  string // Put, Update, Delete, ConditionCheck
	table string
	key   map[string]types.AttributeValue // the Key, or a Put's whole item
	size  int                             // estimated bytes DynamoDB counts
}

// describe validates one transaction item: exactly one action, with a table
// name and the key or item and expressions it needs.
func describe(item types.TransactWriteItem) (action, error) {
	var a action
	n := 0
	if p := item.Put; p != nil {
		n++
		a = action{"Put", aws.ToString(p.TableName), p.Item, mapSize(p.Item) + mapSize(p.ExpressionAttributeValues)}
		if len(p.Item) == 0 {
			return a, fmt.Errorf("%w: Put has no item", ErrInvalidEffect)
		}
	}
	if u := item.Update; u != nil {
		n++
		a = action{"Update", aws.ToString(u.TableName), u.Key, mapSize(u.Key) + mapSize(u.ExpressionAttributeValues)}
		if aws.ToString(u.UpdateExpression) == "" {
			return a, fmt.Errorf("%w: Update has no update expression", ErrInvalidEffect)
		}
	}
	if d := item.Delete; d != nil {
		n++
		a = action{"Delete", aws.ToString(d.TableName), d.Key, mapSize(d.Key) + mapSize(d.ExpressionAttributeValues)}
	}
	if c := item.ConditionCheck; c != nil {
		n++
		a = action{"ConditionCheck", aws.ToString(c.TableName), c.Key, mapSize(c.Key) + mapSize(c.ExpressionAttributeValues)}
		if aws.ToString(c.ConditionExpression) == "" {
			return a, fmt.Errorf("%w: ConditionCheck has no condition expression", ErrInvalidEffect)
		}
	}
	switch {
	case n != 1:
		return a, fmt.Errorf("%w: a transaction item needs exactly one of Put, Update, Delete or ConditionCheck, got %d", ErrInvalidEffect, n)
	case a.table == "":
		return a, fmt.Errorf("%w: %s has no table name", ErrInvalidEffect, a.name)
	case len(a.key) == 0:
		return a, fmt.Errorf("%w: %s has no key", ErrInvalidEffect, a.name)
	}
	return a, nil
}

// actionName names the action of item for messages.
func actionName(item types.TransactWriteItem) string {
	switch {
	case item.Put != nil:
		return "Put"
	case item.Update != nil:
		return "Update"
	case item.Delete != nil:
		return "Delete"
	case item.ConditionCheck != nil:
		return "ConditionCheck"
	}
	return "empty write"
}

// effectItems checks the effects of a commit of record key against
// DynamoDB's rules before anything is sent, and returns them as
// transaction items with what the store knows of each. recordSize is the
// size of the record's own item.
func (s *Store) effectItems(key string, effects []any, recordSize int) ([]types.TransactWriteItem, []action, error) {
	reject := func(format string, args ...any) error {
		return fmt.Errorf("dynamostore: commit: %w: %w: %s", lambdaidem.ErrEffectRejected, ErrInvalidEffect, fmt.Sprintf(format, args...))
	}
	if len(effects) > MaxEffects {
		return nil, nil, reject("%d staged writes; a commit holds at most %d", len(effects), MaxEffects)
	}
	items := make([]types.TransactWriteItem, len(effects))
	actions := make([]action, len(effects))
	total := recordSize
	for i, eff := range effects {
		switch v := eff.(type) {
		case types.TransactWriteItem:
			items[i] = v
		case *types.TransactWriteItem:
			if v == nil {
				return nil, nil, reject("effect %d is a nil *types.TransactWriteItem", i)
			}
			items[i] = *v
		default:
			return nil, nil, reject("effect %d is a %T; stage a types.Put, Update, Delete or ConditionCheck with dynamostore.Stage", i, eff)
		}
		a, err := describe(items[i])
		if err != nil {
			return nil, nil, fmt.Errorf("dynamostore: commit: effect %d: %w: %w", i, lambdaidem.ErrEffectRejected, err)
		}
		if a.table == s.table && s.codec.isRecordKey(a.key, key) {
			return nil, nil, reject("effect %d (%s) writes the idempotency record's own item", i, a.name)
		}
		actions[i] = a
		total += a.size
	}
	if total > MaxTransactionSize {
		return nil, nil, reject("the transaction's items take about %d bytes; DynamoDB allows %d", total, MaxTransactionSize)
	}
	return items, actions, nil
}

// mapSize estimates the bytes DynamoDB counts for an attribute map: each
// attribute's name plus its value.
func mapSize(m map[string]types.AttributeValue) int {
	n := 0
	for name, v := range m {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += len(s)/2 + 1
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + mapSize(v.Value) + len(v.Value)
	}
	return 1 // BOOL, NULL
}

// sortedNames returns the attribute names of m in order.
func sortedNames(m map[string]types.AttributeValue) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
