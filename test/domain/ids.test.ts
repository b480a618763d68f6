import t from 'tap';
import { newId, newSortableId } from '../../src/ids.js';

t.test(
  'newSortableId: the same shape as newId, sorted by time, unique within a millisecond',
  async (t) => {
    const at = Date.parse('2026-11-25T20:00:00.000Z');
    const id = newSortableId('prod', 16, at);
    t.match(id, /^prod_[0-9A-Za-z]{16}$/);
    t.equal(id.length, newId('prod').length);
    t.match(newSortableId('evt', 20, at), /^evt_[0-9A-Za-z]{20}$/);

    // Later ids sort after earlier ones (string order, as a B-tree index keeps them).
    const times = [
      0,
      1,
      61,
      62,
      3843,
      at - 1,
      at,
      at + 1,
      at + 86_400_000,
      Date.parse('2080-01-01'),
    ];
    const ids = times.map((ms) => newSortableId('prod', 16, ms));
    t.same([...ids].sort(), ids);

    // Ids of one batch share the time and still differ.
    const batch = new Set(Array.from({ length: 10_000 }, () => newSortableId('prod', 16, at)));
    t.equal(batch.size, 10_000);
    t.equal(new Set([...batch].map((i) => i.slice(0, 12))).size, 1, 'one time prefix');
  },
);
