// Test vectors for lambdaidem/powertools, computed by the real Powertools for
// AWS Lambda (TypeScript) package: the version dev/bench/powertools pins
// (2.35.0). Each case runs makeIdempotent with a DynamoDBPersistenceLayer
// whose client answers in process (a middleware records each command's
// input and returns an empty success), so the key, validation hash and
// stored data are the ones Powertools would send to DynamoDB.
//
// Usage: node dev/powertools/vectors.mjs < cases.json > typescript.json
// (make powertools-vectors runs it after npm ci in dev/bench/powertools).

import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const here = path.dirname(fileURLToPath(import.meta.url));
// POWERTOOLS_DIR: a folder whose node_modules hold the pinned packages.
const dir = process.env.POWERTOOLS_DIR ?? path.join(here, '..', 'bench', 'powertools');
const require = createRequire(path.join(dir, 'package.json'));
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { unmarshall } = require('@aws-sdk/util-dynamodb');
const { IdempotencyConfig, makeIdempotent } = require('@aws-lambda-powertools/idempotency');
const { DynamoDBPersistenceLayer } = require('@aws-lambda-powertools/idempotency/dynamodb');
const version = JSON.parse(readFileSync(path.join(dir, 'node_modules', '@aws-lambda-powertools', 'idempotency', 'package.json'), 'utf8')).version;

const cases = JSON.parse(readFileSync(0, 'utf8'));

// A client that sends nothing: it records the commands and answers each
// with an empty success.
const recordingClient = (sent) => {
  const client = new DynamoDBClient({
    endpoint: 'http://127.0.0.1:9',
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      sent.push({ command: context.commandName, input: args.input });
      return { output: { $metadata: {} }, response: {} };
    },
    { step: 'initialize', name: 'recordOnly' },
  );
  return client;
};

const context = {
  functionName: 'vectors',
  awsRequestId: 'vectors',
  getRemainingTimeInMillis: () => 30_000,
};

// run invokes a fresh idempotent handler once and returns what it sent.
const run = async ({ functionName, keyPrefix, hashFunction, event, result }) => {
  if (functionName === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  else process.env.AWS_LAMBDA_FUNCTION_NAME = functionName;
  const sent = [];
  let ran = false;
  const handler = makeIdempotent(
    async () => {
      ran = true;
      return result;
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: 't', awsSdkV3Client: recordingClient(sent) }),
      config: new IdempotencyConfig({
        eventKeyJmesPath: 'sel',
        payloadValidationJmesPath: 'sel',
        ...(hashFunction ? { hashFunction } : {}),
      }),
      ...(keyPrefix ? { keyPrefix } : {}),
    },
  );
  let error;
  try {
    await handler(event, context);
  } catch (err) {
    error = `${err.name}: ${err.message}`;
  }
  return { sent, ran, error };
};

const keys = [];
for (const c of cases.keys) {
  const event = JSON.parse(`{"sel": ${c.selection}}`);
  const { sent, ran } = await run({
    functionName: c.function_name,
    keyPrefix: c.key_prefix,
    hashFunction: c.hash_function,
    event,
    result: { ok: true },
  });
  const put = sent.find((s) => s.command === 'PutItemCommand');
  const out = { name: c.name };
  if (!put) {
    out.missing = true;
    out.ran = ran;
  } else {
    out.key = put.input.Item.id.S;
    out.validation = put.input.Item.validation?.S ?? '';
  }
  keys.push(out);
}

const outcomes = [];
for (const c of cases.outcomes) {
  const { sent, error } = await run({
    functionName: 'vectors',
    event: { sel: 'order-1' },
    result: JSON.parse(c.outcome),
  });
  const update = sent.find((s) => s.command === 'UpdateItemCommand');
  const out = { name: c.name };
  const data = update?.input.ExpressionAttributeValues[':response_data'];
  if (error || !data) {
    out.refused = error ?? 'no data';
  } else {
    out.data = data;
    // What a replay returns: _getRecord unmarshalls the item.
    out.replay = JSON.stringify(unmarshall({ data }).data);
  }
  outcomes.push(out);
}

process.stdout.write(`${JSON.stringify({ generator: 'dev/powertools/vectors.mjs', powertools: version, keys, outcomes }, null, 1)}\n`);
