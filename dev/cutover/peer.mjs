// The old version of the function in the cutover tests (cutover_test.go):
// Powertools for AWS Lambda (TypeScript) idempotency, the version
// dev/bench/powertools pins, behind a loopback HTTP server so that the Go
// test can invoke it beside the lambdaidem version on one table.
//
// The handler is made idempotent by makeIdempotent with a
// DynamoDBPersistenceLayer, event_key_jmespath "id" and payload validation on
// "amount". It writes one business item, effect#<id>#<random run>, with a
// plain PutItem (as a handler under Powertools does) and returns {key, run}.
// An invocation with hang set stops after the business write and never
// returns: an instance that died (Lambda's timeout) between its effect and
// Powertools saving the result, which leaves the record INPROGRESS until the
// remaining time the context gave (timeoutMs).
//
// Environment (set by the Go side):
//   CUTOVER_POWERTOOLS_DIR     a folder whose node_modules hold the packages (dev/bench/powertools)
//   CUTOVER_ENDPOINT           the DynamoDB endpoint (loopback)
//   CUTOVER_TABLE              the idempotency table (partition key id)
//   CUTOVER_BUSINESS_TABLE     the business table (partition key id)
//   AWS_LAMBDA_FUNCTION_NAME   the function's name: Powertools' key prefix
//
// POST /invoke {"event": {"id", "amount", "call", "hang"?}, "timeoutMs"}
//   -> {"result": {...}} | {"error": "Name: message"} | {"hung": true, "run"}
// On start it prints one line {"port": N}.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

const env = process.env;
const require = createRequire(path.join(env.CUTOVER_POWERTOOLS_DIR, 'package.json'));
const { DynamoDBClient, PutItemCommand } = require('@aws-sdk/client-dynamodb');
const { IdempotencyConfig, makeIdempotent } = require('@aws-lambda-powertools/idempotency');
const { DynamoDBPersistenceLayer } = require('@aws-lambda-powertools/idempotency/dynamodb');

const client = new DynamoDBClient({
  endpoint: env.CUTOVER_ENDPOINT,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  maxAttempts: 1,
});

// hangs holds, per invocation (event.call), the callback a hanging handler
// calls once its business write is done.
const hangs = new Map();

const handler = makeIdempotent(
  async (event) => {
    const run = randomUUID();
    await client.send(new PutItemCommand({
      TableName: env.CUTOVER_BUSINESS_TABLE,
      Item: { id: { S: `effect#${event.id}#${run}` }, key: { S: event.id }, run: { S: run }, by: { S: 'powertools' } },
    }));
    if (event.hang) {
      hangs.get(event.call)?.(run);
      await new Promise(() => {}); // the instance is gone
    }
    return { key: event.id, run };
  },
  {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName: env.CUTOVER_TABLE, awsSdkV3Client: client }),
    config: new IdempotencyConfig({ eventKeyJmesPath: 'id', payloadValidationJmesPath: 'amount' }),
  },
);

const invoke = async ({ event, timeoutMs }) => {
  const deadline = Date.now() + (timeoutMs || 30_000);
  const context = {
    functionName: env.AWS_LAMBDA_FUNCTION_NAME,
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  const hung = new Promise((resolve) => hangs.set(event.call, (run) => resolve({ hung: true, run })));
  const done = handler(event, context).then(
    (result) => ({ result }),
    (err) => ({ error: `${err.name}: ${err.message}` }),
  );
  try {
    return await Promise.race([hung, done]);
  } finally {
    hangs.delete(event.call);
  }
};

const server = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/invoke') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const out = await invoke(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
