// Package seal encrypts stored outcomes with envelope encryption: a
// [lambdaidem.Sealer] that encrypts each outcome with AES-256-GCM under a
// data key issued by a key service (AWS KMS's GenerateDataKey), binding the
// ciphertext to its record key as authenticated data. Anyone who can read
// the idempotency table sees ciphertext; replaying needs kms:Decrypt on
// the master key.
//
// The key service is a small interface, so that this package, like the
// rest of the library module, needs no KMS SDK: the kmsseal module adapts
// an aws-sdk-go-v2 KMS client to it.
//
//	keys, err := kmsseal.New(ctx, kms.NewFromConfig(cfg), os.Getenv("OUTCOME_KEY"))
//	sealer, err := seal.New(keys)
//	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
//
// # Keys and calls
//
// A data key encrypts new outcomes for Options.MaxKeyAge or
// Options.MaxKeyUses outcomes, whichever ends first, then a new one is
// generated: one GenerateDataKey call per key, not per outcome. Each sealed
// outcome carries its data key encrypted by the key service; opening it
// decrypts that key once (kms:Decrypt) and keeps it in a bounded cache, so
// replays of recent outcomes make no key-service call. Every data key is
// generated and decrypted under Options.EncryptionContext, which KMS
// records in CloudTrail and checks on Decrypt; the record key cannot be
// part of it, because one cached data key serves many records. Instead the
// record key is the AES-GCM additional authenticated data of each outcome:
// an outcome copied into another record does not open.
//
// A cached data key is used for opening no longer than
// Options.MaxCacheAge (default MaxKeyAge) after it was generated or
// decrypted, so that a revoked kms:Decrypt takes effect in a warm process.
// Sealing and opening run on the Guard's finish context, not the
// invocation's. Key service failures are [*lambdaidem.KeyServiceError]s; a
// stored outcome they keep closed is answered with
// lambdaidem.ErrKeyUnavailable or lambdaidem.ErrKeyRefused.
//
// # Fingerprints
//
// The Sealer also keys the stored request fingerprints
// ([Sealer.KeyFingerprint], see lambdaidem.FingerprintKeyer): the
// validation attribute holds HMAC-SHA256 of the record key and the
// fingerprint under a key derived from the current data key, with that
// data key, encrypted, in front. A reader of the table without kms:Decrypt
// cannot test a guess of the request against it, and equal requests under
// two keys store unrelated values; any process with kms:Decrypt opens the
// named data key (cached like an outcome's) and compares, so a retry across
// a rotation or processes replays. Unkeyed fingerprints stored by earlier
// versions are compared as they are.
//
// # Format
//
//	"LIS1" | uint16 length of the encrypted data key | encrypted data key | 12-byte nonce | AES-256-GCM ciphertext and tag
//
// The nonce is random: NIST SP 800-38D bounds one key to 2^32 random-nonce
// encryptions, far above the default MaxKeyUses; New refuses a MaxKeyUses
// above it.
//
// # Why not the AWS Encryption SDK
//
// The AWS Encryption SDK for Go (github.com/aws/aws-encryption-sdk, with
// the Material Providers Library) is the well-kept library for envelope
// encryption, and its message format is portable across languages. It was
// weighed and not used here: it has no data key caching (AWS Encryption
// SDK Developer Guide, "AWS Encryption SDK for Go"), so each sealed outcome
// would cost a GenerateDataKey and each replay a Decrypt — a KMS round trip
// on the path of every commit and replay, against KMS request quotas —
// unless a Hierarchical keyring is set up, which needs a key store table
// of its own and branch keys to manage. Its generated code is also a large
// dependency for the library module, whose go.mod requires only the
// Lambda runtime, the SDK's DynamoDB client and smithy-go. A team that
// needs that message format can implement lambdaidem.Sealer over it in a
// few lines: Seal is its Encrypt with the record key in the encryption
// context, Open its Decrypt.
package seal
