/**
 * Just enough GraphQL for the local Shopify: a parser for operations with variables,
 * arguments, aliases and inline fragments (no named fragments, no directives), an executor
 * over a small schema of resolvers, and Shopify's documented query cost: a scalar or enum
 * costs 0, an object 1, a connection 2 + `first` x the cost of one node (requested), or 2 +
 * the nodes returned (actual). A field the schema does not know is an error, as on Shopify,
 * so a typo in the queries the sync sends fails its tests.
 */

export type Value =
  | { kind: 'var'; name: string }
  | { kind: 'literal'; value: unknown }
  | { kind: 'list'; items: Value[] }
  | { kind: 'object'; fields: Record<string, Value> };

export interface Field {
  kind: 'field';
  alias: string;
  name: string;
  args: Record<string, Value>;
  selections: Selection[] | null;
}
export interface InlineFragment {
  kind: 'fragment';
  on: string;
  selections: Selection[];
}
export type Selection = Field | InlineFragment;

export interface Operation {
  type: 'query' | 'mutation';
  name: string | null;
  selections: Selection[];
}

export class GraphqlError extends Error {
  constructor(
    message: string,
    readonly code = 'parseError',
  ) {
    super(message);
  }
}

// ---- parsing -------------------------------------------------------------------------------

type Token = { t: 'punct' | 'name' | 'number' | 'string'; v: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/[\s,\ufeff]/.test(c)) i++;
    else if (c === '#') while (i < source.length && source[i] !== '\n') i++;
    else if (source.startsWith('...', i)) {
      tokens.push({ t: 'punct', v: '...' });
      i += 3;
    } else if ('{}()[]:$!=@'.includes(c)) {
      tokens.push({ t: 'punct', v: c });
      i++;
    } else if (source.startsWith('"""', i)) {
      const end = source.indexOf('"""', i + 3);
      if (end === -1) throw new GraphqlError('unterminated block string');
      tokens.push({ t: 'string', v: source.slice(i + 3, end) });
      i = end + 3;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      while (j < source.length && source[j] !== '"') {
        if (source[j] === '\\') {
          text += JSON.parse(`"${source.slice(j, j + (source[j + 1] === 'u' ? 6 : 2))}"`);
          j += source[j + 1] === 'u' ? 6 : 2;
        } else text += source[j++];
      }
      if (j >= source.length) throw new GraphqlError('unterminated string');
      tokens.push({ t: 'string', v: text });
      i = j + 1;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(source.slice(i))!;
      tokens.push({ t: 'number', v: m[0] });
      i += m[0].length;
    } else if (/[_A-Za-z]/.test(c)) {
      const m = /^[_A-Za-z][_0-9A-Za-z]*/.exec(source.slice(i))!;
      tokens.push({ t: 'name', v: m[0] });
      i += m[0].length;
    } else throw new GraphqlError(`unexpected character "${c}"`);
  }
  return tokens;
}

