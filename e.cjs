const Database = require('better-sqlite3');
const db = new Database('/work/wt/ucp/bench/.work/ucp/sqlite/agentshelf.sqlite', { readonly: true });
const q = `with hits as materialized (select rowid as hit_rowid, -rank as hit_score from product_search where product_search match '"0042" OR "lamps"' and rank match 'bm25(10.0, 1.0, 4.0, 2.0)' order by rank limit 10000) select brand, coalesce(json_extract(attributes, '$.item_group_id'), id) as group_key, max(hit_score) as score from hits join products on products.rowid = hits.hit_rowid where status='active' group by 1, 2 order by score desc, group_key limit 11`;
console.log(db.prepare('explain query plan ' + q).all().map(r => r.detail).join('\n'));
let t0 = performance.now(); for (let i = 0; i < 5; i++) db.prepare(q).all(); console.log('full', (performance.now() - t0) / 5);
const h = `select rowid as hit_rowid, -rank as hit_score from product_search where product_search match '"0042" OR "lamps"' and rank match 'bm25(10.0, 1.0, 4.0, 2.0)' order by rank limit 10000`;
t0 = performance.now(); for (let i = 0; i < 5; i++) db.prepare(h).all(); console.log('hits only', (performance.now() - t0) / 5, db.prepare(h).all().length);
const ids = `select id from products where status='active' and id in ('syn_00000001','syn_00000002')`;
console.log(db.prepare('explain query plan ' + ids).all().map(r => r.detail).join('\n'));
