// One Lambda invocation of a handler made idempotent by Powertools for AWS
// Lambda (TypeScript), for the chaos harness's crash-after-business-write
// comparison (see ../crash.go). It runs in its own process, as a Lambda
// instance does, so that a crash is a real process exit.
//
// The handler writes one business item, effect#<key>#<random run id>, with
// a plain PutItem, as a handler under Powertools does; then, if
// CHAOS_CRASH=after-business-write, the process exits before Powertools
// saves the result. Otherwise it returns {key, run}.
//
// Environment (set by the Go side):
//   CHAOS_POWERTOOLS_DIR  the folder whose node_modules hold Powertools (bench/powertools)
//   CHAOS_ENDPOINT        the DynamoDB endpoint (loopback)
//   CHAOS_IDEMPOTENCY_TABLE, CHAOS_BUSINESS_TABLE  tables, partition key `id`
//   CHAOS_KEY             the idempotency key (the event's `id`)
//   CHAOS_TIMEOUT_MS      the invocation's remaining time, which sets the lease
//   CHAOS_CRASH           "after-business-write" or empty
// It prints one JSON line: {"result": {...}} or {"error": "..."}.

import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

const env = process.env;
const require = createRequire(path.join(env.CHAOS_POWERTOOLS_DIR, 'package.json'));
const { DynamoDBClient, PutItemCommand } = require('@aws-sdk/client-dynamodb');
const { IdempotencyConfig, makeIdempotent } = require('@aws-lambda-powertools/idempotency');
const { DynamoDBPersistenceLayer } = require('@aws-lambda-powertools/idempotency/dynamodb');

const client = new DynamoDBClient({
  endpoint: env.CHAOS_ENDPOINT,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});

const handler = makeIdempotent(
  async (event) => {
    const run = randomUUID();
    await client.send(new PutItemCommand({
      TableName: env.CHAOS_BUSINESS_TABLE,
      Item: { id: { S: `effect#${event.id}#${run}` }, key: { S: event.id }, run: { S: run } },
    }));
    if (env.CHAOS_CRASH === 'after-business-write') {
      process.exit(137); // the instance dies before Powertools saves the result
    }
    return { key: event.id, run };
  },
  {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName: env.CHAOS_IDEMPOTENCY_TABLE, awsSdkV3Client: client }),
    config: new IdempotencyConfig({ eventKeyJmesPath: 'id' }),
  },
);

const deadline = Date.now() + Number(env.CHAOS_TIMEOUT_MS || 1000);
const context = {
  functionName: 'chaos',
  awsRequestId: randomUUID(),
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};
try {
  const result = await handler({ id: env.CHAOS_KEY }, context);
  process.stdout.write(`${JSON.stringify({ result })}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: `${err.name}: ${err.message}` })}\n`);
}
