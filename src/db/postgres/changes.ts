import pg from 'pg';

/** The channel a trigger on api_keys NOTIFYs (migration 20261126000000_key_change_notify). */
export const KEY_CHANGES_CHANNEL = 'agentshelf_key_changes';

const RECONNECT_MS = 1000;

/**
 * Store.externalChanges for PostgreSQL: one connection of its own LISTENs on
 * KEY_CHANGES_CHANNEL, and each notification moves the number on. While that connection is
 * down (PostgreSQL restarting, say), notifications may be lost, so the number moves on at
 * every call: caches keyed on it hold nothing until the connection is back (and it moves on
 * once more then, for what happened meanwhile).
 */
export class ChangeListener {
  #version = 0;
  #listening = false;
  #closed = false;
  #client: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly config: pg.ClientConfig) {
    this.#connect();
  }

  version(): number {
    if (!this.#listening) this.#version++;
    return this.#version;
  }

  #connect(): void {
    if (this.#closed) return;
    const client = new pg.Client(this.config);
    this.#client = client;
    const retry = () => {
      if (this.#client !== client) return;
      this.#listening = false;
      this.#client = undefined;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (this.#closed) return;
      this.#timer = setTimeout(() => this.#connect(), RECONNECT_MS);
      this.#timer.unref();
    };
    // An 'error' on a connection nobody handles would end the process.
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => {
      this.#version++;
    });
    client
      .connect()
      .then(() => client.query(`listen ${KEY_CHANGES_CHANNEL}`))
      .then(() => {
        if (this.#client !== client) return;
        this.#version++;
        this.#listening = true;
      })
      .catch(retry);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    this.#listening = false;
    if (client) await client.end().catch(() => {});
  }
}
