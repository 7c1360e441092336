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
  // Arrays: JS arrays as text parameters (every element quoted), NULL elements, nested arrays,
  // = ANY($1); int4[] / text[] results parsed back, in text and binary result format.
  await c.query('DROP TABLE IF EXISTS np_arr');
  await c.query('CREATE TABLE np_arr (id integer PRIMARY KEY, ints integer[], tags text[], grid integer[])');
  await c.query('INSERT INTO np_arr VALUES ($1, $2, $3, $4)', [1, [1, null, -3], ['a b', '', null, 'q"z', 'NULL'], [[1, 2], [3, 4]]]);
  await c.query('INSERT INTO np_arr VALUES ($1, $2, $3, $4)', [2, [], [], null]);
  r = await c.query('SELECT ints, tags, grid FROM np_arr ORDER BY id');
  check(JSON.stringify(r.rows[0]) === JSON.stringify({ ints: [1, null, -3], tags: ['a b', '', null, 'q"z', 'NULL'], grid: [[1, 2], [3, 4]] }),
    `arrays ${JSON.stringify(r.rows[0])}`);
  check(JSON.stringify(r.rows[1]) === JSON.stringify({ ints: [], tags: [], grid: null }), `empty arrays ${JSON.stringify(r.rows[1])}`);
  r = await c.query('SELECT id FROM np_arr WHERE id = ANY($1) ORDER BY id', [[2, 1, 7]]);
  check(r.rows.map((x) => x.id).join(',') === '1,2', `= ANY($1) ${JSON.stringify(r.rows)}`);
  r = await c.query({ text: 'SELECT ints, tags FROM np_arr WHERE id = 1', binary: true });
  check(r.rows[0].ints !== null && r.rows[0].tags !== null, 'binary array results');
  await c.query('DROP TABLE np_arr');
  // uuid: strings in, canonical lowercase strings out (text and binary results), a DEFAULT
  // gen_random_uuid() key returned by RETURNING, and the input error.
  await c.query('DROP TABLE IF EXISTS np_uuid');
  await c.query('CREATE TABLE np_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ref uuid)');
  await c.query('INSERT INTO np_uuid VALUES ($1, $2)', ['{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}', null]);
  r = await c.query('INSERT INTO np_uuid (ref) VALUES ($1) RETURNING id', ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']);
  check(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(r.rows[0].id), `gen_random_uuid() ${r.rows[0].id}`);
  r = await c.query('SELECT id, ref FROM np_uuid WHERE id = $1', ['a0eebc999c0b4ef8bb6d6bb9bd380a11']);
  check(r.rows.length === 1 && r.rows[0].id === 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' && r.rows[0].ref === null, `uuid ${JSON.stringify(r.rows)}`);
  r = await c.query({ text: 'SELECT count(*)::int AS n FROM np_uuid WHERE ref = $1', values: ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'], binary: true });
  check(r.rows[0].n === 1, `uuid parameter, binary result ${JSON.stringify(r.rows)}`);
  try {
    await c.query('INSERT INTO np_uuid VALUES ($1)', ['nope']);
    check(false, 'bad uuid accepted');
  } catch (e) {
    check(e.code === '22P02' && e.message === 'invalid input syntax for type uuid: "nope"', `uuid error ${e.code} ${e.message}`);
  }
  await c.query('DROP TABLE np_uuid');
  // interval: parsed by node-postgres into its interval object; strings as parameters.
  r = await c.query("SELECT interval '1 year 2 mons 3 days 04:05:06.5' AS d, $1::interval * 2 AS e, timestamp '2020-03-01' - timestamp '2020-01-01' AS f", ['-1 day +02:00']);
  check(r.rows[0].d.years === 1 && r.rows[0].d.months === 2 && r.rows[0].d.days === 3 && r.rows[0].d.hours === 4 && r.rows[0].d.milliseconds === 500,
    `interval ${JSON.stringify(r.rows[0].d)}`);
  check(r.rows[0].e.days === -2 && r.rows[0].e.hours === 4 && r.rows[0].f.days === 60, `interval arithmetic ${JSON.stringify(r.rows[0])}`);
  // jsonb: node-postgres parses json and jsonb results into objects; a parameter is a string.
  await c.query('DROP TABLE IF EXISTS np_jsonb');
  await c.query('CREATE TABLE np_jsonb (id int PRIMARY KEY, doc jsonb)');
  await c.query('INSERT INTO np_jsonb VALUES (1, $1), (2, NULL)', [JSON.stringify({ b: [1, 'x'], a: null })]);
  r = await c.query("SELECT doc, doc -> 'b' AS b, doc ->> 'a' AS a FROM np_jsonb WHERE doc @> $1", ['{"b": ["x"]}']);
  check(r.rows.length === 1 && JSON.stringify(r.rows[0]) === '{"doc":{"a":null,"b":[1,"x"]},"b":[1,"x"],"a":null}', `jsonb ${JSON.stringify(r.rows)}`);
  r = await c.query({ text: "SELECT jsonb_agg(id ORDER BY id) AS ids FROM np_jsonb WHERE doc IS NULL OR doc ? 'a'", binary: false });
  check(JSON.stringify(r.rows[0].ids) === '[1,2]', `jsonb_agg ${JSON.stringify(r.rows)}`);
  await c.query('DROP TABLE np_jsonb');
  await c.end();
  console.log('   node-postgres passed');
})().catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