export function parseOperation(source: string): Operation {
  const tokens = tokenize(source);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => {
    const tok = tokens[pos++];
    if (!tok) throw new GraphqlError('unexpected end of the document');
    return tok;
  };
  const expect = (v: string) => {
    const tok = next();
    if (tok.v !== v) throw new GraphqlError(`expected "${v}", found "${tok.v}"`);
  };
  const name = () => {
    const tok = next();
    if (tok.t !== 'name') throw new GraphqlError(`expected a name, found "${tok.v}"`);
    return tok.v;
  };

  function value(): Value {
    const tok = next();
    if (tok.t === 'punct' && tok.v === '$') return { kind: 'var', name: name() };
    if (tok.t === 'punct' && tok.v === '[') {
      const items: Value[] = [];
      while (peek()?.v !== ']') items.push(value());
      expect(']');
      return { kind: 'list', items };
    }
    if (tok.t === 'punct' && tok.v === '{') {
      const fields: Record<string, Value> = {};
      while (peek()?.v !== '}') {
        const key = name();
        expect(':');
        fields[key] = value();
      }
      expect('}');
      return { kind: 'object', fields };
    }
    if (tok.t === 'number') return { kind: 'literal', value: Number(tok.v) };
    if (tok.t === 'string') return { kind: 'literal', value: tok.v };
    if (tok.t === 'name') {
      if (tok.v === 'true') return { kind: 'literal', value: true };
      if (tok.v === 'false') return { kind: 'literal', value: false };
      if (tok.v === 'null') return { kind: 'literal', value: null };
      return { kind: 'literal', value: tok.v }; // an enum value
    }
    throw new GraphqlError(`unexpected "${tok.v}"`);
  }

  function selectionSet(): Selection[] {
    expect('{');
    const out: Selection[] = [];
    while (peek()?.v !== '}') {
      if (peek()?.v === '...') {
        next();
        const on = name();
        if (on !== 'on') throw new GraphqlError('named fragments are not supported here');
        out.push({ kind: 'fragment', on: name(), selections: selectionSet() });
        continue;
      }
      const alias = name();
      let fieldName = alias;
      if (peek()?.v === ':') {
        next();
        fieldName = name();
      }
      const args: Record<string, Value> = {};
      if (peek()?.v === '(') {
        next();
        while (peek()?.v !== ')') {
          const key = name();
          expect(':');
          args[key] = value();
        }
        expect(')');
      }
      if (peek()?.v === '@') throw new GraphqlError('directives are not supported here');
      const selections = peek()?.v === '{' ? selectionSet() : null;
      out.push({ kind: 'field', alias, name: fieldName, args, selections });
    }
    expect('}');
    return out;
  }

  let type: Operation['type'] = 'query';
  let opName: string | null = null;
  if (peek()?.t === 'name') {
    const word = name();
    if (word !== 'query' && word !== 'mutation')
      throw new GraphqlError(`"${word}" operations are not supported here`);
    type = word;
    if (peek()?.t === 'name') opName = name();
    if (peek()?.v === '(') {
      // Variable definitions: ($name: Type! = default, ...); types are not checked.
      next();
      let depth = 1;
      while (depth > 0) {
        const tok = next();
        if (tok.v === '(') depth++;
        else if (tok.v === ')') depth--;
      }
    }
  }
  const selections = selectionSet();
  if (pos !== tokens.length) throw new GraphqlError('one operation per document, please');
  return { type, name: opName, selections };
}

export function argValue(v: Value, vars: Record<string, unknown>): unknown {
  if (v.kind === 'var') return vars[v.name] ?? null;
  if (v.kind === 'literal') return v.value;
  if (v.kind === 'list') return v.items.map((i) => argValue(i, vars));
  return Object.fromEntries(Object.entries(v.fields).map(([k, f]) => [k, argValue(f, vars)]));
}

// ---- schema and execution ------------------------------------------------------------------

