package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// Exit statuses.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitNoTable      = 3
	exitMalformedKey = 4
	exitNoRecord     = 5
	exitChanged      = 6
	exitNotSettle    = 7
	exitNotConfirmed = 8
	exitSealed       = 9
	exitHeld         = 10
)

// streams are the command's standard streams.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// env is what the command takes from its surroundings: test seams.
type env struct {
	getenv func(string) string
	now    func() time.Time
	// client builds the DynamoDB client for an endpoint ("" for AWS's)
	// and a Region ("" for the configured one).
	client func(ctx context.Context, endpoint, region string) (dynamostore.RecordsClient, error)
	// keys builds the key service of the KMS key keyID in a Region (""
	// for the configured one), accepting data keys of the previous keys
	// too, for --kms-key and --kms-previous-keys.
	keys func(ctx context.Context, region, keyID string, previous []string) (seal.KeyService, error)
	// progressEvery is the least time between two progress lines of list.
	progressEvery time.Duration
}

// system is the real environment: the process's variables and clock, and
// a client from the shared AWS configuration.
func system() env {
	return env{getenv: os.Getenv, now: time.Now, client: awsClient, keys: awsKeys, progressEvery: time.Second}
}

// awsKeys builds a KMS key service from the usual AWS configuration.
func awsKeys(ctx context.Context, region, keyID string, previous []string) (seal.KeyService, error) {
	cfg, err := awsConfig(ctx, region)
	if err != nil {
		return nil, err
	}
	return kmsseal.New(ctx, kms.NewFromConfig(cfg), keyID, func(o *kmsseal.Options) { o.PreviousKeys = previous })
}

// awsConfig loads the usual AWS configuration, in region if one is given.
func awsConfig(ctx context.Context, region string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("AWS configuration: %w", err)
	}
	return cfg, nil
}

// awsClient loads the usual AWS configuration (environment, shared files,
// SSO, roles) and points the client at endpoint when one is given.
func awsClient(ctx context.Context, endpoint, region string) (dynamostore.RecordsClient, error) {
	cfg, err := awsConfig(ctx, region)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errNotConfirmed: the operator did not confirm a deletion.
var errNotConfirmed = errors.New("not confirmed; nothing was deleted")

const usage = `usage: lambdaidem <command> [flags] [args]

Commands:
  key      print the record key of a client's idempotency key (no AWS call)
  show     print one record: state, times, lease, external mark, fingerprint, outcome (redacted)
  list     list records, filtered by status, stuck, age; --emf: the oldest UNKNOWN record's age as a metric
  resolve  settle an UNKNOWN record as done (with its outcome) or not done (released)
  forget   delete a record, after confirmation
  outbox   list, show, release or discard outbox items the relay set aside (lambdaidem outbox help)

Run 'lambdaidem <command> -h' for a command's flags.
Exit status: 0 ok, 1 failure, 2 usage, 3 no such table, 4 malformed key,
5 no such record, 6 record changed meanwhile, 7 record not settleable, 8 not confirmed,
9 the record is sealed and no --kms-key was given, 10 the record's owner may still be
running (resolve and forget refuse until the time the message gives; --force overrides).
`

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, s streams, e env) int {
	if len(args) == 0 {
		fmt.Fprint(s.err, usage)
		return exitUsage
	}
	commands := map[string]func(context.Context, []string, streams, env) error{
		"key": keyCmd, "show": showCmd, "list": listCmd, "resolve": resolveCmd, "forget": forgetCmd, "outbox": outboxCmd,
	}
	cmd, ok := commands[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprint(s.out, usage)
			return exitOK
		}
		fmt.Fprintf(s.err, "lambdaidem: unknown command %q\n%s", args[0], usage)
		return exitUsage
	}
	err := cmd(ctx, args[1:], s, e)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(s.err, "lambdaidem %s: %v\n", args[0], err)
	return exitCode(err)
}

func exitCode(err error) int {
	var u *usageError
	switch {
	case errors.As(err, &u):
		return exitUsage
	case errors.Is(err, dynamostore.ErrTableNotFound):
		return exitNoTable
	case errors.Is(err, dynamostore.ErrMalformedKey):
		return exitMalformedKey
	case errors.Is(err, dynamostore.ErrRecordNotFound), errors.Is(err, errNoAside):
		return exitNoRecord
	case errors.Is(err, dynamostore.ErrRecordChanged), errors.Is(err, errAsideChanged):
		return exitChanged
	case errors.Is(err, dynamostore.ErrNotSettleable):
		return exitNotSettle
	case errors.Is(err, errNotConfirmed):
		return exitNotConfirmed
	case errors.Is(err, dynamostore.ErrSealed):
		return exitSealed
	case errors.Is(err, dynamostore.ErrHeld):
		return exitHeld
	}
	return exitFailure
}

// tableFlags are the flags of every command that reads the table.
type tableFlags struct {
	table, endpoint, region            string
	keyAttr, sortKeyAttr, sortKeyValue string
	kmsKey, kmsContext, kmsPrevious    string
	maxRunTime                         time.Duration
}

