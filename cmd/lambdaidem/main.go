// Command lambdaidem inspects and settles lambdaidem's idempotency records
// in DynamoDB: an operator's tool for the records that need a person,
// above all those left UNKNOWN after an uncertain external effect.
//
//	lambdaidem key     --operation CreatePayment [--namespace N] [--tenant T] [--scope S | --principal P --route R] CLIENT-KEY
//	lambdaidem show    [--reveal] [--json] RECORD-KEY
//	lambdaidem list    [--status S,...] [--stuck] [--older-than D] [--all] [--tenant T] [--segments N] [--limit N] [--json]
//	lambdaidem resolve (--done (--outcome JSON | --outcome-file F | --error-type T --error-message M) | --not-done) [--revision R] [--retain D] RECORD-KEY
//	lambdaidem forget  [--yes] [--revision R] RECORD-KEY
//
// Every command but key takes --table (default $IDEMPOTENCY_TABLE),
// --endpoint (default $AWS_ENDPOINT_URL_DYNAMODB), --region, and the
// attribute options of the functions' store (--key-attr, --sort-key-attr,
// --sort-key-value), and --kms-key (default $LAMBDAIDEM_KMS_KEY, else
// $IDEMPOTENCY_SEAL_KEY): the KMS
// key a sealed table's functions seal under, with which show --reveal
// opens outcomes and resolve --done seals the one it stores; on a sealed
// record without it they refuse (exit 9) and write nothing; --kms-context
// and --kms-previous-keys (default $IDEMPOTENCY_SEAL_CONTEXT and
// $IDEMPOTENCY_SEAL_PREVIOUS_KEYS) give the functions' encryption context
// and previous keys. Credentials
// and Region come from the usual AWS configuration (environment, shared
// files, SSO, instance roles).
//
// Exit status: 0 done; 1 an AWS or other failure; 2 a usage error; 3 the
// table does not exist; 4 a malformed record key; 5 no such record; 6 the
// record changed since it was read (nothing written); 7 the record is not
// in a state the command settles; 8 not confirmed (nothing deleted); 9
// the record is sealed and no --kms-key was given.
//
// Install it with go install github.com/lambdaidem/lambdaidem/cmd/lambdaidem@<version>;
// it is a module of its own, so the library's go.mod does not grow.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}, system())
	stop()
	os.Exit(code)
}
