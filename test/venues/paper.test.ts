/**
 * The contract's cases against the paper exchange as the daemon runs it: the simulated exchange's HTTP server
 * with its ledger in the bot's SQLite (app/paper-ledger.ts), through the signed client. Its order and trade
 * history are answered from the ledger's tables a page at a time (store/paper-exchange.ts), not from memory,
 * so the filters (a symbol or none, a time, pages) are held here as the in-process and HTTP venues hold them.
 */
import { join } from 'node:path';
import { openPaperExchange } from '../../src/app/paper-ledger.js';
import { ExchangeClient } from '../../src/exchange/client.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { startSimServer } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { CONTRACT_BALANCES, runVenueContract, type VenueHarness } from './venue-contract.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const credentials = { apiKey: 'contract-paper-key', apiSecret: 'contract-paper-secret' };

async function harness(): Promise<VenueHarness> {
  let time = T0;
  const clock = { now: () => time };
  const dbPath = join(tempDir('venue-paper'), 'bot.db');
  const store = openStore({ path: dbPath, clock });
  const engine = new MatchingEngine();
  openPaperExchange(store, engine, {
    data: 'live',
    apiKey: credentials.apiKey,
    funding: { ...CONTRACT_BALANCES },
    clock,
    dbPath,
  });
  const server = await startSimServer({ engine, credentials });
  const client = new ExchangeClient({ baseUrl: server.url, ...credentials, rateLimit: false });
  return {
    venue: client,
    setPrice: (symbol, price) => {
      time += 1000;
      engine.onPrice(symbol, Number(price), time);
      return Promise.resolve();
    },
    close: async () => {
      await client.close();
      await server.close();
      store.close();
    },
  };
}

runVenueContract('HTTP client against the paper exchange (its ledger in SQLite)', harness);
