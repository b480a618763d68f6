import { ApiKey, ApiKeyCreate } from '../../domain/access/api-keys.js';
import { KeyLimitsView } from '../../domain/access/plans.js';
import { docFields } from './registry.js';

docFields(ApiKeyCreate, {
  rpm: "Overrides the plan's requests per minute",
  burst: "Overrides the plan's burst per minute (floor(burst/6) requests in 10 seconds)",
  monthly: "Overrides the plan's requests per calendar month (UTC)",
});
docFields(
  ApiKey,
  {
    rpm: 'Per-key override; null keeps the plan',
    burst: 'Per-key override; null keeps the plan',
    monthly: 'Per-key override; null keeps the plan',
  },
  { id: 'ApiKey', description: 'An API key; the key itself is shown once, at creation' },
);
docFields(
  KeyLimitsView,
  { monthly: 'null is unlimited' },
  {
    id: 'KeyLimits',
    description: "The limits in force for a key: its plan's, with its overrides",
  },
);
