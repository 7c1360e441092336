// node-postgres against `heapstore serve` (run by .ci/drivers.sh with PGHOST/PGPORT/PGUSER/
// PGDATABASE set): Buffers as binary parameters, prepared statements, transactions, errors.
const { Client } = require('pg');

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL: ${what}`);
    process.exit(1);
  }
}

(async () => {
  const c = new Client();
  await c.connect();
  await c.query('DROP TABLE IF EXISTS np');
  await c.query('CREATE TABLE np (id integer PRIMARY KEY, b bytea, t text, n bigint)');
  // A Buffer travels as a binary parameter with type OID 0: it must be stored as its bytes.
  const buf = Buffer.from('\\x4142 a\\\\b', 'latin1');
  await c.query('INSERT INTO np VALUES ($1, $2, $3, $4)', [1, buf, 'a\\b', '10000000000']);
  let r = await c.query('SELECT b, t, n FROM np WHERE id = $1', [1]);
  check(Buffer.compare(r.rows[0].b, buf) === 0, `bytea round trip: ${r.rows[0].b.toString('latin1')}`);
  check(r.rows[0].t === 'a\\b', 'text round trip');
  check(r.rows[0].n === '10000000000', 'bigint round trip');
  // Named prepared statements reused.
  for (let i = 2; i < 12; i++) {
    await c.query({ name: 'ins', text: 'INSERT INTO np (id, t) VALUES ($1, $2)', values: [i, null] });
  }
  r = await c.query({ name: 'cnt', text: 'SELECT count(*) FROM np WHERE t IS NULL' });
  check(r.rows[0].count === '10', `count ${r.rows[0].count}`);
  // Transactions.
  await c.query('BEGIN');
  await c.query('INSERT INTO np (id) VALUES (100)');
  await c.query('ROLLBACK');
  r = await c.query('SELECT count(*) FROM np WHERE id = 100');
  check(r.rows[0].count === '0', 'rollback');
  // 23505 with constraint and detail; the connection stays usable.
  try {
    await c.query('INSERT INTO np (id) VALUES ($1)', [1]);
    check(false, 'duplicate accepted');
  } catch (e) {
    check(e.code === '23505' && e.constraint === 'np_pkey' && e.detail === 'Key (id)=(1) already exists.', `error ${e.code} ${e.constraint} ${e.detail}`);
  }
  r = await c.query('SELECT 1 AS one');
  check(r.rows[0].one === 1, 'usable after error');
  await c.query('DROP TABLE np');
  await c.end();
  console.log('   node-postgres passed');
})().catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