func (t *tableFlags) register(fs *flag.FlagSet, e env) {
	fs.StringVar(&t.table, "table", e.getenv("IDEMPOTENCY_TABLE"), "the idempotency table (default $IDEMPOTENCY_TABLE)")
	fs.StringVar(&t.endpoint, "endpoint", e.getenv("AWS_ENDPOINT_URL_DYNAMODB"), "DynamoDB endpoint URL (default $AWS_ENDPOINT_URL_DYNAMODB, else AWS's)")
	fs.StringVar(&t.region, "region", "", "AWS Region (default: from the AWS configuration)")
	fs.StringVar(&t.keyAttr, "key-attr", "", "partition key attribute, as the functions' store has it (default id)")
	fs.StringVar(&t.sortKeyAttr, "sort-key-attr", "", "sort key attribute, for a table with one")
	fs.StringVar(&t.sortKeyValue, "sort-key-value", "", "the records' static sort key value")
	fs.DurationVar(&t.maxRunTime, "max-run-time", 30*time.Minute, "the functions' Options.MaxRunTime: how long the owner of a record written without a hold (by a version before hold_until) may run after its last renewal or lease end")
	fs.StringVar(&t.kmsKey, "kms-key", cmp.Or(e.getenv("LAMBDAIDEM_KMS_KEY"), e.getenv(kmsseal.EnvKey)), "the KMS key the functions seal outcomes under (id, ARN or alias; default $LAMBDAIDEM_KMS_KEY, else $IDEMPOTENCY_SEAL_KEY): show --reveal opens outcomes with it, resolve --done seals the outcome; needs kms:DescribeKey, kms:GenerateDataKey, kms:Decrypt")
	fs.StringVar(&t.kmsContext, "kms-context", e.getenv("IDEMPOTENCY_SEAL_CONTEXT"), "with --kms-key: the functions' encryption context as a JSON object of strings (seal.Options.EncryptionContext; default $IDEMPOTENCY_SEAL_CONTEXT, as lambdaidemcdk.BindSealing sets it, else the Sealer's default)")
	fs.StringVar(&t.kmsPrevious, "kms-previous-keys", e.getenv("IDEMPOTENCY_SEAL_PREVIOUS_KEYS"), "with --kms-key: comma-separated keys outcomes may still be sealed under after a manual rotation (kmsseal.Options.PreviousKeys; default $IDEMPOTENCY_SEAL_PREVIOUS_KEYS)")
}

// sealing reads the --kms-* flags as the functions read the variables
// they default to (kmsseal.ReadEnv), so that the command seals and opens
// as the functions do.
func (t *tableFlags) sealing() (kmsseal.Env, error) {
	flags := map[string]string{kmsseal.EnvKey: t.kmsKey, kmsseal.EnvContext: t.kmsContext, kmsseal.EnvPreviousKeys: t.kmsPrevious}
	s, err := kmsseal.ReadEnv(func(k string) string { return flags[k] })
	if err != nil {
		return s, usagef("--kms-key, --kms-context, --kms-previous-keys (read as their variables): %v", err)
	}
	return s, nil
}

// open builds the client and the Records view, and checks the table.
func (t *tableFlags) open(ctx context.Context, e env) (*dynamostore.Records, error) {
	if t.table == "" {
		return nil, usagef("no table: pass --table or set IDEMPOTENCY_TABLE")
	}
	client, err := e.client(ctx, t.endpoint, t.region)
	if err != nil {
		return nil, err
	}
	var sealer *seal.Sealer
	if t.kmsKey != "" {
		sealing, err := t.sealing()
		if err != nil {
			return nil, err
		}
		keys, err := e.keys(ctx, t.region, sealing.Key, sealing.PreviousKeys)
		if err != nil {
			return nil, fmt.Errorf("--kms-key %s: %w", t.kmsKey, err)
		}
		if sealer, err = seal.New(keys, func(o *seal.Options) {
			if sealing.EncryptionContext != nil {
				o.EncryptionContext = sealing.EncryptionContext
			}
		}); err != nil {
			return nil, err
		}
	}
	r, err := dynamostore.NewRecords(client, t.table, func(o *dynamostore.Options) {
		o.KeyAttr, o.SortKeyAttr, o.SortKeyValue = t.keyAttr, t.sortKeyAttr, t.sortKeyValue
		o.MaxRunTime = t.maxRunTime
		if sealer != nil {
			o.Sealer = sealer
		}
	})
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := r.Check(ctx); err != nil {
		if errors.Is(err, dynamostore.ErrTableNotFound) {
			where := "the configured Region"
			if t.endpoint != "" {
				where = t.endpoint
			}
			if t.region != "" {
				where = "Region " + t.region
			}
			return nil, fmt.Errorf("%w: no table %q at %s (check --table, --region, --endpoint)", dynamostore.ErrTableNotFound, t.table, where)
		}
		return nil, err
	}
	return r, nil
}

// parse parses fs and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, positional string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	rest := fs.Args()
	// Flags may also follow the positional argument.
	if len(rest) > 1 && strings.HasPrefix(rest[1], "-") {
		if err := fs.Parse(rest[1:]); err != nil {
			return nil, usagef("%v", err)
		}
		rest = append(rest[:1:1], fs.Args()...)
	}
	switch {
	case positional == "" && len(rest) > 0:
		return nil, usagef("unexpected argument %q", rest[0])
	case positional != "" && len(rest) != 1:
		return nil, usagef("want exactly one %s, got %d arguments", positional, len(rest))
	}
	return rest, nil
}

func newFlagSet(name string, s streams, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: lambdaidem %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}
