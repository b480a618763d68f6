/**
 * The catalogue behind a local platform server: ids kept sorted, items generated from their
 * id on demand (so 100,000 synthetic products cost an array of numbers, not 100,000 objects)
 * unless a test put its own. Tests change it between syncs: put (a price change, a variant
 * added, a bad product), remove.
 */
export class Catalogue<T extends { id: number }> {
  private ids: number[] = [];
  private readonly explicit = new Map<number, T>();
  /** Bumped by every change: a server caches what it derives from the catalogue by it. */
  version = 0;

  constructor(private readonly generate: (id: number) => T) {}

  /** Adds `count` generated items with ids from `firstId` on (above every id so far). */
  fill(count: number, firstId = (this.ids.at(-1) ?? 0) + 1): this {
    for (let i = 0; i < count; i++) this.ids.push(firstId + i);
    this.version++;
    return this;
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: number): boolean {
    const i = this.lowerBound(id);
    return this.ids[i] === id;
  }

  get(id: number): T | undefined {
    if (!this.has(id)) return undefined;
    return this.explicit.get(id) ?? this.generate(id);
  }

  /** Adds or replaces an item (by its id). */
  put(item: T): T {
    const i = this.lowerBound(item.id);
    if (this.ids[i] !== item.id) this.ids.splice(i, 0, item.id);
    this.explicit.set(item.id, item);
    this.version++;
    return item;
  }

  /** Changes an item: `change` gets a copy to edit. */
  update(id: number, change: (item: T) => void): T {
    const current = this.get(id);
    if (!current) throw new Error(`no item ${id}`);
    const copy = structuredClone(current);
    change(copy);
    return this.put(copy);
  }

  remove(id: number): void {
    const i = this.lowerBound(id);
    if (this.ids[i] === id) this.ids.splice(i, 1);
    this.explicit.delete(id);
    this.version++;
  }

  /** The item at a position in id order. */
  at(index: number): T | undefined {
    const id = this.ids[index];
    return id === undefined ? undefined : (this.explicit.get(id) ?? this.generate(id));
  }

  /** The position of the first item whose id is above `id`. */
  indexAfter(id: number): number {
    const i = this.lowerBound(id);
    return this.ids[i] === id ? i + 1 : i;
  }

  *all(): Generator<T> {
    for (let i = 0; i < this.ids.length; i++) yield this.at(i)!;
  }

  private lowerBound(id: number): number {
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A GTIN-13 with a valid check digit, from a number (synthetic barcodes). */
export function gtin13(n: number): string {
  const body = String(n).padStart(12, '0').slice(-12);
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}
