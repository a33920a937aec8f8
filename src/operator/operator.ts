/**
 * The operator layer as one object: what an operator reads (queries.ts) and does (actions.ts), and which
 * build answers. The control API, the chat commands, the page (through the API) and the metrics take this
 * and nothing else of the daemon.
 */
import type { OperatorActions } from './actions.js';
import type { OperatorQueries } from './queries.js';

export interface BuildInfo {
  version: string;
  /** The git commit, when known. */
  revision: string | undefined;
}

export interface Operator {
  read: OperatorQueries;
  act: OperatorActions;
  build: BuildInfo;
}
