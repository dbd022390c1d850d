package dynamostore

import (
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
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
	// effect is the action's index among the staged effects (for the
	// outbox item, that of its first message).
	effect int
	// outbox marks the Put of the outbox item.
	outbox bool
}

// describe validates one transaction item: exactly one action, with a table
// name and the key or item and expressions it needs.
func describe(item types.TransactWriteItem) (action, error) {
	var a action
	n := 0
	if p := item.Put; p != nil {
		n++
		a = action{"Put", aws.ToString(p.TableName), p.Item, mapSize(p.Item) + mapSize(p.ExpressionAttributeValues), 0, false}
		if len(p.Item) == 0 {
			return a, fmt.Errorf("%w: Put has no item", ErrInvalidEffect)
		}
	}
	if u := item.Update; u != nil {
		n++
		a = action{"Update", aws.ToString(u.TableName), u.Key, mapSize(u.Key) + mapSize(u.ExpressionAttributeValues), 0, false}
		if aws.ToString(u.UpdateExpression) == "" {
			return a, fmt.Errorf("%w: Update has no update expression", ErrInvalidEffect)
		}
	}
	if d := item.Delete; d != nil {
		n++
		a = action{"Delete", aws.ToString(d.TableName), d.Key, mapSize(d.Key) + mapSize(d.ExpressionAttributeValues), 0, false}
	}
	if c := item.ConditionCheck; c != nil {
		n++
		a = action{"ConditionCheck", aws.ToString(c.TableName), c.Key, mapSize(c.Key) + mapSize(c.ExpressionAttributeValues), 0, false}
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

// effectItems checks the effects of a commit of record key at now against
// DynamoDB's rules before anything is sent, and returns them as
// transaction items with what the store knows of each. recordSize is the
// size of the record's own item. Outbox messages (outbox.Stage) become
// one Put of an outbox item on Options.OutboxTable, the last item.
func (s *Store) effectItems(key string, now time.Time, effects []any, recordSize int) ([]types.TransactWriteItem, []action, error) {
	reject := func(format string, args ...any) error {
		return fmt.Errorf("dynamostore: commit: %w: %w: %s", lambdaidem.ErrEffectRejected, ErrInvalidEffect, fmt.Sprintf(format, args...))
	}
	items := make([]types.TransactWriteItem, 0, len(effects))
	actions := make([]action, 0, len(effects))
	var messages []outbox.Message
	firstMessage := -1
	total := recordSize
	for i, eff := range effects {
		var item types.TransactWriteItem
		switch v := eff.(type) {
		case outbox.Message:
			if firstMessage < 0 {
				firstMessage = i
			}
			messages = append(messages, v)
			continue
		case types.TransactWriteItem:
			item = v
		case *types.TransactWriteItem:
			if v == nil {
				return nil, nil, reject("effect %d is a nil *types.TransactWriteItem", i)
			}
			item = *v
		default:
			return nil, nil, reject("effect %d is a %T; stage a types.Put, Update, Delete or ConditionCheck with dynamostore.Stage", i, eff)
		}
		a, err := describe(item)
		if err != nil {
			return nil, nil, fmt.Errorf("dynamostore: commit: effect %d: %w: %w", i, lambdaidem.ErrEffectRejected, err)
		}
		if a.table == s.table && s.codec.isRecordKey(a.key, key) {
			return nil, nil, reject("effect %d (%s) writes the idempotency record's own item", i, a.name)
		}
		a.effect = i
		items = append(items, item)
		actions = append(actions, a)
		total += a.size
	}
	if len(messages) > 0 {
		item, a, err := s.outboxPut(key, now, messages)
		if err != nil {
			return nil, nil, reject("%v", err)
		}
		a.effect = firstMessage
		items = append(items, item)
		actions = append(actions, a)
		total += a.size
	}
	if len(items) > MaxEffects {
		return nil, nil, reject("%d staged writes (the outbox messages count as one); a commit holds at most %d", len(items), MaxEffects)
	}
	if total > MaxTransactionSize {
		return nil, nil, reject("the transaction's items take about %d bytes; DynamoDB allows %d", total, MaxTransactionSize)
	}
	return items, actions, nil
}

// outboxPut is the Put of the outbox item holding the messages a commit of
// key at now staged, conditioned on no unpublished item under the key.
func (s *Store) outboxPut(key string, now time.Time, messages []outbox.Message) (types.TransactWriteItem, action, error) {
	if s.opts.OutboxTable == "" {
		return types.TransactWriteItem{}, action{}, fmt.Errorf("%d outbox messages staged, but the store has no Options.OutboxTable", len(messages))
	}
	item := outboxitem.Encode(key, messages, now)
	a := action{name: "Put", table: s.opts.OutboxTable, key: map[string]types.AttributeValue{outboxitem.KeyAttr: item[outboxitem.KeyAttr]}, size: mapSize(item), outbox: true}
	if a.size > outboxitem.MaxItemSize {
		return types.TransactWriteItem{}, a, fmt.Errorf("the %d outbox messages take about %d bytes in one item; DynamoDB allows %d", len(messages), a.size, outboxitem.MaxItemSize)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                           aws.String(s.opts.OutboxTable),
		Item:                                item,
		ConditionExpression:                 aws.String(outboxitem.PutCondition),
		ExpressionAttributeNames:            outboxitem.Names(outboxitem.PutCondition),
		ExpressionAttributeValues:           map[string]types.AttributeValue{":published": outboxitem.S(outboxitem.Published)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, a, nil
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