/** A page of a connection as a resolver answers it. */
export interface Page {
  nodes: unknown[];
  cursors: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

export type FieldDef =
  | { kind: 'scalar'; resolve: (parent: never, args: Record<string, unknown>) => unknown }
  | {
      kind: 'object' | 'list';
      type: string | ((value: never) => string);
      resolve: (parent: never, args: Record<string, unknown>) => unknown;
    }
  | {
      kind: 'connection';
      type: string;
      resolve: (parent: never, args: Record<string, unknown>) => Page;
    };

export type Schema = Record<string, Record<string, FieldDef>>;

/** The requested cost of a selection on a type, by Shopify's rules. */
export function requestedCost(
  schema: Schema,
  type: string,
  selections: Selection[],
  vars: Record<string, unknown>,
): number {
  let cost = 0;
  for (const sel of selections) {
    if (sel.kind === 'fragment') {
      cost += requestedCost(schema, sel.on, sel.selections, vars);
      continue;
    }
    const def = schema[type]?.[sel.name];
    if (!def || def.kind === 'scalar' || !sel.selections) continue;
    const childType = typeof def.type === 'string' ? def.type : sel.name;
    if (def.kind === 'connection') {
      const first = Number(argValue(sel.args.first ?? { kind: 'literal', value: 0 }, vars)) || 0;
      cost += 2 + first * (1 + connectionNodeCost(schema, childType, sel.selections, vars));
    } else cost += 1 + requestedCost(schema, childType, sel.selections, vars);
  }
  return cost;
}

function connectionNodeCost(
  schema: Schema,
  type: string,
  selections: Selection[],
  vars: Record<string, unknown>,
): number {
  let cost = 0;
  for (const sel of selections) {
    if (sel.kind !== 'field' || !sel.selections) continue;
    if (sel.name === 'nodes')
      cost = Math.max(cost, requestedCost(schema, type, sel.selections, vars));
    if (sel.name === 'edges')
      for (const e of sel.selections)
        if (e.kind === 'field' && e.name === 'node' && e.selections)
          cost = Math.max(cost, requestedCost(schema, type, e.selections, vars));
  }
  return cost;
}

export interface Execution {
  data: Record<string, unknown>;
  actualCost: number;
}

/** Resolves a selection on a value of `type`; throws GraphqlError on an unknown field. */
export function execute(
  schema: Schema,
  type: string,
  root: unknown,
  selections: Selection[],
  vars: Record<string, unknown>,
): Execution {
  const counter = { cost: 0 };
  const data = resolveObject(schema, type, root, selections, vars, counter);
  return { data, actualCost: counter.cost };
}

function resolveObject(
  schema: Schema,
  type: string,
  value: unknown,
  selections: Selection[],
  vars: Record<string, unknown>,
  counter: { cost: number },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = schema[type];
  if (!fields) throw new GraphqlError(`unknown type ${type}`, 'undefinedType');
  for (const sel of selections) {
    if (sel.kind === 'fragment') {
      if (sel.on === type)
        Object.assign(out, resolveObject(schema, type, value, sel.selections, vars, counter));
      continue;
    }
    if (sel.name === '__typename') {
      out[sel.alias] = type;
      continue;
    }
    const def = fields[sel.name];
    if (!def)
      throw new GraphqlError(
        `Field '${sel.name}' doesn't exist on type '${type}'`,
        'undefinedField',
      );
    const args = Object.fromEntries(
      Object.entries(sel.args).map(([k, v]) => [k, argValue(v, vars)]),
    );
    const resolved = def.resolve(value as never, args);
    if (def.kind === 'scalar') {
      if (sel.selections)
        throw new GraphqlError(`Selections can't be made on scalars (field '${sel.name}')`);
      out[sel.alias] = resolved ?? null;
      continue;
    }
    if (!sel.selections)
      throw new GraphqlError(`Field must have selections (field '${sel.name}' on ${type})`);
    if (resolved === null || resolved === undefined) {
      out[sel.alias] = null;
      continue;
    }
    const typeOf = (v: unknown) => (typeof def.type === 'string' ? def.type : def.type(v as never));
    if (def.kind === 'object') {
      counter.cost += 1;
      out[sel.alias] = resolveObject(
        schema,
        typeOf(resolved),
        resolved,
        sel.selections,
        vars,
        counter,
      );
    } else if (def.kind === 'list') {
      counter.cost += 1;
      out[sel.alias] = (resolved as unknown[]).map((item) =>
        resolveObject(schema, typeOf(item), item, sel.selections!, vars, counter),
      );
    } else {
      const page = resolved as Page;
      counter.cost += 2 + page.nodes.length;
      out[sel.alias] = resolveConnection(schema, typeOf, page, sel.selections, vars, counter);
    }
  }
  return out;
}

function resolveConnection(
  schema: Schema,
  typeOf: (v: unknown) => string,
  page: Page,
  selections: Selection[],
  vars: Record<string, unknown>,
  counter: { cost: number },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const node = (v: unknown, sels: Selection[]) =>
    resolveObject(schema, typeOf(v), v, sels, vars, counter);
  for (const sel of selections) {
    if (sel.kind !== 'field' || !sel.selections)
      throw new GraphqlError('a connection takes nodes, edges or pageInfo');
    if (sel.name === 'nodes') out[sel.alias] = page.nodes.map((n) => node(n, sel.selections!));
    else if (sel.name === 'edges')
      out[sel.alias] = page.nodes.map((n, i) => {
        const edge: Record<string, unknown> = {};
        for (const e of sel.selections!) {
          if (e.kind !== 'field') continue;
          if (e.name === 'cursor') edge[e.alias] = page.cursors[i];
          else if (e.name === 'node' && e.selections) edge[e.alias] = node(n, e.selections);
          else
            throw new GraphqlError(`Field '${e.name}' doesn't exist on an edge`, 'undefinedField');
        }
        return edge;
      });
    else if (sel.name === 'pageInfo') {
      const info: Record<string, unknown> = {};
      for (const p of sel.selections) {
        if (p.kind !== 'field') continue;
        if (p.name === 'hasNextPage') info[p.alias] = page.hasNextPage;
        else if (p.name === 'hasPreviousPage') info[p.alias] = page.hasPreviousPage;
        else if (p.name === 'endCursor') info[p.alias] = page.cursors.at(-1) ?? null;
        else if (p.name === 'startCursor') info[p.alias] = page.cursors[0] ?? null;
        else
          throw new GraphqlError(
            `Field '${p.name}' doesn't exist on type 'PageInfo'`,
            'undefinedField',
          );
      }
      out[sel.alias] = info;
    } else
      throw new GraphqlError(`Field '${sel.name}' doesn't exist on a connection`, 'undefinedField');
  }
  return out;
}
