// The Powertools peer of the lambdaidem benchmarks.
//
// A Lambda-shaped handler made idempotent by Powertools for AWS Lambda
// (TypeScript) `makeIdempotent`, with its DynamoDBPersistenceLayer, writing
// one business item with a plain PutItem inside the handler. It is served on
// a loopback HTTP port so that the Go driver (bench/cmd/bench) can run the
// same phases against it as against lambdaidem. Latency is measured here,
// around the handler call, so the driver-to-Node hop is not counted.
//
// Environment (set by the driver):
//   AWS_ENDPOINT_URL_DYNAMODB  the benchmark's DynamoDB endpoint (loopback)
//   AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  fake values
//   BENCH_IDEMPOTENCY_TABLE    Powertools' table (partition key `id`)
//   BENCH_BUSINESS_TABLE       the business table (partition key `pk`)
// Both are used in shards: an event's `shard` n picks the tables named
// `<name>-<n, three digits>`, as on the Go side (bench/cmd/bench).
//
// Routes (POST, JSON):
//   /invoke   {"event": {...}}  -> {"ns": <handler latency>, "result"|"error"}
//   /baseline {"key", "shard"}  -> {"ns": <one plain GetItem>}
//   /burst    {"event": {...}, "n": N}
//             -> {"results": [{"ns", "error"?}, ...]}: N invocations of the
//                same event started together in this process
//   /ran      {"id": "..."}     -> {"ran": <times the handler body ran for id>}
// On start it prints one line {"port": N} to stdout.

import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';

const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
const idempotencyTable = process.env.BENCH_IDEMPOTENCY_TABLE;
const businessTable = process.env.BENCH_BUSINESS_TABLE;
if (!endpoint || !idempotencyTable || !businessTable) {
  console.error('server.mjs: AWS_ENDPOINT_URL_DYNAMODB, BENCH_IDEMPOTENCY_TABLE and BENCH_BUSINESS_TABLE are required');
  process.exit(2);
}

// One client, built once, with explicit options; shared by the persistence
// layer and the handler, as a Lambda function would.
const client = new DynamoDBClient({
  endpoint,
  region: process.env.AWS_REGION ?? 'us-east-1',
  credentials: {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'bench',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'bench',
  },
});

const shardTable = (name, shard) => `${name}-${String(shard).padStart(3, '0')}`;

const ran = new Map();

// The business handler: one PutItem of the business item, after an optional
// pause standing for the handler's own work.
const businessHandler = async (event, _context) => {
  ran.set(event.id, (ran.get(event.id) ?? 0) + 1);
  if (event.sleepMs > 0) {
    await sleep(event.sleepMs);
  }
  await client.send(
    new PutItemCommand({
      TableName: shardTable(businessTable, event.shard),
      Item: {
        pk: { S: `payment#${event.id}` },
        amount: { N: String(event.amount) },
        currency: { S: event.currency },
        ...(event.memo ? { memo: { S: event.memo } } : {}),
      },
    }),
  );
  // lines (set by the capacity part) size the stored outcome; memo sizes the
  // business item, as on the Go side.
  return { id: event.id, status: 'captured', amount: event.amount, ...(event.lines ? { lines: event.lines } : {}) };
};

// One idempotent handler per shard, each with its persistence layer on
// that shard's table, built on first use.
const handlers = new Map();
const handlerFor = (shard) => {
  let h = handlers.get(shard);
  if (!h) {
    h = makeIdempotent(businessHandler, {
      persistenceStore: new DynamoDBPersistenceLayer({
        tableName: shardTable(idempotencyTable, shard),
        awsSdkV3Client: client,
      }),
      config: new IdempotencyConfig({ eventKeyJmesPath: 'id' }),
    });
    handlers.set(shard, h);
  }
  return h;
};

// A Lambda context: makeIdempotent reads the remaining time from it to set
// the in-progress expiry, as it does in Lambda.
const lambdaContext = (deadline) => ({
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench',
  awsRequestId: 'bench',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
});

const invokeOnce = async (event) => {
  const start = process.hrtime.bigint();
  try {
    const result = await handlerFor(event.shard)(event, lambdaContext(Date.now() + 30_000));
    return { ns: Number(process.hrtime.bigint() - start), result };
  } catch (err) {
    return { ns: Number(process.hrtime.bigint() - start), error: `${err.name}: ${err.message}` };
  }
};

const routes = {
  invoke: (body) => invokeOnce(body.event),
  async burst(body) {
    const n = Math.min(Math.max(1, body.n | 0), 1000);
    return { results: await Promise.all(Array.from({ length: n }, () => invokeOnce(body.event))) };
  },
  async baseline(body) {
    const start = process.hrtime.bigint();
    await client.send(new GetItemCommand({ TableName: shardTable(businessTable, body.shard), Key: { pk: { S: body.key } } }));
    return { ns: Number(process.hrtime.bigint() - start) };
  },
  async ran(body) {
    return { ran: ran.get(body.id) ?? 0 };
  },
};

const server = createServer(async (req, res) => {
  const route = routes[req.url.slice(1)];
  if (req.method !== 'POST' || !route) {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const out = await route(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
