import { codeOf, statusOf } from '../error-status.js';
import { AppError } from '../errors.js';
import { markup, type Html } from '../markup.js';

/** What the dashboard's error page shows: the API's status and code for the same error. */
export interface DashboardError {
  status: number;
  /** The API's code (shape A): `upstream_error`, `not_found`... */
  code: string;
  title: string;
  message: string;
}

/**
 * An error a page threw, as the dashboard shows it. An AppError gets the status and code the
 * API gives its kind (src/error-status.ts); a body the form parser refused keeps its own 4xx
 * status; anything else is a 500 whose details stay in the server log.
 */
export function dashboardErrorOf(err: unknown): DashboardError {
  if (err instanceof AppError) {
    const status = statusOf(err.kind);
    return {
      status,
      code: codeOf(err.kind),
      title: status === 404 ? 'Not found' : 'Error',
      // As in the API: an internal error's own words are for the log, not the page.
      message: err.kind === 'internal' ? 'Something went wrong; see the server log.' : err.message,
    };
  }
  const given = (err as { status?: unknown } | undefined)?.status;
  if (typeof given === 'number' && given >= 400 && given < 500) {
    return {
      status: given,
      code: given === 404 ? codeOf('not_found') : codeOf('invalid_request'),
      title: given === 404 ? 'Not found' : 'Error',
      message:
        given === 413
          ? 'The form is too large (at most 256 KB).'
          : 'The request could not be read.',
    };
  }
  return {
    status: 500,
    code: codeOf('internal'),
    title: 'Error',
    message: 'Something went wrong; see the server log.',
  };
}

/** The error page's body. */
export function errorPageBody(e: DashboardError): Html {
  return markup`<div class="error" role="alert" data-code="${e.code}">${e.message}</div>
          <p><a href="/dashboard">Back to the dashboard</a></p>`;
}
