import { type Kysely, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Analytics (issue 13, CONTRACT part 9). `interactions` is append-only: one row per request
 * served (discovery server, feed export), per CDN log line imported, per event posted. The
 * `analytics_daily_*` rollups are kept in the same transaction as the rows they count
 * (domain/analytics/interactions.ts, in code: no triggers, so PostgreSQL runs the same), and
 * every analytics answer reads them. Raw rows are purged after ANALYTICS_RETENTION_DAYS;
 * rollups stay. Text columns of the rollup keys use '' for "none" so they can be primary keys.
 *
 * discovery_requests (the discovery server's request log before this) is folded into
 * interactions and dropped: its rows are copied with the agents it named classified by the
 * table below (the classifier of that day, frozen here), and counted into the rollup.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('interactions')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('method', 'text')
    .addColumn('path', 'text')
    .addColumn('brand', 'text')
    .addColumn('product_id', 'text')
    .addColumn('status', 'integer')
    .addColumn('bytes', 'bigint')
    .addColumn('user_agent', 'text')
    .addColumn('agent', 'text')
    .addColumn('operator', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('event_type', 'text')
    .addColumn('amount_minor', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .execute();
  await db.schema.createIndex('interactions_at').on('interactions').column('at').execute();

  // Per day x source x brand x agent: every interaction (AI or not) but conversions.
  await db.schema
    .createTable('analytics_daily_traffic')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('brand', 'text', (c) => c.notNull())
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('operator', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('interactions', 'bigint', (c) => c.notNull().defaultTo(0))
    /** Answered with a success (2xx or 304): a fetch that carried the page or feed. */
    .addColumn('fetched', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('verified', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_daily_traffic_pk', [
      'day',
      'source',
      'brand',
      'agent',
      'operator',
      'kind',
    ])
    .execute();

  // Per day x product: what events (and requests naming one product) say about it.
  await db.schema
    .createTable('analytics_daily_products')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('interactions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('assistant', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('search', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('training', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('agent', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('views', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('conversions', 'bigint', (c) => c.notNull().defaultTo(0))
    /** Conversions in DEFAULT_CURRENCY at the time of recording, in its minor units. */
    .addColumn('revenue_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_daily_products_pk', ['day', 'product_id'])
    .execute();

  // Per day x currency x product: conversions and their amounts, every currency apart.
  await db.schema
    .createTable('analytics_daily_revenue')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('conversions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('amount_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_daily_revenue_pk', ['day', 'currency', 'product_id'])
    .execute();

  // Fold the old request log in.
  await db.schema
    .createTable('analytics_migrated_agents')
    .addColumn('agent', 'text', (c) => c.primaryKey())
    .addColumn('operator', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into analytics_migrated_agents (agent, operator, kind) values ${sql.join(
    FROZEN_AGENTS.map(([a, o, k]) => sql`(${a}, ${o}, ${k})`),
  )}`.execute(db);
  await sql`insert into interactions
      (at, source, method, path, brand, status, bytes, user_agent, agent, operator, kind, verified)
    select r.at, 'server', r.method, r.path, r.brand, r.status, r.bytes, r.user_agent,
      r.agent, m.operator,
      case
        when m.kind is not null then m.kind
        when lower(coalesce(r.user_agent, '')) like '%bot%'
          or lower(coalesce(r.user_agent, '')) like '%crawl%'
          or lower(coalesce(r.user_agent, '')) like '%spider%' then 'bot'
        else 'human'
      end,
      0
    from discovery_requests r left join analytics_migrated_agents m on m.agent = r.agent
    order by r.id`.execute(db);
  await sql`insert into analytics_daily_traffic
      (day, source, brand, agent, operator, kind, interactions, fetched, verified, bytes)
    select substr(at, 1, 10), source, coalesce(brand, ''), coalesce(agent, ''),
      coalesce(operator, ''), kind, count(*),
      sum(case when status between 200 and 299 or status = 304 then 1 else 0 end), 0,
      sum(bytes)
    from interactions
    group by substr(at, 1, 10), source, coalesce(brand, ''), coalesce(agent, ''),
      coalesce(operator, ''), kind`.execute(db);
  await db.schema.dropTable('analytics_migrated_agents').execute();
  await db.schema.dropTable('discovery_requests').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('discovery_requests')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('brand', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('agent', 'text')
    .addColumn('is_ai_agent', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('discovery_requests_at')
    .on('discovery_requests')
    .column('at')
    .execute();
  await sql`insert into discovery_requests
      (at, method, path, brand, status, bytes, user_agent, agent, is_ai_agent)
    select at, coalesce(method, 'GET'), coalesce(path, ''), brand, coalesce(status, 0),
      coalesce(bytes, 0), user_agent, agent,
      case when kind in ('assistant', 'search', 'training', 'agent') then 1 else 0 end
    from interactions where source = 'server' order by id`.execute(db);
  await db.schema.dropTable('analytics_daily_revenue').execute();
  await db.schema.dropTable('analytics_daily_products').execute();
  await db.schema.dropTable('analytics_daily_traffic').execute();
  await db.schema.dropTable('interactions').execute();
}

/** The agents the request log named before this migration (domain/analytics/ai-agents.ts). */
const FROZEN_AGENTS: [agent: string, operator: string, kind: string][] = [
  ['ChatGPT-User', 'OpenAI', 'assistant'],
  ['OAI-SearchBot', 'OpenAI', 'search'],
  ['GPTBot', 'OpenAI', 'training'],
  ['Claude-User', 'Anthropic', 'assistant'],
  ['Claude-SearchBot', 'Anthropic', 'search'],
  ['ClaudeBot', 'Anthropic', 'training'],
  ['Claude-Web', 'Anthropic', 'assistant'],
  ['anthropic-ai', 'Anthropic', 'training'],
  ['Perplexity-User', 'Perplexity', 'assistant'],
  ['PerplexityBot', 'Perplexity', 'search'],
  ['Google-Extended', 'Google', 'training'],
  ['Google-CloudVertexBot', 'Google', 'assistant'],
  ['Gemini-Deep-Research', 'Google', 'assistant'],
  ['Applebot-Extended', 'Apple', 'training'],
  ['Amazonbot', 'Amazon', 'training'],
  ['meta-externalagent', 'Meta', 'training'],
  ['meta-externalfetcher', 'Meta', 'assistant'],
  ['FacebookBot', 'Meta', 'training'],
  ['CCBot', 'Common Crawl', 'training'],
  ['Bytespider', 'ByteDance', 'training'],
  ['cohere-ai', 'Cohere', 'assistant'],
  ['cohere-training-data-crawler', 'Cohere', 'training'],
  ['MistralAI-User', 'Mistral', 'assistant'],
  ['DuckAssistBot', 'DuckDuckGo', 'search'],
  ['YouBot', 'You.com', 'search'],
  ['PetalBot', 'Huawei', 'search'],
  ['Diffbot', 'Diffbot', 'training'],
  ['AI2Bot', 'Ai2', 'training'],
  ['Timpibot', 'Timpi', 'training'],
];
