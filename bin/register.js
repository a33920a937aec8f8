// `node --import spot-bot/register …`: runs TypeScript (tsx's loader hooks, from this installation) in a folder
// that has spot-bot as a dependency and nothing else, e.g. a strategy's own tests: `node --import
// spot-bot/register --test my-strategy.test.ts` (what `bot new-strategy` writes as the folder's `npm test`).
import { register } from 'tsx/esm/api';

register();
