/** Who made a request: the classifier of analytics/agents.ts (kept for its importers). */
export { classifyAgent } from './agents.js';
