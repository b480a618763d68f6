import type { SourceRegistry } from './runtime.js';

/** The platform sources this build knows. */
export const platformSources: SourceRegistry = {};
