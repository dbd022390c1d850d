package dynamostore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The environment variables that describe a function's idempotency table:
// the ones the CDK construct's Table.Bind sets on a function and
// Table.Environment returns for other compute (module
// github.com/lambdaidem/lambdaidem/cdk, package lambdaidemcdk, whose Env*
// constants have the same names), and Outbox.GrantStage's outbox table.
// [ReadEnv] reads them, and lambdaidem.TenantsEnv, which Table.Bind sets on
// a function in tenant isolation mode. (The sealing variables, which
// BindSealing sets, are kmsseal.ReadEnv's.)
const (
	// EnvTable holds the table's name (required).
	EnvTable = "IDEMPOTENCY_TABLE"
	// EnvTTL holds the retry horizon as a Go duration ("48h0m0s"); unset, 24h.
	EnvTTL = "IDEMPOTENCY_TTL"
	// EnvKeyAttr holds the partition key attribute (Options.KeyAttr).
	EnvKeyAttr = "IDEMPOTENCY_KEY_ATTR"
	// EnvSortKeyAttr holds the sort key attribute (Options.SortKeyAttr), for
	// a table with one; set together with EnvSortKeyValue.
	EnvSortKeyAttr = "IDEMPOTENCY_SORT_KEY_ATTR"
	// EnvSortKeyValue holds the static sort key value (Options.SortKeyValue).
	EnvSortKeyValue = "IDEMPOTENCY_SORT_KEY_VALUE"
	// EnvExpirationAttr holds the TTL attribute (Options.ExpirationAttr).
	EnvExpirationAttr = "IDEMPOTENCY_EXPIRATION_ATTR"
	// EnvOutboxTable holds the outbox table's name (Options.OutboxTable),
	// set by the construct's Outbox.GrantStage.
	EnvOutboxTable = "OUTBOX_TABLE"
)

// DefaultEnvRetryHorizon is [Env.RetryHorizon] when EnvTTL is not set: the
// Guard's own default (lambdaidem.Options.RetryHorizon).
const DefaultEnvRetryHorizon = 24 * time.Hour

// ErrEnvironment matches every error of [ReadEnv].
var ErrEnvironment = errors.New("dynamostore: idempotency environment")

// Env is what a function's environment says about its idempotency table:
// its name, the store's attribute options and the Guard's retry horizon.
// Pass [Env.StoreOptions] to [New] and [Env.GuardOptions] to lambdaidem.New.
type Env struct {
	// Table is the table's name (EnvTable).
	Table string
	// RetryHorizon is how long a completed key is remembered (EnvTTL,
	// default DefaultEnvRetryHorizon).
	RetryHorizon time.Duration
	// KeyAttr, SortKeyAttr, SortKeyValue and ExpirationAttr are the store's
	// options of the same names; "" keeps the store's default.
	KeyAttr, SortKeyAttr, SortKeyValue, ExpirationAttr string
	// OutboxTable is the outbox table's name (EnvOutboxTable), for the
	// store's option of the same name; "" for none.
	OutboxTable string
	// Tenants says the function declares Lambda tenants
	// (lambdaidem.TenantsEnv): every lambdaidem.Guard of the process reads
	// the same variable through its Options.Getenv and refuses invocations
	// without a tenant. ReadEnv reads it to refuse a bad value early.
	Tenants bool
}

// ReadEnv reads the idempotency table's settings through getenv (os.Getenv
// in a function: the library itself reads no environment), reporting every
// missing or invalid variable at once, by name, in an error matching
// [ErrEnvironment]. A variable set to blanks is a bad value, not unset: a
// deployment that meant to set it gets an error, not the default.
func ReadEnv(getenv func(string) string) (Env, error) {
	e := Env{
		Table:          getenv(EnvTable),
		RetryHorizon:   DefaultEnvRetryHorizon,
		KeyAttr:        getenv(EnvKeyAttr),
		SortKeyAttr:    getenv(EnvSortKeyAttr),
		SortKeyValue:   getenv(EnvSortKeyValue),
		ExpirationAttr: getenv(EnvExpirationAttr),
		OutboxTable:    getenv(EnvOutboxTable),
	}
	var errs []error
	if e.Table == "" {
		errs = append(errs, fmt.Errorf("%s is not set (the idempotency table's name)", EnvTable))
	}
	for _, v := range []struct{ name, value string }{
		{EnvTable, e.Table}, {EnvKeyAttr, e.KeyAttr}, {EnvSortKeyAttr, e.SortKeyAttr},
		{EnvSortKeyValue, e.SortKeyValue}, {EnvExpirationAttr, e.ExpirationAttr}, {EnvOutboxTable, e.OutboxTable},
	} {
		if v.value != "" && strings.TrimSpace(v.value) != v.value {
			errs = append(errs, fmt.Errorf("%s=%q has leading or trailing blanks", v.name, v.value))
		}
	}
	if (e.SortKeyAttr == "") != (e.SortKeyValue == "") {
		errs = append(errs, fmt.Errorf("%s and %s are set together or not at all (got %q and %q)",
			EnvSortKeyAttr, EnvSortKeyValue, e.SortKeyAttr, e.SortKeyValue))
	}
	if v := getenv(EnvTTL); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s=%q is not a Go duration such as 24h or 96h", EnvTTL, v))
		case d < time.Second:
			errs = append(errs, fmt.Errorf("%s=%q must be at least one second", EnvTTL, v))
		default:
			e.RetryHorizon = d
		}
	}
	tenants, err := lambdaidem.TenantsDeclared(getenv)
	if err != nil {
		errs = append(errs, err)
	}
	e.Tenants = tenants
	if len(errs) > 0 {
		return e, fmt.Errorf("%w: %w", ErrEnvironment, errors.Join(errs...))
	}
	return e, nil
}

// StoreOptions sets e's attribute names on o, keeping the store's defaults
// for those e leaves empty: an option for [New].
func (e Env) StoreOptions(o *Options) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&o.KeyAttr, e.KeyAttr)
	set(&o.SortKeyAttr, e.SortKeyAttr)
	set(&o.SortKeyValue, e.SortKeyValue)
	set(&o.ExpirationAttr, e.ExpirationAttr)
	set(&o.OutboxTable, e.OutboxTable)
}

// GuardOptions sets e's retry horizon on o (unless zero): an option for
// lambdaidem.New.
func (e Env) GuardOptions(o *lambdaidem.Options) {
	if e.RetryHorizon != 0 {
		o.RetryHorizon = e.RetryHorizon
	}
}
