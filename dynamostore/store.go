package dynamostore

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Client is the part of the DynamoDB API the store calls, with the SDK's
// exact signatures: *dynamodb.Client satisfies it. On the idempotency table
// the store uses only GetItem, PutItem, UpdateItem and DeleteItem (the
// actions the CDK construct grants); TransactWriteItems carries the record
// write together with the business writes a handler staged.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Store is a [lambdaidem.Store] backed by one DynamoDB table. It is safe
// for concurrent use; build one at start-up and share it.
type Store struct {
	conflicts
	client Client
	table  string
	opts   Options
	codec  codec
	x      expressions
}

var _ lambdaidem.Store = (*Store)(nil)

// New returns a Store over the DynamoDB table named table, with the options
// applied to the defaults. It returns an error if client is nil, table is
// empty or an option is invalid. New makes no call; the table (key schema
// KeyAttr, and SortKeyAttr if set, both strings; TTL on ExpirationAttr)
// belongs in infrastructure code, such as the repository's cdk module.
func New(client Client, table string, optFns ...func(*Options)) (*Store, error) {
	if client == nil {
		return nil, errors.New("dynamostore: nil client")
	}
	if table == "" {
		return nil, errors.New("dynamostore: empty table name")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if o.OutboxTable == table {
		return nil, errors.New("dynamostore: OutboxTable is the record table; outbox items need a table (and stream) of their own")
	}
	s := &Store{client: client, table: table, opts: o}
	s.conflicts = conflicts{opts: &s.opts}
	s.codec = codec{opts: &s.opts}
	s.x = newExpressions(&s.opts)
	return s, nil
}

// Table returns the name of the store's table.
func (s *Store) Table() string { return s.table }

// Options returns a copy of the store's options, defaults filled in.
func (s *Store) Options() Options { return s.opts }
